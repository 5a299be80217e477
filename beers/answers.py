"""The live answers' shared cache and degraded-mode gate, used by the REST API and MCP alike.

Both doors ask the same question (a parsed query dataclass) and get the same bytes back: the
cache key is the query itself, so a search asked over REST is a hit for the same search over
MCP and the other way round.
"""

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError

from beers import degraded
from beers.errors import ApplicationError
from beers.selectors.ranking import Answer

logger = logging.getLogger(__name__)

try:  # the pool raises its own timeout when every connection is busy
    from psycopg_pool import PoolTimeout
except ImportError:  # pragma: no cover
    PoolTimeout = DatabaseError

DATASETS_INDEX = "/api/v1/index.json"


@dataclass(frozen=True)
class CachedAnswer:
    """An answer's JSON bytes, how long it stays true from when it was computed (`max_age`)
    and how old it is (`age`): HTTP's `max-age` and `Age`, so a cache hit states the answer's
    whole lifetime (10 minutes, or less before a date or schedule edge) and its age."""

    body: bytes
    max_age: int
    age: int = 0


def degraded_error(retry_after: int, message: str) -> ApplicationError:
    return ApplicationError(503, "degraded", message, headers={"Retry-After": str(retry_after)})


def ensure_live() -> None:
    """Raise the degraded 503 while the operator's switch is on."""
    state = degraded.switch_state()
    if state is not None:
        raise degraded_error(
            int(state.get("retry_after", degraded.DEFAULT_RETRY_AFTER)),
            "Live answers are paused; use the static datasets.",
        )


def answer_cached(key_parts: tuple, compute: Callable[[], Answer]) -> CachedAnswer:
    """Serve from the shared cache, or compute the answer and keep it while it holds.

    A database that does not answer becomes the degraded 503 (the static datasets still work).
    """
    key = "live:v2:" + hashlib.sha256(repr(key_parts).encode()).hexdigest()
    now = time.time()
    hit = _cache_get(key)
    if hit is not None:
        body, computed_at, ttl = hit
        if computed_at + ttl > now:
            return CachedAnswer(body, ttl, int(now - computed_at))
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
        _cache_set(key, (body, now, ttl), ttl)
    return CachedAnswer(body, max(ttl, 0))


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
