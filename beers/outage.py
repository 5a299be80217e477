"""The shared cache (Redis) not answering: remembered for a few seconds in each process.

Every call to a store that does not answer waits out its socket timeout (a second), so after a
failure the callers skip the store for OUTAGE_SECONDS: the live answers are computed without
the cache, the read limits are not counted (a read is answered rather than refused), and
writes, which fail closed, close at once.
"""

import logging
import time

logger = logging.getLogger(__name__)

OUTAGE_SECONDS = 10.0
_down_until = 0.0


class StoreDown(Exception):
    """The shared cache did not answer a moment ago."""


def store_down() -> bool:
    return time.monotonic() < _down_until


def store_failed() -> None:
    """A call to the store failed: skip it for OUTAGE_SECONDS."""
    global _down_until
    if not store_down():
        logger.warning("shared cache not answering: skipped for %.0f s", OUTAGE_SECONDS)
    _down_until = time.monotonic() + OUTAGE_SECONDS


def store_back() -> None:
    """Forget an outage (tests; a store known to answer again)."""
    global _down_until
    _down_until = 0.0
