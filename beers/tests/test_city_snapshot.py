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


@pytest.mark.django_db(transaction=True)
def test_requests_that_wait_for_a_failing_reload_fail_with_it(monkeypatch, settings):
    """With the database not answering, each request waiting for the snapshot loaded it in
    turn and waited out its timeout: 8 requests at once, the last one's 503 after 24 s. Here
    PostgreSQL does not answer the city query (a table lock held by another transaction, so
    the load runs into the statement timeout): one load, and the others fail with it."""
    import threading
    import time

    from django.db import OperationalError, connection, connections, transaction

    from beers import outage
    from tests.transactions import Held, finish, started

    if connection.vendor != "postgresql":
        pytest.skip("a table lock and a statement timeout need PostgreSQL")
    _city("recife", timezone="America/Recife")
    loads = []
    real_load = cities._load

    def counted():
        loads.append(1)
        return real_load()

    monkeypatch.setattr(cities, "_load", counted)
    cities.forget()
    errors = []

    def read():
        try:
            with transaction.atomic():  # the load times out in 1 s, not 5
                connection.cursor().execute("SET LOCAL statement_timeout = 1000")
                cities.active_city("recife")
        except OperationalError as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    lock = "LOCK TABLE beers_city IN ACCESS EXCLUSIVE MODE"
    holder = started(Held(lambda: connection.cursor().execute(lock)))
    started_at = time.monotonic()
    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    elapsed = time.monotonic() - started_at
    finish(holder)
    assert len(errors) == 8 and len(loads) == 1, (len(errors), len(loads))
    assert elapsed < 3, elapsed  # 8 loads in turn took 8 x 1 s
    # the load was cancelled by its own statement timeout: the database answered, and the
    # process stays open (one slow query must not close it); a refused connection marks it
    assert not outage.DATABASE.down()
    outage.DATABASE.failed()
    read()  # known down: no load, no wait
    assert len(errors) == 9 and len(loads) == 1
    outage.DATABASE.back()
    assert cities.active_city("recife").slug == "recife"
