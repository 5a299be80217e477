"""One consistent view of the data for a whole export, in a session tuned for a batch job.

On PostgreSQL the export reads one REPEATABLE READ, read-only snapshot, so counts,
`cities.json` and the per-city files agree. Inside a caller's transaction (tests, mostly) the
export uses that transaction as it is.

Measured on 1M prices, 2 cores: writing the deals' JSON and CSV from two connections sharing
an exported snapshot took as long as one connection with two parallel workers per query
(about 10 s either way), so the export stays on one connection.
"""

import contextlib
from collections.abc import Iterator

from django.conf import settings
from django.db import connection, transaction


def batch_session(cursor) -> None:
    """A batch job, unlike the live reads: a long statement timeout, whole-table plans, no JIT
    compile time (0.6 s per big query here), sorts in memory, parallel scans."""
    timeout_ms = int(getattr(settings, "DATASETS_STATEMENT_TIMEOUT_MS", 600_000))
    cursor.execute(f"SET LOCAL statement_timeout = {timeout_ms}")
    cursor.execute("SET LOCAL jit = off")
    cursor.execute("SET LOCAL cursor_tuple_fraction = 1")
    cursor.execute(f"SET LOCAL work_mem = '{int(settings.DATASETS_WORK_MEM_MB)}MB'")
    workers = int(settings.DATASETS_PARALLEL_WORKERS)
    cursor.execute(f"SET LOCAL max_parallel_workers_per_gather = {workers}")


@contextlib.contextmanager
def export_snapshot() -> Iterator[None]:
    """The export's transaction: its own snapshot and batch settings on PostgreSQL."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                batch_session(cursor)
        yield
