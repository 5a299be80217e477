"""OpenAPI components of the public answers (documentation only; selectors build the JSON)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from beers.models import DealKind, VenueKind
from beers.selectors.queries import CITY_SLUG_RE, LOOSE_SLUG_RE, MAX_DEALS

KINDS = DealKind.values
CITY_PATTERN = CITY_SLUG_RE.pattern


class IssueSerializer(serializers.Serializer):
    path = serializers.CharField()
    message = serializers.CharField()


class ErrorResponse(serializers.Serializer):
    error = serializers.CharField(help_text="machine-readable code")
    message = serializers.CharField(required=False)
    issues = IssueSerializer(many=True, required=False)


class DegradedResponse(serializers.Serializer):
    error = serializers.ChoiceField(choices=["degraded"])
    message = serializers.CharField()
    datasets = serializers.CharField(help_text="address of the static datasets")


class Received(serializers.Serializer):
    status = serializers.ChoiceField(choices=["received", "duplicate"])


class RateLimits(serializers.Serializer):
    read = serializers.BooleanField()
    write = serializers.BooleanField()


class StatusResponse(serializers.Serializer):
    ok = serializers.BooleanField()
    time = serializers.DateTimeField()
    environment = serializers.ChoiceField(choices=["production", "staging", "development"])
    db = serializers.BooleanField()
    rateLimits = RateLimits()  # noqa: N815 - the interface's name


class PublicDeal(serializers.Serializer):
    id = serializers.IntegerField(help_text="price id (for confirm, dispute and reports)")
    venue = serializers.CharField()
    neighbourhood = serializers.CharField(allow_null=True)
    url = serializers.CharField()
    beer = serializers.CharField()
    brand = serializers.CharField(allow_null=True)
    serving = serializers.CharField()
    format = serializers.CharField()
    price_brl = serializers.FloatField()
    price_per_litre_brl = serializers.FloatField(required=False)
    open_bar_minutes = serializers.IntegerField(required=False, allow_null=True)
    price_label = serializers.CharField()
    kind = serializers.ChoiceField(choices=KINDS)
    when = serializers.CharField(allow_null=True)
    service_charge_pct = serializers.IntegerField(allow_null=True)
    couvert_brl = serializers.FloatField(allow_null=True)
    conditions = serializers.CharField(allow_null=True)
    verified_on = serializers.DateField()
    possibly_out_of_date = serializers.BooleanField()
    confirmations = serializers.IntegerField()
    distance_m = serializers.IntegerField(required=False)


class _Answer(serializers.Serializer):
    city = serializers.CharField()
    city_url = serializers.CharField()
    as_of = serializers.DateTimeField()
    count = serializers.IntegerField()
    deals = PublicDeal(many=True)
    source = serializers.CharField()


class DealsResponse(_Answer):
    """The answer of search and of cheapest: `local_time` only on cheapest, which always
    gives it."""

    local_time = serializers.DateTimeField(
        required=False, help_text="the city's time; only on cheapest"
    )


class PublicVenue(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    url = serializers.CharField(allow_null=True)
    kind = serializers.ChoiceField(choices=VenueKind.values)
    drink_on_site = serializers.BooleanField()
    neighbourhood = serializers.CharField(allow_null=True)
    address = serializers.CharField(allow_null=True)
    lat = serializers.FloatField()
    lng = serializers.FloatField()
    instagram = serializers.CharField(allow_null=True)
    opening_hours = serializers.CharField(allow_null=True)
    attributes = serializers.ListField(child=serializers.CharField())
    status = serializers.ChoiceField(choices=["open", "closed"])


class VenueResponse(_Answer):
    """DealsResponse's fields but `local_time`, plus the bar."""

    venue = PublicVenue()


