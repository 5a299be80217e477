"""Prints which database and cache the test suite will use (and fails fast when unreachable)."""

import os
import sys


def _ensure_database(psycopg, dsn: str) -> None:
    """Connects to DATABASE_URL, creating its database first when the server lacks it."""
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        psycopg.connect(dsn, connect_timeout=3).close()
        return
    except psycopg.OperationalError as exc:
        if "does not exist" not in str(exc):
            raise
    name = conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(
        make_conninfo(dsn, dbname="postgres"), connect_timeout=3, autocommit=True
    ) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    print(f"backends: created database {name}")


def main() -> int:
    db = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    if db:
        import psycopg

        dsn = db.replace("postgres://", "postgresql://", 1)
        try:
            _ensure_database(psycopg, dsn)
        except Exception as exc:
            print(f"backends: PostgreSQL at DATABASE_URL unreachable: {exc}", file=sys.stderr)
            return 1
        print("backends: database PostgreSQL (DATABASE_URL)")
    else:
        print("backends: database SQLite (set DATABASE_URL for PostgreSQL)")
    if redis_url:
        import redis

        try:
            redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
        except Exception as exc:
            print(f"backends: Redis at REDIS_URL unreachable: {exc}", file=sys.stderr)
            return 1
        print("backends: cache and Celery broker Redis (REDIS_URL)")
    else:
        print("backends: cache local memory, Celery eager (set REDIS_URL for Redis)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
