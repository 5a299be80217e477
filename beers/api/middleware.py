"""Every error under /api/ is a JSON ErrorResponse in English, whatever DEBUG or the browser's
language says, never a stack trace."""

import logging

from django.core.exceptions import SuspiciousOperation
from django.utils import translation
from django.utils.deprecation import MiddlewareMixin

from beers.degraded import DEFAULT_RETRY_AFTER
from beers.outage import OUTAGE_ERRORS

from .errors import (
    ERRORS_LANGUAGE,
    is_api_path,
    is_staff_path,
    json_error,
    outage_json,
    suspicious_json,
)

logger = logging.getLogger(__name__)


class ApiErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api_path(request.path):
            return self.get_response(request)
        # Django's and DRF's own messages ("This field is required.") are translated when they
        # are raised: English, as every error says (Content-Language: en). The answers choose
        # their language themselves (the query's `lang`, beers.labels).
        # Answers that are not JSON (Django's own pages) are made ErrorResponses once, by
        # ApiOuterErrorMiddleware, which also sees what is refused outside this one.
        with translation.override(ERRORS_LANGUAGE):
            return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_api_path(request.path):
            if isinstance(exception, OUTAGE_ERRORS):
                # The admin (sign-in included) with the database down: a 503 page, not a 500.
                from beers.views import path_lang, unavailable_page

                return unavailable_page(request, path_lang(request.path), DEFAULT_RETRY_AFTER)
            return None
        if isinstance(exception, SuspiciousOperation):
            return suspicious_json(exception)
        if isinstance(exception, OUTAGE_ERRORS):
            return outage_json()
        # the route, not the path: an opt-out path holds its token
        route = getattr(request.resolver_match, "route", None) or "an unknown route"
        logger.exception("Unhandled error on %s", route)
        return json_error(500, "Internal error.")


_MESSAGES = {
    400: "Invalid request.",
    403: "Forbidden.",
    404: "Not found.",
    405: "Method not allowed.",
    413: "Request body too large.",
    500: "Internal error.",
}


def as_error_response(response):
    """An error answer that is not JSON (Django's own pages) as an ErrorResponse, keeping its
    status and its Retry-After or Allow."""
    if response.status_code < 400 or response.get("Content-Type", "").startswith(
        "application/json"
    ):
        return response
    converted = json_error(response.status_code, _MESSAGES.get(response.status_code, ""))
    for header in ("Retry-After", "Allow"):
        if header in response:
            converted[header] = response[header]
    return converted


def without_cookies(response):
    """An answer that sets no cookie and does not vary by them. A client sending a stale
    `sessionid` or a malformed `csrftoken` got Set-Cookie (a deletion, a fresh CSRF token) and
    `Vary: Cookie` on public, cacheable answers; nothing public under /api/ uses a cookie.
    (The staff endpoints, which read the admin's session, keep theirs: Django may cycle a
    session there, after a SECRET_KEY rotation.)"""
    response.cookies.clear()
    if response.has_header("Vary"):
        kept = [v.strip() for v in response["Vary"].split(",") if v.strip().lower() != "cookie"]
        if kept:
            response["Vary"] = ", ".join(kept)
        else:
            del response["Vary"]
    return response


class ApiOuterErrorMiddleware(MiddlewareMixin):
    """Every error answer under /api/ that is not JSON becomes an ErrorResponse here: Django's
    own pages from the views' chain (a 405, a 404), and what is refused before it, in the
    middleware outside ApiErrorMiddleware (a Host not in ALLOWED_HOSTS is answered by
    beers.hosts, inside this one, already as JSON). Sits inside the CORS
    middleware, which then adds its headers to the answer given here, and outside the session
    and CSRF middleware, whose cookies it takes off (without_cookies)."""

    def process_response(self, request, response):
        if not is_api_path(request.path):
            return response
        response = as_error_response(response)
        if is_staff_path(request.path):
            return response
        return without_cookies(response)
