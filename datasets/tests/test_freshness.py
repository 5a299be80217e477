"""Keeping the files fresh: export only on change, one at a time, after moderation, on beat."""

import datetime as dt

import pytest
from django.core.cache import cache
from django.core.management import call_command

from beers.services import deal_create
from datasets import services, tasks
from datasets.generations import read_pointer
from datasets.storage import datasets_storage

from .conftest import at

pytestmark = pytest.mark.django_db


def test_exports_when_missing_then_only_on_change(world):
    now = at(2026, 11, 23, 12)
    assert services.datasets_export_if_changed(now=now) is not None
    assert services.datasets_export_if_changed(now=now + dt.timedelta(minutes=5)) is None
    deal_create(venue=world.ze, format=world.garrafa, price_cents=1000)
    result = services.datasets_export_if_changed(now=now + dt.timedelta(minutes=10))
    assert result is not None
    assert read_pointer(datasets_storage())["generation"] == result.generation


def test_files_made_under_another_site_address_are_made_again(world, settings):
    """An import run beside `make run PORT=8131` exported under the default SITE_URL: the
    files credited http://127.0.0.1:8000 while the server said :8131, until data changed."""
    now = at(2026, 11, 23, 12)
    settings.SITE_URL = "http://127.0.0.1:8000"
    settings.ATTRIBUTION = "Breja (http://127.0.0.1:8000), ODbL 1.0"  # (derived in settings)
    services.datasets_export_if_changed(now=now)
    settings.SITE_URL = "http://127.0.0.1:8131"
    settings.ATTRIBUTION = "Breja (http://127.0.0.1:8131), ODbL 1.0"
    result = services.datasets_export_if_changed(now=now + dt.timedelta(minutes=5))
    assert result is not None
    index = datasets_storage().open(f"{result.generation}/index.json").read()
    assert b"Breja (http://127.0.0.1:8131), ODbL 1.0" in index
    assert services.datasets_export_if_changed(now=now + dt.timedelta(minutes=10)) is None


def test_moderation_changes_without_new_rows_are_seen(world):
    now = at(2026, 11, 23, 12)
    services.datasets_export_if_changed(now=now)
    world.deals.regular.status = "suspended"
    world.deals.regular.save()
    assert services.datasets_export_if_changed(now=now + dt.timedelta(minutes=5)) is not None


def test_an_old_export_is_redone_even_without_change(world, settings):
    settings.DATASETS_MAX_AGE_SECONDS = 3600
    now = at(2026, 11, 23, 12)
    services.datasets_export_if_changed(now=now)
    assert services.datasets_export_if_changed(now=now + dt.timedelta(minutes=59)) is None
    assert services.datasets_export_if_changed(now=now + dt.timedelta(minutes=61)) is not None


def test_one_export_at_a_time_and_a_blocked_request_is_not_lost(world):
    now = at(2026, 11, 23, 12)
    services.datasets_export_if_changed(now=now)
    cache.add(services.LOCK_KEY, 1)
    assert services.datasets_export_if_changed(force=True, now=now) is None
    cache.delete(services.LOCK_KEY)
    # Nothing changed, but a request was blocked: the next run exports.
    assert services.datasets_export_if_changed(now=now + dt.timedelta(minutes=1)) is not None
    assert services.datasets_export_if_changed(now=now + dt.timedelta(minutes=2)) is None