def _q(
    name,
    type_,
    description,
    *,
    required=False,
    enum=None,
    pattern=None,
    minimum=None,
    maximum=None,
    exclusive_minimum=False,
    default=None,
    min_length=None,
    max_length=None,
    nullable=False,
    examples=None,
):
    schema: dict = {}
    if examples:
        schema["examples"] = examples
    if pattern:
        schema["pattern"] = pattern
    if min_length is not None:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    if minimum is not None:
        schema["exclusiveMinimum" if exclusive_minimum else "minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    if enum:
        schema["enum"] = enum
    if default is not None:
        schema["default"] = default
    base = {OpenApiTypes.STR: "string", OpenApiTypes.INT: "integer", OpenApiTypes.NUMBER: "number"}[
        type_
    ]
    schema["type"] = [base, "null"] if nullable else base
    return OpenApiParameter(
        name,
        type=schema,
        location=OpenApiParameter.QUERY,
        required=required,
        description=description,
    )


LANG = _q(
    "lang",
    OpenApiTypes.STR,
    "language of labels, schedules and page links",
    enum=["pt-BR", "en"],
    default="pt-BR",
)
CITY = _q(
    "city",
    OpenApiTypes.STR,
    "city slug",
    required=True,
    pattern=CITY_PATTERN,
    examples=["sao-paulo"],
)
FORMAT = _q(
    "format",
    OpenApiTypes.STR,
    "format type (e.g. lata) or code (e.g. garrafa_600)",
    pattern=r"^[a-z0-9_-]{2,40}$",
    min_length=2,
    max_length=40,
)

SEARCH_PARAMETERS = [
    CITY,
    _q("neighbourhood", OpenApiTypes.STR, "bairro slug", pattern=LOOSE_SLUG_RE.pattern),
    _q("brand", OpenApiTypes.STR, "brand slug", pattern=LOOSE_SLUG_RE.pattern),
    FORMAT,
    _q("kind", OpenApiTypes.STR, "kind of price; open bars only with open_bar", enum=KINDS),
    _q(
        "max_price_per_litre",
        OpenApiTypes.NUMBER,
        "BRL per litre",
        minimum=0,
        exclusive_minimum=True,
        maximum=1000,
    ),
    _q("limit", OpenApiTypes.INT, "how many prices", minimum=1, maximum=MAX_DEALS, default=20),
    LANG,
]
CHEAPEST_PARAMETERS = [
    CITY,
    _q("lat", OpenApiTypes.NUMBER, "latitude of the point", minimum=-90, maximum=90, nullable=True),
    _q(
        "lng",
        OpenApiTypes.NUMBER,
        "longitude of the point",
        minimum=-180,
        maximum=180,
        nullable=True,
    ),
    _q(
        "radius_m",
        OpenApiTypes.INT,
        "metres around lat/lng",
        minimum=100,
        maximum=10000,
        default=2000,
    ),
    FORMAT,
    _q("limit", OpenApiTypes.INT, "how many prices", minimum=1, maximum=MAX_DEALS, default=10),
    LANG,
]
VENUE_PARAMETERS = [
    OpenApiParameter(
        "id",
        type={"type": "integer", "minimum": 1, "examples": [1]},
        location=OpenApiParameter.PATH,
        description="bar id (static venue files)",
    ),
    LANG,
]


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorResponse, description=description)


def read_responses(ok) -> dict:
    return {
        200: ok,
        400: error("invalid query (invalid_request, with issues)"),
        404: error("unknown city or bar"),
        429: error("too many requests (rate_limited)"),
        503: OpenApiResponse(DegradedResponse, description="degraded: use the static datasets"),
    }


BOUNDED_DEAL_LISTS = ("DealsResponse",)  # not VenueResponse: every price


def bound_deal_lists(result, generator, request, public):
    """drf-spectacular hook: search and cheapest answers hold at most MAX_DEALS prices
    (spectacular leaves a list serializer's max_length out of the schema). A bar's answer
    holds every price it has in the rankings, so its list has no bound."""
    schemas = result.get("components", {}).get("schemas", {})
    for name in BOUNDED_DEAL_LISTS:
        schemas[name]["properties"]["deals"]["maxItems"] = MAX_DEALS
    return result


