"""Who may write now: the endpoints' open/closed state, the burst limit and the daily cap.

Counters are atomic (``beers.counters``: Redis INCR in production). The daily cap counts only
writes that were stored. Two counters per endpoint, address and day: `held`, the places taken
by requests still running plus the writes stored, and `kept`, the writes stored. A request
takes a place with INCR before verification and gives it back (DECR) when it ends without
storing anything (failed verification, unknown city, duplicate, error), so concurrent requests
can never pass the cap, and a duplicate, a repeat confirmation or a failed check never uses up
a sender's day. A request that finds every place held while fewer than the cap are kept waits
(up to CAP_WAIT_SECONDS) for the running ones to end: one of them may give its place back, and
refusing at once would answer 429 to a sender under the cap (a double-clicked form beside
other writes). A request over the cap is not refused at once: it stores nothing, and is still
answered `duplicate` when it repeats a write that is waiting (the interface's duplicate move
has no cap condition); see WriteApi.
"""

import datetime as dt
import math
import time
import zoneinfo
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache
from django.db import models
from django.db.models import QuerySet
from django.utils import timezone

from beers import counters
from beers.degraded import DEFAULT_RETRY_AFTER, database_ok, switch_state
from beers.errors import ApplicationError
from beers.outage import DATABASE_ERRORS, STORE, database_call


def _unavailable(message: str, retry: int | None = None) -> ApplicationError:
    headers = {"Retry-After": str(retry)} if retry else {}
    return ApplicationError(503, "unavailable", message, headers=headers)


# Writes not configured (no TURNSTILE_SECRET_KEY) answer their 503 with this Retry-After, as
# every 429 and 503 of the interface does (its OpenAPI description says so): an hour, since
# an operator has to act.
NOT_CONFIGURED_RETRY_AFTER = 3600


def not_configured() -> ApplicationError:
    return _unavailable("Writes are not open yet.", NOT_CONFIGURED_RETRY_AFTER)


def writes_open_or_raise() -> None:
    """503 `unavailable` when writes are not configured, switched to degraded or the database
    is unreachable: a closed endpoint stores nothing."""
    if not settings.TURNSTILE_SECRET_KEY:
        raise not_configured()
    state = switch_state()
    if state is not None:
        raise _unavailable("Writes are closed for now (degraded mode).", state["retry_after"])
    if not database_ok():
        raise _unavailable("Writes are closed for now.", DEFAULT_RETRY_AFTER)


def _counter_store_down() -> ApplicationError:
    return _unavailable("Writes are closed for now.", 60)


def burst_check(address_hash: str) -> None:
    """WRITE_RATE_LIMIT per address over all write endpoints (counts every checked request)."""
    rate = counters.parse_rate(settings.WRITE_RATE_LIMIT)
    if rate is None:
        return
    limit, period = rate
    try:
        allowed, wait = counters.window_hit("write", address_hash, limit, period)
    except Exception as exc:  # the counter store is down: fail closed
        raise _counter_store_down() from exc
    if not allowed:
        raise ApplicationError(
            429,
            "rate_limited",
            "Too many writes; slow down.",
            headers={"Retry-After": str(max(1, wait))},
        )


def _today(now: dt.datetime | None = None) -> dt.date:
    """The calendar day of the caps: settings.TIME_ZONE's."""
    return (now or timezone.now()).astimezone(zoneinfo.ZoneInfo(settings.TIME_ZONE)).date()


def _midnight(day: dt.date) -> dt.datetime:
    """When `day` begins in settings.TIME_ZONE."""
    return dt.datetime.combine(day, dt.time(), tzinfo=zoneinfo.ZoneInfo(settings.TIME_ZONE))


def seconds_to_midnight(now: dt.datetime | None = None) -> int:
    """Seconds until the next midnight in settings.TIME_ZONE."""
    local = now or timezone.now()
    tomorrow = _midnight(_today(local) + dt.timedelta(days=1))
    # In UTC: between two datetimes of the same zone Python subtracts wall-clock times.
    # rounded up: a client that waits as long as it is told is past midnight
    return max(
        1, math.ceil((tomorrow.astimezone(dt.UTC) - local.astimezone(dt.UTC)).total_seconds())
    )


CAP_WAIT_SECONDS = 10.0  # longer than a write takes: two siteverify tries, then the database
CAP_POLL_SECONDS = 0.05


