"""COPY … TO STDOUT through a Django cursor, seen like any other query.

psycopg's `cursor.copy()` bypasses Django's cursor wrapper: without this, a COPY would be
missing from `connection.queries` (and from the tests' query counts), and its errors would
reach callers as psycopg's own rather than `django.db` errors.
"""

from contextlib import contextmanager, nullcontext


@contextmanager
def copy_out(cursor, sql: str, params=None):
    """Run `sql` (a COPY … TO STDOUT) on a Django cursor and yield psycopg's Copy object."""
    debug = getattr(cursor, "debug_sql", None)  # only on the debug cursor (tests, DEBUG)
    with cursor.db.wrap_database_errors, debug(sql, params) if debug else nullcontext():
        with cursor.cursor.copy(sql, params) as copy:
            yield copy