def test_schedule_export_enqueues_the_task_after_commit(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    calls = []
    monkeypatch.setattr(
        tasks.datasets_export_if_changed, "apply_async", lambda **kw: calls.append(kw)
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.datasets_schedule_export()
        assert calls == []
    assert calls == [{"kwargs": {"force": True}, "countdown": 30}]


def test_a_burst_of_requests_shares_one_export(
    world, monkeypatch, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a worker and a broker, as in production
    cache.delete(services.SCHEDULED_KEY)
    calls = []
    monkeypatch.setattr(
        tasks.datasets_export_if_changed, "apply_async", lambda **kw: calls.append(kw)
    )
    for _ in range(3):  # three approvals, each its own transaction
        with django_capture_on_commit_callbacks(execute=True):
            services.datasets_schedule_export()
    assert calls == [{"kwargs": {"force": True}, "countdown": 30}]
    cache.delete(services.SCHEDULED_KEY)  # the export ran: the next request enqueues again
    with django_capture_on_commit_callbacks(execute=True):
        services.datasets_schedule_export()
    assert len(calls) == 2


def test_a_broker_down_costs_the_export_never_the_committed_request(
    world, monkeypatch, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    cache.delete(services.SCHEDULED_KEY)

    def broker_down(**kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.datasets_export_if_changed, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        services.datasets_schedule_export()  # robust: logged, not raised
    assert cache.get(services.SCHEDULED_KEY) is None  # the next request enqueues


def test_an_admin_edit_reaches_the_served_files(
    world, admin_client, client, django_capture_on_commit_callbacks
):
    """A renamed brand is invisible to the change fingerprint: the admin asks for an export,
    and the served catalogue has the new name (the task runs eagerly here)."""
    services.datasets_export()
    brand = world.brahma
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            f"/admin/beers/brand/{brand.pk}/change/", {"name": "Brahma Nova", "slug": brand.slug}
        )
    assert response.status_code == 302, response.content[:500]
    served = client.get("/api/v1/catalog.json").json()
    assert {"slug": brand.slug, "name": "Brahma Nova"} in served["brands"]


def test_task_runs_the_service(world):
    generation = tasks.datasets_export_if_changed.apply(kwargs={"force": True}).get()
    assert generation == read_pointer(datasets_storage())["generation"]


def test_beat_runs_the_task_every_five_minutes():
    from config.celery import app

    entry = app.conf.beat_schedule["datasets-export-if-changed"]
    assert entry["task"] == "datasets.tasks.datasets_export_if_changed"
    assert entry["schedule"] == 300.0
    assert entry["task"] in app.tasks


def test_commands(world, tmp_path, capsys):
    call_command("export_datasets", "--dir", str(tmp_path / "plain"), verbosity=2)
    assert (tmp_path / "plain" / "index.json").exists()
    call_command("export_datasets", verbosity=2)
    assert "gen-" in capsys.readouterr().out
    call_command("export_datasets", "--if-changed", verbosity=2)
    assert "unchanged" in capsys.readouterr().out


def test_off_a_terminal_the_commands_say_nothing(world, tmp_path, capfd):
    """cron, a pipe: no progress bar, no summary, no INFO log line (-v 2 shows them)."""
    call_command("export_datasets", "--dir", str(tmp_path / "plain"))
    call_command("export_datasets")
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_a_month_end_in_a_city_is_exported_within_a_beat(world, client):
    """`final` flips when the city-local month ends, not an hour later: the export due at
    the first month end after it (here São Paulo's, UTC-3; Manaus is UTC-4)."""

    def served_october() -> set[bool]:
        cells = client.get("/api/v1/sao-paulo/price-index.json").json()["items"]
        return {cell["final"] for cell in cells if cell["month"] == "2026-10"}

    before = at(2026, 11, 1, 2, 50)  # 23:50 on 31 October in São Paulo
    assert services.datasets_export_if_changed(now=before) is not None
    assert served_october() == {False}
    pointer = read_pointer(datasets_storage())
    assert pointer["final_at"] == at(2026, 11, 1, 3).timestamp()
    assert services.datasets_export_if_changed(now=at(2026, 11, 1, 2, 59, 59)) is None
    assert services.datasets_export_if_changed(now=at(2026, 11, 1, 3)) is not None
    assert served_october() == {True}
    # Next due: Manaus's month end, an hour later, then nothing until the next month's.
    assert read_pointer(datasets_storage())["final_at"] == at(2026, 11, 1, 4).timestamp()
    assert services.datasets_export_if_changed(now=at(2026, 11, 1, 3, 5)) is None
    assert services.datasets_export_if_changed(now=at(2026, 11, 1, 4)) is not None
    assert read_pointer(datasets_storage())["final_at"] == at(2026, 12, 1, 3).timestamp()


def test_the_web_process_checks_the_datasets_where_no_beat_runs(settings, monkeypatch):
    """make run has no Celery beat: with DATASETS_REFRESH_IN_PROCESS the web process runs the
    check every DATASETS_REFRESH_SECONDS from its lifespan, survives a failed run, and stops
    with the server."""
    import asyncio

    from config.asgi import application

    settings.DATASETS_REFRESH_IN_PROCESS = True
    settings.DATASETS_REFRESH_SECONDS = 0.01
    calls = []

    def check():
        calls.append(1)
        if len(calls) == 1:
            raise OSError("storage hiccup")

    monkeypatch.setattr(services, "datasets_export_if_changed", check)

    async def serve() -> int:
        inbox: asyncio.Queue = asyncio.Queue()
        sent = []

        async def send(message):
            sent.append(message["type"])

        await inbox.put({"type": "lifespan.startup"})
        server = asyncio.create_task(application({"type": "lifespan"}, inbox.get, send))
        while len(calls) < 3:
            await asyncio.sleep(0.01)
        await inbox.put({"type": "lifespan.shutdown"})
        await server
        stopped_at = len(calls)
        await asyncio.sleep(0.05)
        assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        return len(calls) - stopped_at

    assert asyncio.run(asyncio.wait_for(serve(), 10)) == 0


def test_a_month_end_is_looked_for_every_minute_from_the_pointer_alone(
    world, client, django_assert_num_queries
):
    """The files say `final` within a minute of the month's end (datasets.md: `final` once
    the month has ended in the city), not at the next 5-minute check of the data: a check
    that reads only the served pointer, so it can run every minute."""
    from config.celery import app

    entry = app.conf.beat_schedule["datasets-export-if-month-ended"]
    assert entry["schedule"] == 60.0 and entry["task"] in app.tasks
    assert services.datasets_export_if_month_ended(now=at(2026, 11, 1, 2, 50)) is None  # none
    assert services.datasets_export_if_changed(now=at(2026, 11, 1, 2, 50)) is not None
    with django_assert_num_queries(0):
        assert services.datasets_export_if_month_ended(now=at(2026, 11, 1, 2, 59, 59)) is None
    assert services.datasets_export_if_month_ended(now=at(2026, 11, 1, 3)) is not None
    cells = client.get("/api/v1/sao-paulo/price-index.json").json()["items"]
    assert {cell["final"] for cell in cells if cell["month"] == "2026-10"} == {True}
    with django_assert_num_queries(0):  # next: Manaus's, an hour later
        assert services.datasets_export_if_month_ended(now=at(2026, 11, 1, 3, 1)) is None
    generation = tasks.datasets_export_if_month_ended.apply().get()  # the beat's task: now
    assert generation == read_pointer(datasets_storage())["generation"]
