"""Keeping the open datasets fresh (Celery beat runs this every 5 minutes)."""

import logging

from celery import shared_task

from . import services

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=3, default_retry_delay=60, ignore_result=True)
def datasets_export_if_changed(self, force: bool = False) -> str | None:
    """Re-export when the data changed since the served generation; idempotent."""
    try:
        result = services.datasets_export_if_changed(force=force)
    except Exception as exc:  # storage or database hiccup: try again later
        raise self.retry(exc=exc) from exc
    return result.generation if result else None


def refresh_once() -> None:
    """One beat's work, from a thread of its own (its database connections closed after)."""
    from django.db import close_old_connections, connections

    close_old_connections()
    try:
        services.datasets_export_if_changed()
    finally:
        connections.close_all()


async def refresh_forever(every: float) -> None:
    """Celery beat's datasets entry inside the web process, for `make run` (no beat there):
    every `every` seconds, export if the data changed or a month ended. A failed run is
    logged and the next one tries again."""
    import asyncio

    while True:
        await asyncio.sleep(every)
        try:
            await asyncio.to_thread(refresh_once)
        except Exception:
            logger.exception("datasets: refresh failed")
