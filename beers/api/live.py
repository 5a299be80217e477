"""What every live read shares: rate limit, degraded mode, the answer cache."""

import hashlib
import logging
import time
from collections.abc import Callable

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError
from django.http import HttpResponse
from rest_framework.views import APIView

from beers import degraded
from beers.clients import client_ip
from beers.counters import parse_rate, window_hit
from beers.errors import ApplicationError
from beers.selectors.ranking import Answer

logger = logging.getLogger(__name__)

try:  # the pool raises its own timeout when every connection is busy
    from psycopg_pool import PoolTimeout
except ImportError:  # pragma: no cover
    PoolTimeout = DatabaseError

DATASETS_INDEX = "/api/v1/index.json"


def degraded_error(retry_after: int, message: str) -> ApplicationError:
    return ApplicationError(
        503, "degraded", message, headers={"Retry-After": str(retry_after)}
    )


def read_limit() -> tuple[int, int] | None:
    return parse_rate(settings.READ_RATE_LIMIT)


def enforce_rate(request, group: str, rate: tuple[int, int] | None) -> None:
    """Fixed-window limit per client address and endpoint group: 429 with Retry-After."""
    if rate is None:
        return
    limit, period = rate
    allowed, retry_after = window_hit(group, client_ip(request), limit, period)
    if not allowed:
        raise ApplicationError(
            429, "rate_limited", "Too many requests; slow down.",
            headers={"Retry-After": str(retry_after)},
        )


def json_response(body: bytes, *, max_age: int, status: int = 200) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type="application/json")
    response["Cache-Control"] = f"public, max-age={max(0, max_age)}"
    return response


class LiveReadApi(APIView):
    """Base of the live read endpoints. Subclasses implement `answer(request, **kwargs)`
    returning (cache key parts, compute callable, ttl callable)."""

    rate_group = "read"

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        enforce_rate(request, self.rate_group, read_limit())
        state = degraded.switch_state()
        if state is not None:
            raise degraded_error(
                int(state.get("retry_after", degraded.DEFAULT_RETRY_AFTER)),
                "Live answers are paused; use the static datasets.",
            )

    def cached(self, key_parts: tuple, compute: Callable[[], Answer]) -> HttpResponse:
        """Serve from the shared cache, or compute the answer and keep it while it holds."""
        key = "live:" + hashlib.sha256(repr(key_parts).encode()).hexdigest()
        now = time.time()
        hit = _cache_get(key)
        if hit is not None and hit[1] > now:
            return json_response(hit[0], max_age=int(hit[1] - now))
        try:
            answer = compute()
        except (DatabaseError, PoolTimeout) as exc:
            raise degraded_error(
                degraded.DEFAULT_RETRY_AFTER,
                "The database is not answering; use the static datasets.",
            ) from exc
        body = orjson.dumps(answer.data)
        ttl = int(min(settings.LIVE_CACHE_SECONDS, answer.fresh_until.timestamp() - now))
        if ttl >= 1:
            _cache_set(key, (body, now + ttl), ttl)
        return json_response(body, max_age=max(ttl, 0))


def _cache_get(key: str):
    try:
        return cache.get(key)
    except Exception:  # a cache outage costs speed, never the answer
        logger.warning("answer cache unavailable", exc_info=True)
        return None


def _cache_set(key: str, value, ttl: int) -> None:
    try:
        cache.set(key, value, timeout=ttl)
    except Exception:
        logger.warning("answer cache unavailable", exc_info=True)
