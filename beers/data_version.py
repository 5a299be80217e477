"""Versions of the data the live answers rest on, shared by every process that uses the
database.

A write that changes what the answers say (a moderation decision, an admin edit, an import, a
confirmation) sets a fresh version once it commits; an answer or a snapshot taken at another
version is stale. The versions live in the shared cache (Redis). Without Redis (`make run`)
the answers are cached per process, so the versions are kept in files next to the database
instead (`CACHES["versions"]`): an import or `load_demo` run beside the server changes them
for the server too (it served the answers it had cached for up to LIVE_CACHE_SECONDS).
"""

import hashlib
import logging
import secrets

from django.conf import settings
from django.core.cache import cache, caches

from beers.outage import STORE

logger = logging.getLogger(__name__)

VERSION_KEY = "live:data-version"


def store():
    """Where the versions are kept: the shared cache, or its file-based stand-in."""
    return caches["versions"] if "versions" in settings.CACHES else cache


def _city_key(city: str) -> str:
    """A city's version key; a long slug (an unknown one asked for) by its digest, as keys
    stay short in every cache."""
    if len(city) > 64:
        city = hashlib.sha256(city.encode()).hexdigest()
    return f"{VERSION_KEY}:city:{city}"


def _venue_key(venue_id: int) -> str:
    return f"{VERSION_KEY}:venue:{venue_id}"


def keys_for(*, city: str | None = None, venue_id: int | None = None) -> list[str]:
    """The versions an answer rests on: the global one (moderation, admin edits, imports), and
    its city's or its bar's (confirmations and disputes change only those)."""
    keys = [VERSION_KEY]
    if city:
        keys.append(_city_key(city))
    elif venue_id:
        keys.append(_venue_key(venue_id))
    return keys


def changed_keys(*, city: str | None = None, venue_id: int | None = None) -> list[str]:
    """The versions a change moves: its city's and bar's, or (neither given) the global one."""
    keys = [_city_key(city)] if city else []
    keys += [_venue_key(venue_id)] if venue_id else []
    return keys or [VERSION_KEY]


def bump(keys: list[str]) -> None:
    """Give each key a value it never had: a plain write, so two processes bumping at once
    cannot leave the value an answer was computed at (an increment read and written back by a
    file cache could)."""
    try:
        store().set_many({key: secrets.token_hex(8) for key in keys}, timeout=None)
    except Exception:  # the cache is down: nothing is served from it either
        STORE.failed()
        logger.warning("answer cache unavailable", exc_info=True)


def read(keys: list[str], found: dict | None = None) -> tuple:
    """The current values of `keys` (`found`: those already read with them); raises when the
    store fails. A key the store lacks (never set, evicted, flushed) is given a fresh value
    first: read as a constant, an answer cached before it was set would hold again."""
    if found is None:
        found = store().get_many(keys)
    missing = [key for key in keys if key not in found]
    if missing:
        for key in missing:  # another process's add wins: read back what holds
            store().add(key, secrets.token_hex(8), timeout=None)
        found = {**found, **store().get_many(missing)}
    return tuple(found[key] for key in keys)
