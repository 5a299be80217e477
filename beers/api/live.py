"""What every live read shares: rate limit, degraded mode, the answer cache (beers.answers)."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpResponse
from rest_framework.views import APIView

from beers.answers import answer_cached, ensure_live
from beers.clients import address_hash, client_ip
from beers.counters import parse_rate, window_hit
from beers.errors import ApplicationError
from beers.selectors.ranking import Answer


def read_limit() -> tuple[int, int] | None:
    return parse_rate(settings.READ_RATE_LIMIT)


def enforce_rate(request, group: str, rate: tuple[int, int] | None) -> None:
    """Fixed-window limit per client address and endpoint group: 429 with Retry-After.
    With the counters' store down the limit is not enforced (status says so): reads fail
    open, as the answer cache does, while writes close (submissions.limits)."""
    if rate is None:
        return
    limit, period = rate
    try:
        allowed, retry_after = window_hit(group, address_hash(client_ip(request)), limit, period)
    except Exception:  # the counters' store is down: a read is answered, not counted
        return
    if not allowed:
        raise ApplicationError(
            429,
            "rate_limited",
            "Too many requests; slow down.",
            headers={"Retry-After": str(retry_after)},
        )


LOGIN_GROUP = "admin-login"


def login_wait(request) -> int:
    """One sign-in attempt from the request's address, counted against ADMIN_LOGIN_RATE_LIMIT
    (the admin's login form and HTTP Basic on the staff endpoints share the count): 0 when
    allowed, else the seconds to wait. Raises when the counters' store is down: sign-in then
    closes rather than let guesses go uncounted."""
    rate = parse_rate(settings.ADMIN_LOGIN_RATE_LIMIT)
    if rate is None:
        return 0
    allowed, retry_after = window_hit(LOGIN_GROUP, address_hash(client_ip(request)), *rate)
    return 0 if allowed else max(1, retry_after)


def enforce_login_rate(request) -> None:
    """login_wait for an API view: 429 rate_limited with Retry-After over the limit, 503 with
    the counters' store down (as the admin's form, which answers the same in HTML)."""
    try:
        retry_after = login_wait(request)
    except Exception:
        raise ApplicationError(
            503,
            "unavailable",
            "Sign-in is closed for a minute; try again.",
            headers={"Retry-After": "60"},
        ) from None
    if retry_after:
        raise ApplicationError(
            429,
            "rate_limited",
            "Too many sign-in attempts from this address; try again later.",
            headers={"Retry-After": str(retry_after)},
        )


def json_response(body: bytes, *, max_age: int, status: int = 200) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type="application/json")
    response["Cache-Control"] = f"public, max-age={max(0, max_age)}"
    return response


class LiveReadApi(APIView):
    """Base of the live read endpoints: rate limit and degraded mode before the view runs;
    `cached()` answers through the cache the MCP tools share."""

    rate_group = "read"

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method.lower() not in ("get", "head"):
            return  # 405 (or OPTIONS' answer) whatever the mode: no read happens
        enforce_rate(request, self.rate_group, read_limit())
        ensure_live()

    def cached(self, name: str, query, compute: Callable[[], Answer]) -> HttpResponse:
        """Serve from the shared cache, or compute the answer and keep it while it holds.
        Content-Language is the query's `lang` (LocaleMiddleware would name the language
        of Accept-Language, which the answer does not follow)."""
        answer = answer_cached((name, query), compute)
        # interface.md: live answers are cached 10 to 15 minutes. The server's own copy ends
        # sooner at a midnight or schedule edge (answer_cached), so a request is answered
        # right to the minute; what a client's cache keeps is the interface's to say.
        response = json_response(answer.body, max_age=settings.LIVE_CACHE_SECONDS)
        if answer.age:
            response["Age"] = str(answer.age)
        response["Content-Language"] = query.lang
        return response
