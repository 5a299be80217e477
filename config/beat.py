"""Celery beat's periodic work inside the web process, for `make run` (no beat there).

With DATASETS_REFRESH_IN_PROCESS the ASGI lifespan (config/asgi.py) runs each job below in a
thread of its own, again and again: the datasets' check every DATASETS_REFRESH_SECONDS and
their month-end check every DATASETS_MONTH_END_SECONDS (as the beat entries in settings), the
"it's live" e-mails and the opt-out confirmations due (hourly) and the purge of personal data
(daily), as config/celery.py schedules them for the beat, and
the reading of menu photos every 5 s (no worker reads them here). A failed run is logged and
the next one tries again.
"""

import asyncio
import logging

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

HOUR, DAY = 3600.0, 86400.0


def jobs() -> list[tuple[str, float, float]]:
    """(dotted path of the service, seconds before its first run, seconds between runs)."""
    every = settings.DATASETS_REFRESH_SECONDS
    return [
        ("datasets.services.datasets_export_if_changed", every, every),
        (
            "datasets.services.datasets_export_if_month_ended",
            settings.DATASETS_MONTH_END_SECONDS,
            settings.DATASETS_MONTH_END_SECONDS,
        ),
        ("submissions.review.submissions_notify_due", 60.0, HOUR),
        ("outreach.services.optout_confirmations_due", 60.0, HOUR),
        ("submissions.services.contacts_purge", 60.0, DAY),
        # No worker: every upload's photos are read here, a few seconds after it came.
        ("submissions.menu_photos.menu_photos_due", 5.0, 5.0),
    ]


def run_once(path: str) -> None:
    """One run of a job, from a thread of its own (its database connections closed after)."""
    close_old_connections()
    try:
        import_string(path)()
    finally:
        connections.close_all()


async def run_forever(path: str, first: float, every: float) -> None:
    await asyncio.sleep(first)
    while True:
        try:
            await asyncio.to_thread(run_once, path)
        except Exception:
            logger.exception("in-process beat: %s failed", path)
        await asyncio.sleep(every)
