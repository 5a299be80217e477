"""Reading menu photos has a queue of its own (settings.CELERY_TASK_ROUTES): a worker started
with `-Q ocr` keeps the OCR (about 30 s of CPU per upload) from delaying the exports and the
e-mails of the default queue. Checked on the real broker: what lands in which Redis list."""

import os

import pytest
from celery import Celery

OCR = ("submissions.tasks.menu_photos_process", "submissions.tasks.menu_photos_due")
DEFAULT = (
    "datasets.tasks.datasets_export_if_changed",
    "submissions.tasks.submission_notify_live",
    "submissions.tasks.contacts_purge",
    "outreach.tasks.optout_confirmations_due",
)


@pytest.fixture
def broker():
    import redis

    url = os.environ.get("REDIS_URL")
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail("CI runs with Redis (REDIS_URL)")
        pytest.skip("no Redis (REDIS_URL)")
    url = url.rsplit("/", 1)[0] + "/15"  # a database of its own
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url, client
    client.flushdb()


def test_menu_photos_are_queued_apart_and_a_plain_worker_takes_both(broker):
    url, client = broker
    app = Celery("queues-test")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.broker_url = url
    app.conf.task_always_eager = False  # the tests' settings run tasks eagerly
    for name in OCR + DEFAULT:
        app.send_task(name, args=[])
    assert client.llen("ocr") == len(OCR)
    assert client.llen("celery") == len(DEFAULT)
    # a worker without -Q consumes every declared queue, OCR included
    assert [q.name for q in app.conf.task_queues] == ["celery", "ocr"]
