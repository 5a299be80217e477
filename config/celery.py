"""Celery application: eager without a broker (make run), Redis in production."""

import os

from celery import Celery
from celery.schedules import crontab

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("breja")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Periodic work (django-celery-beat's DatabaseScheduler also picks these entries up).
app.conf.beat_schedule = {
    **(app.conf.beat_schedule or {}),
    "contacts-purge": {
        "task": "submissions.tasks.contacts_purge",
        "schedule": crontab(hour=6, minute=17),  # UTC; 03:17 in São Paulo
    },
    # Brazil's zones are whole hours from UTC: each city's day begins on the hour.
    "submissions-notify-due": {
        "task": "submissions.tasks.submissions_notify_due",
        "schedule": crontab(minute=1),
    },
    # Menu photos whose reading was lost (a broker down, every retry spent).
    "menu-photos-due": {
        "task": "submissions.tasks.menu_photos_due",
        "schedule": crontab(minute=41),
    },
    "optout-confirmations-due": {
        "task": "outreach.tasks.optout_confirmations_due",
        "schedule": crontab(minute=31),
    },
}
