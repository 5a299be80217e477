"""The write endpoints: one APIView each, all through the same steps.

1. closed?           503 unavailable (no TURNSTILE_SECRET_KEY, degraded switch, no database)
2. burst limit       429 rate_limited (WRITE_RATE_LIMIT, all writes of an address, counted
                     before the body is read: bad bodies are limited too)
3. body size         413 payload_too_large (Content-Length and the bytes read), before parsing
4. JSON object       400 invalid_request
5. body (and path)   400 invalid_request, one issue per problem; before verification
6. daily cap         a place under WRITE_DAILY_CAP (per endpoint, address, day); only stored
                     writes count (see submissions.limits)
7. verification      403 forbidden / 503 unavailable (submissions.turnstile)
8. the service       404 / 422, then 202 received or duplicate; over the daily cap 429
                     rate_limited, unless the write is a duplicate (it stores nothing)
"""

import json

import psycopg
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, IntegrityError, transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.response import Response
from rest_framework.views import APIView

from beers.api.errors import flatten_issues
from beers.clients import address_hash, client_ip
from beers.degraded import DEFAULT_RETRY_AFTER
from beers.errors import ApplicationError, Issue, invalid
from beers.selectors import queries

from .. import models, services
from ..limits import burst_check, daily_cap, writes_open_or_raise
from ..turnstile import turnstile_verify
from . import schema
from .serializers import (
    BarOwnerRequestSerializer,
    CityRequestSerializer,
    DealConfirmSerializer,
    DealDisputeSerializer,
    MenuPhotoUploadSerializer,
    ReportSerializer,
    SubmissionSerializer,
)

BODY_LIMIT = 64 * 1024
# decisions.md's 2,200,000 bytes, the largest body any endpoint takes: the ASGI router refuses
# larger ones before Django reads them (config/asgi.py), from the same setting.
MENU_PHOTOS_BODY_LIMIT = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
_PAST_BIGINT = 1 << 63  # no row has it: an id of more digits is simply not found


def path_id(value: str) -> int:
    """The path's id (digits) as an int; any id too long for a bigint becomes one no row has
    (Python refuses to parse more than 4300 digits)."""
    digits = value.lstrip("0")
    return int(digits or "0") if len(digits) <= 19 else _PAST_BIGINT


def _too_large(limit: int) -> ApplicationError:
    return ApplicationError(413, "payload_too_large", f"The body is larger than {limit} bytes.")


def _bad_body(message: str) -> ApplicationError:
    return invalid([Issue("body", message)], message)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def read_json_object(request, limit: int) -> dict:
    """The body as a JSON object, refusing anything over ``limit`` bytes before parsing."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise _too_large(limit)
    try:
        raw = request._request.body
    except RequestDataTooBig as exc:
        raise _too_large(limit) from exc
    if len(raw) > limit:
        raise _too_large(limit)
    content_type = (request.content_type or "").split(";")[0].strip().lower()
    if content_type and content_type != "application/json" and not content_type.endswith("+json"):
        raise _bad_body("The body must be JSON (Content-Type: application/json).")
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _bad_body("The body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise _bad_body("The body must be a JSON object.")
    if not _encodable(body):
        # "\ud800" escapes decode to lone surrogates: not text, and not renderable back.
        raise _bad_body("The body is not valid JSON text (lone surrogate escape).")
    return body


def _encodable(value) -> bool:
    """Whether every string (keys included) is valid Unicode text."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


# The common steps; subclasses name the endpoint, the body and the service. (A comment: a
# docstring would become every operation's description.)
class _NotADuplicate(Exception):
    """Undoes a write made over the daily cap only to learn whether it was a duplicate."""


class WriteApi(APIView):
    endpoint: str = ""
    stored: type  # each endpoint's model: a row per write received (limits.daily_cap)
    serializer_class: type = SubmissionSerializer
    body_limit: int = BODY_LIMIT

    def path_issues(self, kwargs) -> list[Issue]:
        return []

    def perform(self, *, address_hash: str, body: dict, data: dict, kwargs) -> str:
        raise NotImplementedError

    def perform_if_duplicate(self, refusal: ApplicationError, **given) -> str:
        """Over the daily cap: `duplicate` when the write repeats one that is waiting (nothing
        is stored), else the cap's 429. The service runs in a transaction rolled back unless
        it found a duplicate, so its own rules decide what a duplicate is."""
        try:
            with transaction.atomic():
                if self.perform(**given) == services.DUPLICATE:
                    return services.DUPLICATE
                raise _NotADuplicate  # rolls back what the service stored
        except (_NotADuplicate, ApplicationError):  # an unknown city or price too: the cap
            pass
        raise refusal

    def post(self, request, **kwargs):
        writes_open_or_raise()
        ip = client_ip(request)
        sender = address_hash(ip)
        burst_check(sender)  # first: a flood of bad bodies costs their checks nothing either
        body = read_json_object(request, self.body_limit)
        issues = self.path_issues(kwargs)
        serializer = self.serializer_class(data=body)
        if not serializer.is_valid():
            issues += flatten_issues(serializer.errors)
        if issues:
            raise invalid(issues)
        data = serializer.validated_data
        with daily_cap(self.endpoint, sender, self.stored) as slot:
            turnstile_verify(token=data["turnstile"], remote_ip=ip)
            try:
                if slot.refusal is None:
                    status = self.perform(address_hash=sender, body=body, data=data, kwargs=kwargs)
                else:
                    status = self.perform_if_duplicate(
                        slot.refusal, address_hash=sender, body=body, data=data, kwargs=kwargs
                    )
            except IntegrityError:
                raise  # a bug, not an outage: let it be the 500 it is
            except (DatabaseError, psycopg.Error) as exc:
                # The database went away after the open check: closed, not broken.
                raise ApplicationError(
                    503,
                    "unavailable",
                    "Writes are closed for now.",
                    headers={"Retry-After": str(DEFAULT_RETRY_AFTER)},
                ) from exc
            if status == services.RECEIVED:
                slot.keep()
        return Response({"status": status}, status=202)


