"""The live answers' shared cache and degraded-mode gate, used by the REST API and MCP alike.

Both doors ask the same question (a parsed query dataclass) and get the same bytes back: the
cache key is the query itself, so a search asked over REST is a hit for the same search over
MCP and the other way round.
"""

import datetime as dt
import hashlib
import logging
import time
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from beers import data_version, degraded
from beers.errors import ApplicationError
from beers.outage import DATABASE, DATABASE_ERRORS, STORE, database_call
from beers.selectors import names
from beers.selectors.ranking import Answer

logger = logging.getLogger(__name__)

DATASETS_INDEX = "/api/v1/index.json"
DATASETS_LICENSE = "ODbL-1.0"  # the open data's (datasets.md envelope)


@dataclass(frozen=True)
class CachedAnswer:
    """An answer's JSON bytes and how old it is (`age`, HTTP's `Age`: seconds since it was
    computed, 0 when it was just computed)."""

    body: bytes
    age: int = 0


def degraded_error(retry_after: int, message: str) -> ApplicationError:
    return ApplicationError(503, "degraded", message, headers={"Retry-After": str(retry_after)})


def ensure_live() -> None:
    """Raise the degraded 503 while the operator's switch is on."""
    state = degraded.switch_state()
    if state is not None:
        raise degraded_error(
            state["retry_after"], "Live answers are paused; use the static datasets."
        )


def answers_changed(*, city: str | None = None, venue_id: int | None = None) -> None:
    """The data the live answers rest on changed: once the transaction commits, the cached
    answers that rest on it are stale, so the next request of each is computed again (as the
    site pages are). With no city and bar: every answer (a moderation decision, an admin
    edit); with them: the answers of that city and of that bar (a confirmation, a dispute)."""
    keys = data_version.changed_keys(city=city, venue_id=venue_id)
    transaction.on_commit(lambda: data_version.bump(keys), robust=True)


DATABASE_DOWN = "The database is not answering; use the static datasets."


def answer_cached(key_parts: tuple, compute: Callable[[], Answer]) -> CachedAnswer:
    """Serve from the shared cache, or compute the answer and keep it while it holds: until
    its horizon and while the data version it was computed at is current (with Redis one
    round trip reads both).

    A database that does not answer becomes the degraded 503 (the static datasets still work),
    at once for a few seconds after (beers.outage), for an answer still in the cache too
    (ensure_database).
    """
    key = "live:v4:" + hashlib.sha256(repr(key_parts).encode()).hexdigest()
    now = time.time()
    query = key_parts[-1]
    version_keys = data_version.keys_for(
        city=getattr(query, "city", None), venue_id=getattr(query, "venue_id", None)
    )
    hit, version = _cached_and_version(key, version_keys)
    if hit is not None and version is not None:
        body, computed_at, ttl, computed_version, zone = hit
        # an answer computed at a later time than now (the clock was set back) is not reused
        if computed_at <= now < computed_at + ttl and computed_version == version:
            ensure_database()
            if zone is not None:
                body = _local_time_now(body, zone, now)
            return CachedAnswer(body, max(0, int(now - computed_at)))
    try:
        # the catalogue's names too must be those of this version (names.snapshot)
        with database_call(), names.expected_version(None if version is None else version[0]):
            answer = compute()
    except DATABASE_ERRORS as exc:
        raise degraded_error(degraded.DEFAULT_RETRY_AFTER, DATABASE_DOWN) from exc
    body = orjson.dumps(answer.data)
    ttl = int(min(settings.LIVE_CACHE_SECONDS, answer.fresh_until.timestamp() - now))
    if ttl >= 1 and version is not None:
        # the version read before computing: a change meanwhile makes this entry stale at once
        _cache_set(key, (body, now, ttl, version, answer.clock_zone), ttl)
    return CachedAnswer(body)


# How long a database that answered a call is taken to answer still, for a cached answer.
REACHED_SECONDS = 1.0


def ensure_database() -> None:
    """decisions.md: the live reads answer the degraded 503 when the database cannot be
    reached, an answer the cache holds too (the client is sent to the static datasets, as
    for any other read then). Unless the database answered this process within the last
    REACHED_SECONDS, a trivial query asks it: at most one a second on a busy process, whose
    computed answers keep it known to answer."""
    if DATABASE.answered_within(REACHED_SECONDS):
        return
    if not degraded.database_ok():
        raise degraded_error(degraded.DEFAULT_RETRY_AFTER, DATABASE_DOWN)


_LOCAL_TIME = b',"local_time":"'


def _local_time_now(body: bytes, zone: str, now: float) -> bytes:
    """The cached answer with its closing `local_time` set to the city's time now. The copy
    holds only until the next schedule edge or midnight of its city (ranking.next_change), so
    the prices it lists are exactly those on now: its `local_time` says the minute it answers
    for, not the one it was computed at (`as_of` keeps that)."""
    cut = body.rfind(_LOCAL_TIME)
    local = dt.datetime.fromtimestamp(int(now), zoneinfo.ZoneInfo(zone)).isoformat()
    return body[:cut] + _LOCAL_TIME + local.encode() + b'"}'


def _cached_and_version(key: str, version_keys: list[str]) -> tuple:
    """The cached entry of `key` (or None) and the data version now (None: the cache did not
    answer; an outage costs speed, never the answer). One round trip when the versions share
    the answers' cache (Redis)."""
    none = (None, None)
    if STORE.down():
        return none
    try:
        if data_version.store() is cache:
            found = cache.get_many([key, *version_keys])
            return found.get(key), data_version.read(version_keys, found)
        return cache.get(key), data_version.read(version_keys)
    except Exception:
        STORE.failed()
        return none


def _cache_set(key: str, value, ttl: int) -> None:
    if STORE.down():
        return
    try:
        cache.set(key, value, timeout=ttl)
    except Exception:
        STORE.failed()