def _cap_keys(endpoint: str, address_hash: str, day: dt.date) -> tuple[str, str]:
    """The `held` and `kept` counters of this endpoint, address and day (one day for both)."""
    prefix = f"cap:{endpoint}:{address_hash}:{day.isoformat()}"
    return f"{prefix}:held", f"{prefix}:kept"


def _seed(stored: QuerySet, day: dt.date, keys: tuple[str, str], ttl: int) -> None:
    """Counters the cache lost (a restart of `make run`'s process, which keeps them in its
    memory; an eviction; Redis restarted) start again from the writes the database holds
    from the address since `day`'s midnight (`stored`: the endpoint's rows of the address;
    rows deleted with their price or bar no longer count), so the cap stays a day's cap: a
    restart gave an address 20 more writes the same day. A cache that fails closes the
    writes; a database that fails is the database's 503, as in the write itself."""
    try:
        if len(cache.get_many(list(keys))) == len(keys):
            return
    except Exception as exc:
        STORE.failed()
        raise _counter_store_down() from exc
    try:
        with database_call():
            count = stored.filter(created_at__gte=_midnight(day)).count()
    except DATABASE_ERRORS as exc:
        raise _unavailable("Writes are closed for now.", DEFAULT_RETRY_AFTER) from exc
    try:
        for key in keys:  # another request's add wins, with the same count
            cache.add(key, count, timeout=ttl)
    except Exception as exc:
        STORE.failed()
        raise _counter_store_down() from exc


class CapSlot:
    """One place under the daily cap; ``keep()`` once the write is stored. Over the cap the
    slot holds no place and ``refusal`` is the 429 to answer unless the request turns out to
    be a duplicate."""

    def __init__(self, refusal: ApplicationError | None = None, kept_key: str = "", ttl: int = 0):
        self.refusal = refusal
        self.kept_key = kept_key
        self.ttl = ttl
        self.kept = False

    def keep(self) -> None:
        if self.kept:
            return
        self.kept = True
        try:
            counters.incr(self.kept_key, ttl=self.ttl)
        except Exception:  # the store went away: its counts went with it
            pass


def _take_place(held_key: str, kept_key: str, ttl: int) -> bool:
    """Take a place under the cap, waiting while the places are held by requests still
    running rather than by stored writes; False when the cap is reached (or the wait ends)."""
    deadline = time.monotonic() + CAP_WAIT_SECONDS
    while True:
        if counters.incr(held_key, ttl=ttl) <= settings.WRITE_DAILY_CAP:
            return True
        _release(held_key)
        if int(cache.get(kept_key) or 0) >= settings.WRITE_DAILY_CAP:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(CAP_POLL_SECONDS)


@contextmanager
def daily_cap(endpoint: str, address_hash: str, model: type[models.Model]):
    """Take a place under WRITE_DAILY_CAP for this endpoint, address and day. Over the cap
    the slot carries the 429 `rate_limited` to answer (and can't be kept). A cap of 0 or less
    is no cap (status then says `rateLimits.write` false, unless the burst limit is on).
    `model`: what the endpoint stores, a row per write (its `address_hash` and `created_at`
    count the day's writes when the counters are lost)."""
    if not counters.daily_cap_enforced():
        slot = CapSlot()
        slot.kept = True  # nothing counted, nothing to give back
        yield slot
        return
    day = _today()
    held_key, kept_key = _cap_keys(endpoint, address_hash, day)
    wait = seconds_to_midnight()
    if STORE.down():  # known not to answer: close at once rather than wait out its timeout
        raise _counter_store_down()
    ttl = wait + 60
    _seed(model.objects.filter(address_hash=address_hash), day, (kept_key, held_key), ttl)
    try:
        placed = _take_place(held_key, kept_key, ttl)
    except Exception as exc:
        STORE.failed()
        raise _counter_store_down() from exc
    if not placed:
        refusal = ApplicationError(
            429,
            "rate_limited",
            "Daily limit of writes from this address reached.",
            headers={"Retry-After": str(wait)},
        )
        yield CapSlot(refusal)  # holds no place: nothing to give back
        return
    slot = CapSlot(kept_key=kept_key, ttl=ttl)
    try:
        yield slot
    finally:
        if not slot.kept:
            _release(held_key)


def _release(key: str) -> None:
    try:
        cache.decr(key)
    except Exception:  # expired or the store is gone: the count is lost with it anyway
        pass


def cap_count(endpoint: str, address_hash: str) -> int:
    """How many writes are counted today (for tests and the admin)."""
    return int(cache.get(_cap_keys(endpoint, address_hash, _today())[1]) or 0)
