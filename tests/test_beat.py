"""`make run` has no Celery beat: its web process runs the beat's periodic work itself."""

import asyncio
import datetime as dt

import pytest
from django.db import connection
from django.utils import timezone
from django.utils.module_loading import import_string

from config import beat
from config.celery import app

DATASETS_JOBS = {
    "datasets.services.datasets_export_if_changed": "datasets.tasks.datasets_export_if_changed",
    "datasets.services.datasets_export_if_month_ended": (
        "datasets.tasks.datasets_export_if_month_ended"
    ),
}
SUBMISSIONS_JOBS = {
    "submissions.review.submissions_notify_due": "submissions.tasks.submissions_notify_due",
    "submissions.services.contacts_purge": "submissions.tasks.contacts_purge",
    "submissions.menu_photos.menu_photos_due": "submissions.tasks.menu_photos_due",
}
OUTREACH_JOBS = {
    "outreach.services.optout_confirmations_due": "outreach.tasks.optout_confirmations_due",
}


def test_the_web_process_runs_what_the_beat_schedules():
    """Each beat entry's work has its job in the web process (the datasets' own test is in
    datasets/tests/test_freshness.py), and each job names a service that exists."""
    paths = {path for path, _, _ in beat.jobs()}
    jobs = {**DATASETS_JOBS, **SUBMISSIONS_JOBS, **OUTREACH_JOBS}
    assert paths == set(jobs)
    assert {e["task"] for e in app.conf.beat_schedule.values()} == set(jobs.values())
    assert all(callable(import_string(path)) for path in paths)


@pytest.mark.django_db(transaction=True)
def test_the_web_process_purges_old_contacts(settings, monkeypatch):
    """The purge runs from the lifespan, in a thread, on the real database."""
    from beers.tests.factories import CityFactory
    from config.asgi import application
    from submissions.models import BarOwnerMessage

    city = CityFactory()
    message = BarOwnerMessage.objects.create(
        address_hash="a" * 64,
        body_fingerprint="1",
        city=city,
        bar="Bar",
        topic="other",
        name="Zé",
        contact="ze@example.com",
        contact_index="x",
        created_at=timezone.now() - dt.timedelta(days=91),
    )
    settings.DATASETS_REFRESH_IN_PROCESS = True
    real = beat.jobs()
    monkeypatch.setattr(
        beat, "jobs", lambda: [(p, 0.0, 3600.0) for p, _, _ in real if p in SUBMISSIONS_JOBS]
    )

    def purged() -> bool:  # from a thread: its connection closed after
        try:
            return BarOwnerMessage.objects.get(pk=message.pk).contact is None
        finally:
            connection.close()

    async def serve() -> bool:
        inbox: asyncio.Queue = asyncio.Queue()

        async def send(message):
            pass

        await inbox.put({"type": "lifespan.startup"})
        server = asyncio.create_task(application({"type": "lifespan"}, inbox.get, send))
        for _ in range(200):
            if await asyncio.to_thread(purged):
                break
            await asyncio.sleep(0.05)
        await inbox.put({"type": "lifespan.shutdown"})
        await server
        return await asyncio.to_thread(purged)

    assert asyncio.run(asyncio.wait_for(serve(), 20))
