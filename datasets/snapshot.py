"""One consistent view of the data for a whole export, in a session tuned for a batch job.

On PostgreSQL the export reads one REPEATABLE READ snapshot, so counts, `cities.json` and the
per-city files agree; it writes only its rows state (datasets.models). Inside a caller's
transaction (tests, mostly) the export uses that transaction as it is.

Measured on 1M prices, 2 cores: writing the deals' JSON and CSV from two connections sharing
an exported snapshot took as long as one connection with two parallel workers per query
(about 10 s either way), so the deals stay on one connection; the price index, work for the
database while the deals are work for Python, runs beside them on a second connection that
shares the snapshot (datasets.services._Ahead).
"""

import contextlib
from collections.abc import Iterator

from django.conf import settings
from django.db import connection, transaction


def statement_timeout_ms() -> int:
    """How long one of the export's statements may take (not the API's few seconds)."""
    return settings.DATASETS_STATEMENT_TIMEOUT_MS


def batch_session(cursor) -> None:
    """A batch job, unlike the live reads: a long statement timeout, whole-table plans, no JIT
    compile time (0.6 s per big query here), sorts in memory, parallel scans."""
    cursor.execute(f"SET LOCAL statement_timeout = {statement_timeout_ms()}")
    cursor.execute("SET LOCAL jit = off")
    cursor.execute("SET LOCAL cursor_tuple_fraction = 1")
    cursor.execute(f"SET LOCAL work_mem = '{int(settings.DATASETS_WORK_MEM_MB)}MB'")
    workers = int(settings.DATASETS_PARALLEL_WORKERS)
    cursor.execute(f"SET LOCAL max_parallel_workers_per_gather = {workers}")


@contextlib.contextmanager
def batch_transaction() -> Iterator[None]:
    """A transaction of its own with the batch settings on PostgreSQL (not the API's 5 s
    statement timeout and serial plans); inside a caller's transaction, that one as it is."""
    if connection.in_atomic_block or connection.vendor != "postgresql":
        with transaction.atomic():
            yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            batch_session(cursor)
        yield


# One export at a time writes the rows state and the kept files (datasets.models,
# datasets.patch): a session-level lock, taken before the snapshot (a transaction-level one
# would be taken after it, and a waiting export would then patch files that the one before it
# wrote after its snapshot).
EXPORT_LOCK = 0x62726A61  # "brja"


@contextlib.contextmanager
def export_snapshot() -> Iterator[bool]:
    """The export's transaction: its own snapshot and batch settings on PostgreSQL. Yields
    whether the export owns it there, and so may bring the rows state up to date: REPEATABLE
    READ (every query sees one snapshot; it writes only that state), one export at a time.
    Inside a caller's transaction (tests, mostly) the export uses that transaction as it is
    and writes nothing: its state would be the caller's to commit or roll back, and a second
    connection sharing the snapshot would not see the caller's own writes."""
    if connection.in_atomic_block:
        yield False
        return
    if connection.vendor != "postgresql":
        with transaction.atomic():
            yield False
        return
    with transaction.atomic(), connection.cursor() as cursor:
        # A session lock outlives this transaction; it waits for another export as long as
        # an export's statements may take.
        cursor.execute(f"SET LOCAL statement_timeout = {statement_timeout_ms()}")
        cursor.execute("SELECT pg_advisory_lock(%s)", [EXPORT_LOCK])
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                batch_session(cursor)
            yield True
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [EXPORT_LOCK])