RETRY_AFTER = {
    "description": "seconds to wait before asking again",
    "schema": {"type": "integer", "minimum": 0},
}


def retry_after_headers(result, generator, request, public):
    """drf-spectacular hook: every 429 says when to come back, and so does a 503 (a live
    read's degraded answer, a closed write): the `Retry-After` header, on every operation."""
    for path in result.get("paths", {}).values():
        for operation in path.values():
            if not isinstance(operation, dict):
                continue
            for status in ("429", "503"):
                response = operation.get("responses", {}).get(status)
                if response is not None:
                    response.setdefault("headers", {}).setdefault("Retry-After", RETRY_AFTER)
    return result


def describe_itself(result, generator, request, public):
    """drf-spectacular hook: interface.md names the description's own address among the
    endpoints (`/api/v1/openapi.json`), so it is one of its paths."""
    result.setdefault("paths", {})["/api/v1/openapi.json"] = {
        "get": {
            "operationId": "getOpenApi",
            "summary": "This OpenAPI 3.1 description of the interface",
            "tags": ["v1"],
            "responses": {
                "200": {
                    "description": "the OpenAPI 3.1.0 document",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
    }
    return result


REF = "#/components/schemas/"


def _refs(node) -> set[str]:
    """Names of the components a part of the description refers to."""
    if isinstance(node, dict):
        found = set()
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(REF):
                found.add(value[len(REF) :])
            else:
                found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*map(_refs, node)) if node else set()
    return set()


def _renamed(node, names: dict[str, str]):
    if isinstance(node, dict):
        return {
            key: (
                REF + names.get(value[len(REF) :], value[len(REF) :])
                if key == "$ref" and isinstance(value, str) and value.startswith(REF)
                else _renamed(value, names)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    return node


def _body_components(result) -> set[str]:
    """Names of the components the request bodies use, and those they hold in turn."""
    schemas = result.get("components", {}).get("schemas", {})
    bodies = set()
    for path in result.get("paths", {}).values():
        for operation in path.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                bodies |= _refs(operation["requestBody"])
    seen: set[str] = set()
    while bodies - seen:
        name = (bodies - seen).pop()
        seen.add(name)
        bodies |= _refs(schemas.get(name, {}))
    return seen


def request_body_names(result, generator, request, public):
    """drf-spectacular hook: the write bodies keep interface.md's names (`Submission`,
    `CityRequest`, …). COMPONENT_SPLIT_REQUEST, which gives request bodies their own
    components (with `minLength` on required text), names them `SubmissionRequest`,
    `CityRequestRequest`; the suffix goes where the plain name is free."""
    schemas = result.get("components", {}).get("schemas", {})
    seen = _body_components(result)
    names = {
        name: name.removesuffix("Request")
        for name in seen
        if name.endswith("Request") and name.removesuffix("Request") not in schemas
    }
    result = _renamed(result, names)
    result["components"]["schemas"] = {
        names.get(name, name): schema for name, schema in result["components"]["schemas"].items()
    }
    return result


NO_NUL = "^[^\\u0000]*$"


def text_without_nul(result, generator, request, public):
    """drf-spectacular hook: text in a write body may not hold U+0000 (DRF's CharField
    refuses it: PostgreSQL cannot store it), so every free-text string of a request body says
    so with a pattern; those with a pattern, a format or a fixed set of values already
    exclude it."""
    schemas = result.get("components", {}).get("schemas", {})
    for name in _body_components(result):
        for prop in schemas.get(name, {}).get("properties", {}).values():
            types = prop.get("type")
            is_text = types == "string" or (isinstance(types, list) and "string" in types)
            if is_text and not {"pattern", "format", "enum", "const"} & set(prop):
                prop["pattern"] = NO_NUL
    return result
