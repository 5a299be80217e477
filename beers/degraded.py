"""Degraded mode: an operator switch kept outside the main database, plus a health probe."""

import json
import time

from django.conf import settings
from django.db import connection

from beers import outage

DEFAULT_RETRY_AFTER = 120


def switch_state() -> dict | None:
    """The operator's switch ({"retry_after": s, "since": t}) or None when off. The file is the
    switch: one edited by hand into something else (`{"retry_after": "soon"}`, `[]`, not JSON)
    is on with the default wait (it gave 500s), and a wait below a second is one second
    (`Retry-After: -30` is no HTTP, and a write's 503 with 0 had none)."""
    try:
        text = settings.DEGRADED_FLAG_PATH.read_text()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        text = ""
    try:
        state = json.loads(text)
    except ValueError:
        state = None
    state = state if isinstance(state, dict) else {}
    wait = state.get("retry_after")
    valid = isinstance(wait, int) and not isinstance(wait, bool)
    return {**state, "retry_after": max(1, wait) if valid else DEFAULT_RETRY_AFTER}


def switch_on(retry_after: int = DEFAULT_RETRY_AFTER) -> None:
    if retry_after < 1:
        raise ValueError("retry_after is a number of seconds, 1 or more")
    path = settings.DEGRADED_FLAG_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"retry_after": int(retry_after), "since": int(time.time())}))
    tmp.replace(path)


def switch_off() -> None:
    settings.DEGRADED_FLAG_PATH.unlink(missing_ok=True)


def database_ok() -> bool:
    """Whether the database answers a trivial query now (bounded by connect/statement timeouts).
    For a few seconds after it did not (beers.outage), False at once: each write and status
    call waited out the pool's 3 s while the live reads skipped it."""
    try:
        with outage.database_call(), connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return True
    except outage.KnownDown:
        return False
    except Exception:
        try:
            connection.close()
        except Exception:
            pass
        return False
