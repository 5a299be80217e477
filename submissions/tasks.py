"""Background work of the queued writes: thin tasks that take ids and call a service."""

import logging

from celery import shared_task

from . import menu_photos, review, services

logger = logging.getLogger(__name__)


@shared_task(autoretry_for=(Exception,), retry_backoff=True, max_retries=5)
def menu_photos_process(upload_id: int) -> str | None:
    """Read an upload's photos into drafts for the automated reviewer (submissions.menu_photos);
    a lost one is read by menu_photos_due."""
    return menu_photos.menu_photos_read(upload_id=upload_id)


@shared_task
def menu_photos_due() -> int:
    """Hourly (config/celery.py beat schedule): uploads whose reading was lost."""
    return menu_photos.menu_photos_due()


@shared_task
def contacts_purge() -> dict[str, int]:
    """Daily (config/celery.py beat schedule): bar-owner and menu-photo contacts older than
    90 days, e-mails of decided submissions and city requests left 3 days after the decision
    (services.NOTIFY_GRACE), and menu photos never read within a week."""
    counts = services.contacts_purge()
    logger.info("contacts_purge: %s", counts)
    return counts


@shared_task
def submissions_notify_due() -> dict[str, int]:
    """Hourly (config/celery.py beat schedule): senders still holding an e-mail are told that
    their price or city is live (a validity that began today, a send that failed before)."""
    counts = review.submissions_notify_due()
    logger.info("submissions_notify_due: %s", counts)
    return counts


@shared_task(autoretry_for=(review.NotificationNotSent,), retry_backoff=True, max_retries=8)
def submission_notify_live(submission_id: int) -> bool:
    """Tell the sender their price is live, then delete their e-mail (sent once)."""
    return review.submission_notify_live(submission_id=submission_id)


@shared_task(autoretry_for=(review.NotificationNotSent,), retry_backoff=True, max_retries=8)
def city_request_notify_live(request_id: int, city_id: int) -> bool:
    """Tell who asked for a city that it is live, then delete their e-mail (sent once)."""
    return review.city_request_notify_live(request_id=request_id, city_id=city_id)
