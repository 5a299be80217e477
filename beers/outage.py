"""Services that stopped answering, remembered for a few seconds in each process.

Every call to a service that does not answer waits out its timeout (a second for the shared
cache, 3 s for the database pool), so after a failure the callers skip it for a while:
- the shared cache (Redis, `STORE`): the live answers are computed without it, the read limits
  are not counted (a read is answered rather than refused), and writes, which fail closed,
  close at once;
- the database (`DATABASE`): live reads answer the degraded 503 at once.
"""

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError, InterfaceError, OperationalError
from psycopg import errors

logger = logging.getLogger(__name__)

try:  # the pool raises its own timeout when every connection is busy
    from psycopg_pool import PoolTimeout
except ImportError:  # pragma: no cover
    PoolTimeout = DatabaseError
# What a database that does not answer (or a query it refused) raises: a live read answers
# both with its degraded 503.
DATABASE_ERRORS = (DatabaseError, PoolTimeout)
# A database that does not answer, not a query's own error (IntegrityError, a bug): an
# endpoint without an outage answer of its own says 503 `unavailable` (beers.api.errors).
OUTAGE_ERRORS = (OperationalError, InterfaceError, PoolTimeout)


class StoreDown(Exception):
    """The shared cache did not answer a moment ago."""


class Outage:
    """A service that did not answer: `down()` for `seconds` after `failed()`."""

    def __init__(self, name: str, seconds: float):
        self.name, self.seconds = name, seconds
        self._until = 0.0
        self._answered = -float("inf")

    def down(self) -> bool:
        return time.monotonic() < self._until

    def answered(self) -> None:
        """It just answered a call."""
        self._answered = time.monotonic()

    def answered_within(self, seconds: float) -> bool:
        return time.monotonic() - self._answered < seconds

    def failed(self) -> None:
        if not self.down():
            logger.warning("%s not answering: skipped for %.0f s", self.name, self.seconds)
        self._until = time.monotonic() + self.seconds
        self._answered = -float("inf")  # an answer before the failure says nothing now

    def back(self) -> None:
        """Forget the outage (tests)."""
        self._until = 0.0
        self._answered = -float("inf")


STORE = Outage("shared cache", 10.0)
DATABASE = Outage("database", 5.0)


class KnownDown(OperationalError):
    """The database did not answer a moment ago (DATABASE.down()): not asked again yet."""


def _cancelled_by_its_own_limit(exc: BaseException) -> bool:
    """A statement the database cancelled on its own timeout, or a lock it did not wait for:
    the database answered. One slow query (a request anybody can send) must not close every
    read, page and write of the process; a database that does not answer shows as a failed
    connection or an exhausted pool."""
    return isinstance(exc.__cause__, errors.QueryCanceled | errors.LockNotAvailable)


def database_failed(exc: BaseException) -> None:
    """Note a database error: one that says the database is not answering (OUTAGE_ERRORS: no
    connection, the pool's timeout) marks it down for a few seconds; a query's own error (a
    statement timeout included) does not close the writes and pages of the process (nor does
    KnownDown extend the mark)."""
    if (
        isinstance(exc, OUTAGE_ERRORS)
        and not isinstance(exc, KnownDown)
        and not _cancelled_by_its_own_limit(exc)
    ):
        DATABASE.failed()


@contextmanager
def database_call() -> Iterator[None]:
    """Work that needs the database: refused at once with KnownDown (one of DATABASE_ERRORS)
    for the few seconds after the database did not answer, rather than each caller waiting
    out the pool's timeout in turn; an outage inside marks it down. The caller answers both
    with its own outage answer (a degraded 503, a 503 page, an unavailable write)."""
    if DATABASE.down():
        raise KnownDown("the database did not answer a moment ago")
    try:
        yield
    except DATABASE_ERRORS as exc:
        database_failed(exc)
        raise
    DATABASE.answered()