def documented(
    operation_id: str, summary: str, request, *errors: int, parameters=None, **responses_kwargs
):
    """The OpenAPI description of one write operation."""
    return extend_schema_view(
        post=extend_schema(
            operation_id=operation_id,
            summary=summary,
            request=request,
            parameters=parameters,
            responses=schema.write_responses(*errors, **responses_kwargs),
            tags=["writes"],
        )
    )


class DealWriteApi(WriteApi):
    def path_issues(self, kwargs) -> list[Issue]:
        value = kwargs.get("id", "")
        if not queries.PATH_ID_RE.fullmatch(value) or path_id(value) < 1:
            return [Issue("id", "Must be an integer greater than 0.")]
        return []


@documented(
    "submission_create",
    "Send a price you saw",
    SubmissionSerializer,
    422,
    unprocessable="unknown city, bar or format",
)
class SubmissionCreateApi(WriteApi):
    endpoint = "submissions"
    stored = models.PriceSubmission
    serializer_class = SubmissionSerializer

    def perform(self, *, address_hash, body, data, kwargs):
        return services.submission_create(address_hash=address_hash, body=body, data=data)


@documented("city_request_create", "Ask for a new city", CityRequestSerializer)
class CityRequestCreateApi(WriteApi):
    endpoint = "city-requests"
    stored = models.CityRequest
    serializer_class = CityRequestSerializer

    def perform(self, *, address_hash, body, data, kwargs):
        return services.city_request_create(address_hash=address_hash, body=body, data=data)


@documented(
    "bar_owner_message_create",
    "A message from a bar's owner or manager",
    BarOwnerRequestSerializer,
    422,
    unprocessable="unknown city, or unknown bar (venue) in that city",
)
class BarOwnerMessageCreateApi(WriteApi):
    endpoint = "bar-owners"
    stored = models.BarOwnerMessage
    serializer_class = BarOwnerRequestSerializer

    def perform(self, *, address_hash, body, data, kwargs):
        return services.bar_owner_message_create(address_hash=address_hash, body=body, data=data)


@documented(
    "menu_photo_upload_create",
    "Photos of a menu, read in the background",
    MenuPhotoUploadSerializer,
    422,
    too_large="photos too large: body over 2,200,000 bytes",
    unprocessable="unknown city or bar",
)
class MenuPhotoUploadCreateApi(WriteApi):
    endpoint = "menu-photos"
    stored = models.MenuPhotoUpload
    serializer_class = MenuPhotoUploadSerializer
    body_limit = MENU_PHOTOS_BODY_LIMIT

    def perform(self, *, address_hash, body, data, kwargs):
        return services.menu_photo_upload_create(address_hash=address_hash, body=body, data=data)


@documented(
    "deal_confirm",
    "Confirm a price (once a day)",
    DealConfirmSerializer,
    404,
    parameters=[schema.DEAL_ID],
)
class DealConfirmApi(DealWriteApi):
    endpoint = "confirm"
    stored = models.DealConfirmation
    serializer_class = DealConfirmSerializer

    def perform(self, *, address_hash, body, data, kwargs):
        return services.deal_confirm(deal_id=path_id(kwargs["id"]), address_hash=address_hash)


@documented(
    "deal_dispute",
    "Dispute a price (once a day)",
    DealDisputeSerializer,
    404,
    parameters=[schema.DEAL_ID],
)
class DealDisputeApi(DealWriteApi):
    endpoint = "dispute"
    stored = models.DealDispute
    serializer_class = DealDisputeSerializer

    def perform(self, *, address_hash, body, data, kwargs):
        return services.deal_dispute(
            deal_id=path_id(kwargs["id"]), address_hash=address_hash, price=data.get("price")
        )


@documented(
    "report_create", "Report a problem", ReportSerializer, 422, unprocessable="unknown price or bar"
)
class ReportCreateApi(WriteApi):
    endpoint = "reports"
    stored = models.Report
    serializer_class = ReportSerializer

    def perform(self, *, address_hash, body, data, kwargs):
        return services.report_create(address_hash=address_hash, body=body, data=data)
