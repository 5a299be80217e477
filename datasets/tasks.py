"""Keeping the open datasets fresh (Celery beat runs these every 5 minutes and every minute)."""

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


@shared_task(bind=True, max_retries=3, default_retry_delay=20, ignore_result=True)
def datasets_export_if_month_ended(self) -> str | None:
    """Re-export once a month has ended in a city (the index's `final`); run every minute."""
    try:
        result = services.datasets_export_if_month_ended()
    except Exception as exc:  # storage or database hiccup: try again shortly
        raise self.retry(exc=exc) from exc
    return result.generation if result else None
