"""Atomic counters in the shared cache (Redis INCR + expiry in production)."""

import re
import time

from django.conf import settings
from django.core.cache import cache

from beers.outage import STORE, StoreDown

_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(s|sec|second|m|min|minute|h|hour|d|day)\s*$")
_PERIODS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}


def daily_cap_enforced() -> bool:
    """Whether writes have a daily cap: WRITE_DAILY_CAP of 0 or less is none."""
    return settings.WRITE_DAILY_CAP > 0


def parse_rate(rate: str) -> tuple[int, int] | None:
    """'120/min' -> (120, 60); '' or 'off' -> None (not enforced)."""
    if not rate or rate.strip().lower() in {"off", "none", "0"}:
        return None
    match = _RATE_RE.match(rate)
    if not match:
        raise ValueError(f"bad rate {rate!r}: use N/s, N/min, N/hour or N/day")
    return int(match.group(1)), _PERIODS[match.group(2)]


def incr(key: str, ttl: int) -> int:
    """Add one to a counter that expires ttl seconds after it was created; the new value."""
    cache.add(key, 0, timeout=ttl)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 0, timeout=ttl)
        return cache.incr(key)


def window_hit(scope: str, ident: str, limit: int, period: int) -> tuple[bool, int]:
    """Fixed-window limit: (allowed, seconds until the window ends). `ident` is stored in the
    key: for a client, its address_hash, never the address. Raises StoreDown at once while
    the store is known not to answer (beers.outage), and whatever the store raises otherwise;
    each caller decides to fail open (reads) or closed (writes)."""
    if STORE.down():
        raise StoreDown
    now = int(time.time())
    window = now // period
    try:
        count = incr(f"rl:{scope}:{ident}:{window}", ttl=period + 5)
    except Exception:
        STORE.failed()
        raise
    retry_after = period - (now % period)
    return count <= limit, retry_after


def store_ok() -> bool:
    """Whether the counters' store answers (a limit counted there is enforced)."""
    if STORE.down():
        return False
    try:
        cache.get("rl:ping")
    except Exception:
        STORE.failed()
        return False
    return True
