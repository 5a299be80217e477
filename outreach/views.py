"""The opt-out page: GET shows one button, POST (the button or RFC 8058 one-click) opts out.

Every token gets the same bytes, valid or not, used or not: the page carries nothing derived
from the token, and the form posts back to the address it came from (no `action`: HTML allows no empty one).
"""

import logging

from django.http import Http404, HttpResponse
from django.template.loader import render_to_string
from django.utils import translation
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods
from drf_spectacular.utils import extend_schema
from rest_framework.authentication import BasicAuthentication, SessionAuthentication
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from beers import outage
from beers.api.errors import json_error
from beers.api.live import enforce_login_rate, enforce_rate, read_limit
from beers.degraded import DEFAULT_RETRY_AFTER
from beers.errors import ApplicationError
from beers.models import Venue
from beers.views import site_context

from . import services
from .links import menu_link_ref
from .tokens import check_token

RATE_GROUP = "optout"
RATE_GROUP_STAFF = "staff"
MAX_BIGINT = 2**63 - 1
logger = logging.getLogger(__name__)


def _page(template: str) -> HttpResponse:
    with translation.override("pt-br"):
        html = render_to_string(template, site_context("pt-BR"))
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    # The token is in the address: keep it out of caches, referrers and search engines.
    response["Content-Language"] = "pt-BR"  # whatever the browser asked for
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex"
    return response


def _json_error(exc: ApplicationError) -> HttpResponse:
    response = json_error(exc.status, exc.message)
    for name, value in exc.headers.items():
        response[name] = value
    return response


def _unavailable() -> HttpResponse:
    """An outage: 503, try again later. Logged without the path, which holds the token."""
    logger.warning("opt-out: unavailable", exc_info=True)
    return _json_error(
        ApplicationError(
            503,
            "unavailable",
            "Opting out is unavailable for now; try again later.",
            headers={"Retry-After": str(DEFAULT_RETRY_AFTER)},
        )
    )


# Mail clients POST without a CSRF token (RFC 8058); the token in the path is the authority.
@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def optout(request, token: str) -> HttpResponse:
    """GET: the page with the button, changes nothing. POST: opt out when the token is valid;
    the same confirmation page for every token. The body (form or `List-Unsubscribe=One-Click`)
    is not needed: the token alone says who."""
    try:
        enforce_rate(request, RATE_GROUP, read_limit())
    except ApplicationError as exc:
        return _json_error(exc)
    except Exception:  # the counters' store is down (a cache backend's own errors)
        return _unavailable()
    if request.method == "POST":
        # An invalid token runs the same UPDATE on no row (ids start at 1): in an outage every
        # token gets the same 503, and none answers sooner than a valid one would.
        try:  # (known down a moment ago: every token at once)
            with outage.database_call():
                services.lead_opt_out(lead_id=check_token(token) or 0)
        except outage.DATABASE_ERRORS:
            return _unavailable()
        return _page("outreach/optout_done.html")
    return _page("outreach/optout.html")


class MenuLinkApi(APIView):
    """Staff only: a bar's menu-link token, to hand to its owner or manager. HTTP Basic (for
    scripts) or the admin's session; 401 without credentials, 403 for non-staff users. Not
    cached anywhere: the token is a credential."""

    authentication_classes = [BasicAuthentication, SessionAuthentication]
    permission_classes = [IsAdminUser]

    def initial(self, request, *args, **kwargs):
        # before authentication: password guesses count against the limit too
        enforce_rate(request, RATE_GROUP_STAFF, read_limit())
        if request.META.get("HTTP_AUTHORIZATION", "")[:6].lower() == "basic ":
            # a password guess as much as one at /admin/login/, and counted with those (it was
            # held to the read limit only: 120 a minute against 20 an hour)
            enforce_login_rate(request)
        super().initial(request, *args, **kwargs)

    @extend_schema(exclude=True)  # a staff endpoint: not part of the public description
    def get(self, request, venue_id: int):
        venue = (
            Venue.objects.select_related("city").filter(pk=venue_id).first()
            if 0 < venue_id <= MAX_BIGINT
            else None
        )
        if venue is None:
            raise Http404
        logger.info("menu link of venue %s shown to user %s", venue.pk, request.user.pk)
        response = Response(
            {
                "venue": {"id": venue.pk, "slug": venue.slug, "city": venue.city.slug},
                "ref": menu_link_ref(venue.pk),
                "upload": "/api/v1/menu-photos",
            }
        )
        response["Cache-Control"] = "no-store"
        return response
