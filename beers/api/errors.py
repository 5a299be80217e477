"""One mapping from every error to the ErrorResponse shape (HackSoft's exception handler)."""

import logging

from django.core.exceptions import (
    DisallowedHost,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response

from beers.degraded import DEFAULT_RETRY_AFTER
from beers.errors import ApplicationError, Issue
from beers.outage import OUTAGE_ERRORS

logger = logging.getLogger(__name__)

STATUS_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "invalid_request",
    413: "payload_too_large",
    415: "invalid_request",
    422: "unprocessable",
    429: "rate_limited",
    500: "internal_error",
    503: "unavailable",
}


class BodyKey(str):
    """A key as the client wrote it, for errors about the key itself (an unknown field): never
    read as DRF's `non_field_errors`, even when a client sends a key of that name."""


def flatten_issues(detail, prefix: str = "") -> list[Issue]:
    """DRF's nested error detail as a flat list of dotted paths (`schedules.0.days.2`)."""
    issues: list[Issue] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key == "non_field_errors" and not isinstance(key, BodyKey):
                path = prefix
            issues.extend(flatten_issues(value, path))
    elif isinstance(detail, list):
        if all(not isinstance(v, dict | list) for v in detail):
            for v in detail:
                issues.append(Issue(prefix or "body", str(v)))
        else:
            for i, value in enumerate(detail):
                if value in ({}, [], None):
                    continue
                if isinstance(value, dict | list):
                    issues.extend(flatten_issues(value, f"{prefix}.{i}" if prefix else str(i)))
                else:
                    issues.append(Issue(prefix or "body", str(value)))
    else:
        issues.append(Issue(prefix or "body", str(detail)))
    return issues


def error_body(code: str, message: str = "", issues: list[Issue] | None = None) -> dict:
    body: dict = {"error": code}
    if message:
        body["message"] = message
    if issues:
        # one item per bad parameter (decisions.md): a field that breaks two rules (a length
        # and a pattern, say) gets its messages together
        merged: dict[str, list[str]] = {}
        for issue in issues:
            messages = merged.setdefault(issue.path, [])
            if issue.message not in messages:
                messages.append(issue.message)
        body["issues"] = [{"path": p, "message": " ".join(m)} for p, m in merged.items()]
    return body


def application_error_response(exc: ApplicationError) -> Response:
    body = error_body(exc.code, exc.message, exc.issues)
    if exc.code == "degraded":
        body.setdefault("datasets", "/api/v1/index.json")
    return Response(body, status=exc.status, headers=exc.headers or None)


def is_api_path(path: str) -> bool:
    """Under /api/ (and /api itself), however many slashes lead (`//api/v1/…` is an unknown
    path under /api/ too): errors there are JSON ErrorResponses."""
    path = _one_slash(path)
    return path == "/api" or path.startswith("/api/")


def is_staff_path(path: str) -> bool:
    """Under /api/admin/, the staff endpoints (the admin's session), however many slashes
    lead."""
    return _one_slash(path).startswith("/api/admin/")


def _one_slash(path: str) -> str:
    return "/" + path.lstrip("/")


ERRORS_LANGUAGE = "en"  # every error message is in English, whatever the query's `lang`


def exception_handler(exc, context):
    """DRF's exception handler: every error an ErrorResponse, in English."""
    response = _error_response(exc, context)
    response["Content-Language"] = ERRORS_LANGUAGE
    return response


def _error_response(exc, context):
    if isinstance(exc, ApplicationError):
        return application_error_response(exc)
    if isinstance(exc, Http404):
        return Response(error_body("not_found", "Not found."), status=404)
    if isinstance(exc, PermissionDenied):
        return Response(error_body("forbidden", "Forbidden."), status=403)
    if isinstance(exc, drf.ValidationError):
        return Response(
            error_body("invalid_request", "Invalid request.", flatten_issues(exc.detail)),
            status=400,
        )
    if isinstance(exc, drf.ParseError):
        return Response(
            error_body(
                "invalid_request",
                "The body is not valid JSON.",
                [Issue("body", "The body is not valid JSON.")],
            ),
            status=400,
        )
    if isinstance(exc, drf.UnsupportedMediaType):
        return Response(
            error_body(
                "invalid_request",
                "The body must be application/json.",
                [Issue("body", "Send Content-Type: application/json.")],
            ),
            status=400,
        )
    if isinstance(exc, SuspiciousOperation):
        status, body = suspicious_error(exc)
        return Response(body, status=status)
    if isinstance(exc, drf.Throttled):
        headers = {"Retry-After": str(int(exc.wait or 60))}
        return Response(
            error_body("rate_limited", "Too many requests."), status=429, headers=headers
        )
    if isinstance(exc, drf.APIException):
        status = exc.status_code
        code = STATUS_CODES.get(status, "internal_error" if status >= 500 else "invalid_request")
        headers = {}
        if auth_header := getattr(exc, "auth_header", None):  # a 401's challenge
            headers["WWW-Authenticate"] = auth_header
        return Response(error_body(code, str(exc.detail)), status=status, headers=headers)
    if isinstance(exc, OUTAGE_ERRORS):
        status, body, headers = outage_error()
        return Response(body, status=status, headers=headers)
    logger.exception("Unhandled error in %s", context.get("view").__class__.__name__)
    return Response(error_body("internal_error", "Internal error."), status=500)


def outage_error() -> tuple[int, dict, dict]:
    """What an endpoint without an outage answer of its own says when the database does not
    answer (the staff endpoint, say): 503 `unavailable`, try again later. Logged with its
    trace (a missing table is an OperationalError too) but not the path, which may hold a
    token."""
    logger.warning("the database did not answer", exc_info=True)
    body = error_body("unavailable", "The service is unavailable for now; try again later.")
    return 503, body, {"Retry-After": str(DEFAULT_RETRY_AFTER)}


def suspicious_error(exc: SuspiciousOperation) -> tuple[int, dict]:
    """Status and body for what Django refuses as suspicious while reading a request: too
    large a body (413), too many query or form fields and the like (400)."""
    if isinstance(exc, RequestDataTooBig):
        return 413, error_body("payload_too_large", "Request body too large.")
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        issue = Issue("query", "Too many parameters.")
    elif isinstance(exc, DisallowedHost):  # the message names no host: it is the sender's
        issue = Issue("Host", "This host is not served here.")
    else:
        issue = REFUSED
    return 400, error_body("invalid_request", "Invalid request.", [issue])


# The issue of a 400 refused without a finer reason (decisions.md: a 400 carries `issues`).
REFUSED = Issue("request", "The request was refused.")


def json_error(status: int, message: str = "", **extra) -> JsonResponse:
    """An ErrorResponse outside DRF (Django's 404/500 handlers, middleware); a 400 carries
    its `issues` (REFUSED when no finer reason is known)."""
    issues = [REFUSED] if status == 400 else None
    body = error_body(STATUS_CODES.get(status, "internal_error"), message, issues)
    body.update(extra)
    return _json(body, status)


def _json(body: dict, status: int) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["Content-Language"] = ERRORS_LANGUAGE
    return response


def outage_json() -> JsonResponse:
    """outage_error's answer outside DRF (middleware)."""
    status, body, headers = outage_error()
    response = _json(body, status)
    for name, value in headers.items():
        response[name] = value
    return response


def suspicious_json(exc: SuspiciousOperation) -> JsonResponse:
    """suspicious_error's answer outside DRF (middleware)."""
    status, body = suspicious_error(exc)
    return _json(body, status)
