"""Degraded mode: an operator switch kept outside the main database, plus a health probe."""

import json
import time

from django.conf import settings
from django.db import connection

DEFAULT_RETRY_AFTER = 120


def switch_state() -> dict | None:
    """The operator's switch ({"retry_after": s, "since": t}) or None when off."""
    try:
        return json.loads(settings.DEGRADED_FLAG_PATH.read_text())
    except (FileNotFoundError, ValueError):
        return None


def switch_on(retry_after: int = DEFAULT_RETRY_AFTER) -> None:
    path = settings.DEGRADED_FLAG_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"retry_after": int(retry_after), "since": int(time.time())}))
    tmp.replace(path)


def switch_off() -> None:
    settings.DEGRADED_FLAG_PATH.unlink(missing_ok=True)


def database_ok() -> bool:
    """Whether the database answers a trivial query now (bounded by connect/statement timeouts)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return True
    except Exception:
        try:
            connection.close()
        except Exception:
            pass
        return False


def retry_after() -> int:
    state = switch_state()
    return int(state.get("retry_after", DEFAULT_RETRY_AFTER)) if state else DEFAULT_RETRY_AFTER
