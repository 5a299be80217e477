"""COPY … TO STDOUT through a Django cursor, seen like any other query.

psycopg's `cursor.copy()` bypasses Django's cursor wrapper: without this, a COPY would be
missing from `connection.queries` (and from the tests' query counts), and its errors would
reach callers as psycopg's own rather than `django.db` errors.
"""

from contextlib import contextmanager, nullcontext

from psycopg import capabilities


@contextmanager
def copy_out(cursor, sql: str, params=None):
    """Run `sql` (a COPY … TO STDOUT) on a Django cursor and yield psycopg's Copy object."""
    debug = getattr(cursor, "debug_sql", None)  # only on the debug cursor (tests, DEBUG)
    with cursor.db.wrap_database_errors, debug(sql, params) if debug else nullcontext():
        with cursor.cursor.copy(sql, params) as copy:
            yield copy


def stream_rows(cursor, sql: str, params=None, *, size: int = 2000):
    """Yield the rows of `sql` (a SELECT) as libpq receives them, `size` rows at a time
    (chunked rows mode): flat memory like a server-side cursor, yet the query may use a
    parallel plan, which a cursor may not. Seen like any other query (see copy_out)."""
    if not capabilities.has_stream_chunked():  # libpq 17, at build and run time
        size = 1
    debug = getattr(cursor, "debug_sql", None)
    with cursor.db.wrap_database_errors, debug(sql, params) if debug else nullcontext():
        yield from cursor.cursor.stream(sql, params, size=size)
