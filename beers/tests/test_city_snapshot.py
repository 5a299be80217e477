"""The per-process snapshot of active cities that live reads start from."""

import pytest

from beers.models import City
from beers.selectors import cities


def _city(slug, **fields):
    return City.objects.create(
        slug=slug,
        name=slug.title(),
        state="SP",
        timezone=fields.pop("timezone", "America/Sao_Paulo"),
        active=fields.pop("active", True),
        lat=-23.5,
        lng=-46.6,
        **fields,
    )


@pytest.fixture
def clock(monkeypatch):
    """The snapshot's monotonic clock, moved by hand."""
    now = [1000.0]
    monkeypatch.setattr(cities.time, "monotonic", lambda: now[0])
    return now


@pytest.mark.django_db
def test_one_query_loads_every_active_city_then_none(django_assert_num_queries, clock):
    _city("recife", timezone="America/Recife")
    _city("manaus", timezone="America/Manaus")
    _city("belem", active=False)
    with django_assert_num_queries(1):
        assert cities.active_city("recife").timezone == "America/Recife"
    with django_assert_num_queries(0):
        assert cities.active_city("manaus").timezone == "America/Manaus"
        assert cities.active_city("recife").slug == "recife"


@pytest.mark.django_db
def test_an_inactive_or_unknown_slug_is_none(clock):
    _city("belem", active=False)
    assert cities.active_city("belem") is None
    assert cities.active_city("atlantis") is None


@pytest.mark.django_db
def test_a_city_activated_elsewhere_is_found_at_once(django_assert_num_queries, clock):
    _city("recife")
    later = _city("natal", active=False)
    assert cities.active_city("natal") is None
    City.objects.filter(pk=later.pk).update(active=True)  # no signal: as from another process
    with django_assert_num_queries(1):
        assert cities.active_city("natal").pk == later.pk
    with django_assert_num_queries(1):  # the stale snapshot was dropped: one reload
        assert cities.active_city("recife").slug == "recife"
    with django_assert_num_queries(0):
        assert cities.active_city("natal").pk == later.pk


@pytest.mark.django_db
def test_an_edit_elsewhere_shows_after_the_refresh_period(clock):
    city = _city("recife", timezone="America/Recife")
    assert cities.active_city("recife").timezone == "America/Recife"
    City.objects.filter(pk=city.pk).update(timezone="America/Noronha")
    clock[0] += cities.REFRESH_SECONDS / 2
    assert cities.active_city("recife").timezone == "America/Recife"
    clock[0] += cities.REFRESH_SECONDS / 2
    assert cities.active_city("recife").timezone == "America/Noronha"
    City.objects.filter(pk=city.pk).update(active=False)
    clock[0] += cities.REFRESH_SECONDS
    assert cities.active_city("recife") is None


@pytest.mark.django_db
def test_saving_or_deleting_a_city_here_drops_the_snapshot_at_once(clock):
    city = _city("recife", timezone="America/Recife")
    assert cities.active_city("recife").timezone == "America/Recife"
    city.timezone = "America/Noronha"
    city.save()
    assert cities.active_city("recife").timezone == "America/Noronha"
    city.active = False
    city.save()
    assert cities.active_city("recife") is None
    other = _city("natal")
    assert cities.active_city("natal") is not None
    other.delete()
    assert cities.active_city("natal") is None


def test_requests_that_wait_for_a_failing_reload_fail_with_it(monkeypatch):
    """With the database down, each request waiting for the snapshot loaded it in turn and
    waited out the pool's timeout: 8 requests at once, the last one's 503 after 24 s. One
    load now, and the others fail with it; the next ones at once while it is known down."""
    import threading
    import time

    from django.db import OperationalError

    from beers import outage

    loads = []

    def down():
        loads.append(1)
        time.sleep(0.5)  # the pool's timeout, shortened
        raise OperationalError("connection refused")

    monkeypatch.setattr(cities, "_load", down)
    cities.forget()
    errors = []

    def read():
        try:
            cities.active_city("recife")
        except OperationalError as exc:
            errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(errors) == 8 and len(loads) == 1
    assert time.monotonic() - started < 2  # 8 loads in turn took 8 x 0.5 s
    assert outage.DATABASE.down()
    read()  # known down: no load
    assert len(errors) == 9 and len(loads) == 1
