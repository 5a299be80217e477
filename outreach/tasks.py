"""Background work of the outreach app: thin tasks that take ids and call a service."""

from celery import shared_task

from . import services


@shared_task(autoretry_for=(Exception,), retry_backoff=True, max_retries=5)
def optout_confirmation_send(lead_id: int) -> bool:
    """The confirmation e-mail of an opt-out (at most one per opt-out, see the service)."""
    return services.optout_confirmation_send(lead_id=lead_id)


@shared_task
def optout_confirmations_due() -> int:
    """Hourly (config/celery.py beat schedule): confirmations a lost task did not send."""
    return services.optout_confirmations_due()


@shared_task(autoretry_for=(services.InviteNotSent,), retry_backoff=True, max_retries=5)
def lead_invite_send(lead_id: int) -> bool:
    """The invitation e-mail of a new lead (at most one, see the service)."""
    return services.lead_invite(lead_id=lead_id)
