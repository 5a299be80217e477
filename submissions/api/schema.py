"""OpenAPI pieces of the write endpoints (``ErrorResponse`` and ``Received`` are the read API's
components, beers/api/schema.py)."""

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from beers.api.schema import ErrorResponse, Received


class StrictSerializerExtension(OpenApiSerializerExtension):
    """Our request bodies accept no other keys: say so (``additionalProperties: false``)."""

    target_class = "submissions.api.fields.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        schema["additionalProperties"] = False
        # drf-spectacular leaves out the size bounds of a nested serializer list.
        for name, field in self.target.fields.items():
            prop = schema.get("properties", {}).get(name)
            if isinstance(field, serializers.ListSerializer) and prop is not None:
                if field.max_length is not None:
                    prop["maxItems"] = field.max_length
                if field.min_length is not None:
                    prop["minItems"] = field.min_length
        # Consent must be true whenever an e-mail or contact is given (JSON Schema 2020-12).
        private = getattr(self.target, "consent_with", None)
        if private:
            schema["dependentSchemas"] = {
                private: {"required": ["consent"], "properties": {"consent": {"const": True}}}
            }
        return schema


DEAL_ID = OpenApiParameter(
    "id",
    type={"type": "integer", "minimum": 1},
    location=OpenApiParameter.PATH,
    description="the price's id",
)


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorResponse, description=description)


def write_responses(
    *extra: int,
    too_large: str = "body over 64 KiB (payload_too_large)",
    unprocessable: str = "unknown city, bar, format or price",
) -> dict:
    """202 Received plus the error answers every write has, and the extra ones given (422:
    `unprocessable` says what the endpoint's may name, as interface.md's table does)."""
    responses = {
        202: OpenApiResponse(Received, description="received, or duplicate of one waiting"),
        400: _error("invalid body (invalid_request, with issues)"),
        403: _error("human verification failed (forbidden)"),
        413: _error(too_large),
        429: _error("too many writes from this address today (rate_limited)"),
        503: _error("writes closed: not configured yet, or degraded mode (unavailable)"),
    }
    descriptions = {
        404: "price not found, or not public: retired, suspended, at a closed bar or in an inactive city (not_found)",
        422: f"{unprocessable} (unprocessable)",
    }
    for status in extra:
        responses[status] = _error(descriptions[status])
    return dict(sorted(responses.items()))
