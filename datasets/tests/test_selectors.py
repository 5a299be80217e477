"""beers.selectors.price_index and catalog, checked against numpy and the files."""

import datetime as dt
import random
import zoneinfo
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

import numpy
import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beers.models import CheckSource, City, Deal, PriceCheck, PriceIndexHistory
from beers.selectors.catalog import catalog, cities_summary
from beers.selectors.price_index import _local_months, latest_month, price_index
from beers.services import deal_create, price_index_close_months, venue_create

from .conftest import at

pytestmark = pytest.mark.django_db
MANAUS = zoneinfo.ZoneInfo("America/Manaus")


def _at_clock(monkeypatch, instant: dt.datetime) -> None:
    monkeypatch.setattr(timezone, "now", lambda: instant)


def test_a_check_at_2330_local_counts_in_its_month_and_0030_in_the_next(world, monkeypatch):
    deal = world.deals.manaus  # first check: 2026-10-01 03:30 UTC = 30 Sep 23:30 in Manaus
    world.record_check(
        deal=deal, source=CheckSource.CONFIRMATION, price_cents=1500, at=at(2026, 10, 1, 4, 30)
    )  # 1 Oct 00:30 in Manaus
    _at_clock(monkeypatch, at(2026, 11, 1, 3, 59))  # 31 Oct 23:59 in Manaus
    price_index_close_months(city=world.manaus)
    cells = price_index(city=world.manaus)
    city_cells = {c["month"]: c for c in cells if c["scope"] == "city"}
    assert city_cells["2026-09"]["median_cents"] == 2000  # 1200 for 0.6 l
    assert city_cells["2026-10"]["median_cents"] == 2500  # 1500 for 0.6 l
    assert city_cells["2026-09"]["final"] is True
    assert city_cells["2026-10"]["final"] is False
    _at_clock(monkeypatch, at(2026, 11, 1, 4, 0))  # 1 Nov 00:00 in Manaus
    assert price_index(city=world.manaus) == cells  # final once closed, not before
    price_index_close_months(city=world.manaus)
    assert all(c["final"] for c in price_index(city=world.manaus))


def test_once_months_closed_the_open_ones_count_from_their_first_local_instant(world, monkeypatch):
    """The index reads only the checks after the closed months: from the first instant of the
    next month in the city (Manaus, UTC−4), a check at that very instant included."""
    world.record_check(
        deal=world.deals.manaus,
        source=CheckSource.CONFIRMATION,
        price_cents=1500,
        at=at(2026, 10, 1, 4, 0),  # 1 Oct 00:00 in Manaus
    )
    _at_clock(monkeypatch, at(2026, 10, 15, 12))
    price_index_close_months(city=world.manaus)
    assert world.manaus.price_index_closed_through == "2026-09"
    cells = price_index(city=world.manaus)
    assert [(c["month"], c["n"], c["median_cents"]) for c in cells if c["scope"] == "city"] == [
        ("2026-09", 1, 2000),  # 30 Sep 23:30, kept as it closed
        ("2026-10", 1, 2500),
    ]
    assert [c for c in cells if c["month"] == "2026-10"] == price_index(
        city=world.manaus, month="2026-10"
    )


def test_the_last_check_inside_the_month_is_the_observation(world):
    deal = world.deals.manaus
    world.record_check(
        deal=deal, source=CheckSource.CONFIRMATION, price_cents=1300, at=at(2026, 10, 10, 12)
    )
    world.record_check(
        deal=deal, source=CheckSource.CONFIRMATION, price_cents=1400, at=at(2026, 10, 20, 12)
    )
    cells = price_index(city=world.manaus, month="2026-10")
    assert {(c["scope"], c["key"]): (c["n"], c["median_cents"]) for c in cells} == {
        ("city", None): (1, 2333),
        ("format", "garrafa"): (1, 2333),
        ("neighbourhood", "centro"): (1, 2333),
        ("brand", "heineken"): (1, 2333),
    }


def test_only_regular_prices_of_the_published_set_count(world):
    cells = price_index(city=world.sp, month="2026-11")
    city = next(c for c in cells if c["scope"] == "city")
    # November regular prices: no_beer (garrafa, 1100) and disputed (lata, 650); the balde is
    # a combo, the promo a promo, the suspended and retired prices and the closed bar's are out.
    assert city["n"] == 2
    assert [c["key"] for c in cells if c["scope"] == "format"] == ["garrafa", "lata"]


def test_a_depósito_counts_only_where_people_can_drink(world):
    """interface.md: "a `deposito` only counts when true" (on_site): as in the rankings."""
    for on_site, price_cents in ((False, 300), (True, 900)):
        shop = venue_create(
            city=world.manaus,
            name=f"Depósito {on_site}",
            lat=-3.1,
            lng=-60.0,
            kind="deposito",
            on_site=on_site,
        )
        deal_create(
            venue=shop,
            format=world.garrafa,
            price_cents=price_cents,
            verified_at=at(2026, 10, 15, 12),
            source=CheckSource.SUBMISSION,
        )

    cells = price_index(city=world.manaus, month="2026-10")

    city = next(c for c in cells if c["scope"] == "city")
    # Bar do Porto was checked in September: the on-site depósito alone, 900 for 0.6 l
    assert (city["n"], city["min_cents"]) == (1, 1500)
    assert latest_month(world.manaus) == "2026-10"


def test_bad_month_is_a_value_error(world):
    with pytest.raises(ValueError):
        price_index(city=world.sp, month="2026-13")


def _half_up(x: float) -> int:
    return int(Decimal(repr(x)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cells_match_numpy_on_the_same_observations(world, seed, monkeypatch):
    rnd = random.Random(seed)
    city = world.manaus
    hoods = [None, world.manaus.neighbourhoods.get(slug="centro")]
    formats = [world.garrafa, world.lata, world.chopp, world.torre]
    expected_obs = defaultdict(list)  # (month, scope, key) -> values
    for n in range(40):
        venue = venue_create(
            city=city,
            name=f"Bar {seed}-{n}",
            lat=-3.13 if n % 2 else -3.5,
            lng=-60.02,
            kind="bar",
            on_site=True,
        )
        fmt = rnd.choice(formats)
        units = rnd.choice([1, 1, 2, 6])
        brand = rnd.choice([None, world.brahma])
        first = at(2026, 8, 1) + dt.timedelta(hours=rnd.randint(0, 24 * 100))
        deal = deal_create(
            venue=venue,
            format=fmt,
            brand=brand,
            units=units,
            price_cents=rnd.randint(300, 9000),
            verified_at=first,
        )
        checks = [(first, deal.price_cents)]
        for _ in range(rnd.randint(0, 5)):
            when = first + dt.timedelta(hours=rnd.randint(1, 24 * 60))
            price = rnd.randint(300, 9000)
            PriceCheck.objects.create(
                deal=deal, price_cents=price, checked_at=when, source=CheckSource.CONFIRMATION
            )
            checks.append((when, price))
        last = {}
        for when, price in sorted(checks):
            last[when.astimezone(MANAUS).strftime("%Y-%m")] = price
        hood = hoods[1] if venue.neighbourhood_id else hoods[0]
        for month, price in last.items():
            value = price * 1000 / (units * fmt.volume_ml)
            expected_obs[(month, "city", None)].append(value)
            expected_obs[(month, "format", fmt.type)].append(value)
            if hood is not None:
                expected_obs[(month, "neighbourhood", hood.slug)].append(value)
            if brand is not None:
                expected_obs[(month, "brand", brand.slug)].append(value)
    # The fixture's own Manaus price (30 Sep 23:30 local).
    value = 1200 * 1000 / 600
    for key in (
        ("city", None),
        ("format", "garrafa"),
        ("neighbourhood", "centro"),
        ("brand", "heineken"),
    ):
        expected_obs[("2026-09", *key)].append(value)

    _at_clock(monkeypatch, at(2026, 10, 15))
    price_index_close_months(city=city)  # September and before: final
    cells = price_index(city=city)
    got = {(c["month"], c["scope"], c["key"]): c for c in cells}
    assert set(got) == set(expected_obs)
    for key, values in expected_obs.items():
        cell = got[key]
        p25, median, p75 = numpy.percentile(values, [25, 50, 75], method="linear")
        assert cell["n"] == len(values)
        assert cell["final"] == (key[0] < "2026-10")
        for name, figure in (
            ("min_cents", min(values)),
            ("p25_cents", p25),
            ("median_cents", median),
            ("p75_cents", p75),
        ):
            frac = figure - int(figure)
            if abs(frac - 0.5) < 1e-6:  # float noise may sit either side of a half
                assert cell[name] in (int(figure), int(figure) + 1), (key, name)
            else:
                assert cell[name] == _half_up(float(figure)), (key, name, values)


def test_price_index_is_three_queries(world, django_assert_num_queries):
    with django_assert_num_queries(3):  # the last closed month, the kept months, the counts
        price_index(city=world.sp)
    with django_assert_num_queries(2):  # the export knows the last closed month
        price_index(city=world.sp, closed="")


def test_catalog_and_cities_summary(world, django_assert_num_queries):
    with django_assert_num_queries(3):
        data = catalog()
    assert [b["slug"] for b in data["brands"]] == ["brahma", "cervejaria-x", "heineken"]
    with django_assert_num_queries(2):
        cities = cities_summary()
    assert [(c["slug"], c["deal_count"], c["venue_count"]) for c in cities] == [
        ("manaus", 1, 1),
        ("sao-paulo", 8, 3),
    ]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 10, 33])
def test_quartiles_are_exactly_statistics_quantiles_inclusive(n):
    import statistics
    from fractions import Fraction

    from beers.selectors.price_index import quartiles

    rnd = random.Random(n)
    data = sorted(
        Fraction(rnd.randint(100, 9000) * 1000, rnd.choice([300, 350, 600, 2000])) for _ in range(n)
    )
    if n == 1:
        expected = (data[0],) * 3
    else:
        expected = tuple(statistics.quantiles(data, n=4, method="inclusive"))
        assert expected[1] == statistics.median(data)
    assert quartiles(data) == expected


@pytest.mark.parametrize("seed", range(8))
def test_counted_values_give_the_figures_of_every_observation_listed(seed):
    """The index reads (value, count) items; the figures are those of the expanded list, and
    equal prices per litre written with other terms (2 × 300 ml, 1 × 600 ml) are one value."""
    import statistics
    from fractions import Fraction

    from beers.selectors.price_index import cell_figures, round_half_up

    rnd = random.Random(seed)
    items = [
        ((rnd.choice([600, 900, 1200]) * 1000 * units, units * 300), rnd.randint(1, 5))
        for units in (rnd.choice([1, 2, 4]) for _ in range(rnd.randint(1, 12)))
    ]
    every = sorted(Fraction(num, den) for (num, den), n in items for _ in range(n))
    quartiles = (
        (every[0],) * 3 if len(every) == 1 else statistics.quantiles(every, n=4, method="inclusive")
    )
    assert cell_figures(items) == {
        "n": len(every),
        "min_cents": round_half_up(every[0]),
        "p25_cents": round_half_up(quartiles[0]),
        "median_cents": round_half_up(quartiles[1]),
        "p75_cents": round_half_up(quartiles[2]),
    }


ZONES = ("America/Sao_Paulo", "America/Manaus", "America/Noronha", "America/Santiago", "UTC")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the months' search is SQL")
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    zone=st.sampled_from(ZONES),
    instants=st.lists(
        st.datetimes(
            min_value=dt.datetime(1995, 1, 1),  # noqa: DTZ001 - hypothesis takes naive bounds
            max_value=dt.datetime(2030, 12, 31),  # noqa: DTZ001
            timezones=st.just(dt.UTC),
        ),
        min_size=1,
        max_size=20,
    ),
)
def test_the_months_search_finds_the_local_month_of_any_instant(db, zone, instants):
    """The index finds a check's local month by a binary search of the months' first instants
    (price_index._local_months); it agrees with PostgreSQL's own conversion, at the months'
    edges too (a microsecond either side), and outside the searched years."""
    tz = zoneinfo.ZoneInfo(zone)
    thresholds, local_starts = _local_months(tz, None, None)
    for edge in random.Random(zone).sample(thresholds, 5):
        instants += [edge, edge - dt.timedelta(microseconds=1), edge + dt.timedelta(seconds=1)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE((%s::timestamp[])[width_bucket(t, %s::timestamptz[])], "
            "date_trunc('month', t AT TIME ZONE %s)), date_trunc('month', t AT TIME ZONE %s) "
            "FROM unnest(%s::timestamptz[]) AS t",
            [local_starts, thresholds, zone, zone, instants],
        )
        for searched, converted in cursor.fetchall():
            assert searched == converted


# --- closed months -------------------------------------------------------------------------------


def _city_cells(city) -> dict:
    return {c["month"]: c for c in price_index(city=city) if c["scope"] == "city"}


def test_a_final_month_keeps_its_figures_whatever_comes_later(world, monkeypatch):
    """datasets.md: `final` once the month has ended. Closed, a month's cells are those it
    ended with: a price retired later and a check entered later inside it leave them as
    published (they changed before, and a mirror then disagreed with its source); the open
    month still follows the data."""
    _at_clock(monkeypatch, at(2026, 11, 20, 12))
    now = timezone.now()
    # the cells as they are, final once closed (October and before)
    before = [dict(c, final=c["month"] <= "2026-10") for c in price_index(city=world.sp)]
    assert not any(c["final"] for c in price_index(city=world.sp))
    assert price_index_close_months(city=world.sp, now=now) > 0
    assert world.sp.price_index_closed_through == "2026-10"
    assert price_index(city=world.sp) == before
    october = _city_cells(world.sp)["2026-10"]
    assert october["final"] and october["n"] == 1  # the regular bottle, 1290 for 0.6 l

    Deal.objects.filter(pk=world.deals.regular.pk).update(status="retired")
    world.record_check(
        deal=world.deals.no_beer,
        source=CheckSource.MODERATOR,
        price_cents=900,
        at=at(2026, 10, 30, 12),  # late, inside the closed October
    )
    world.record_check(
        deal=world.deals.no_beer, source=CheckSource.CONFIRMATION, price_cents=1500, at=now
    )
    after = {(c["month"], c["scope"], c["key"]): c for c in price_index(city=world.sp)}
    for cell in before:
        if cell["month"] <= "2026-10":
            assert after[(cell["month"], cell["scope"], cell["key"])] == cell
    assert after[("2026-11", "city", None)] != next(
        c for c in before if (c["month"], c["scope"]) == ("2026-11", "city")
    )
    assert price_index(city=world.sp, month="2026-10") == [
        c for c in before if c["month"] == "2026-10"
    ]
    assert price_index_close_months(city=world.sp, now=now) == 0  # once


def test_a_month_closes_when_it_ends_in_the_city_not_before(world, monkeypatch):
    """Manaus is UTC−4: October ends there at 04:00 UTC on 1 November. A `now` ahead of the
    clock closes nothing the clock has not reached."""
    _at_clock(monkeypatch, at(2026, 11, 1, 3, 59))
    # September's four cells (city, format, bairro, brand)
    assert price_index_close_months(city=world.manaus, now=at(2027, 1, 1)) == 4
    assert world.manaus.price_index_closed_through == "2026-09"
    _at_clock(monkeypatch, at(2026, 11, 1, 4, 0))
    assert price_index_close_months(city=world.manaus) == 0  # October has no cells
    assert world.manaus.price_index_closed_through == "2026-10"
    world.record_check(
        deal=world.deals.manaus,
        source=CheckSource.CONFIRMATION,
        price_cents=1800,
        at=at(2026, 10, 31, 12),
    )
    # October closed empty: a check entered afterwards inside it does not open it again
    assert "2026-10" not in _city_cells(world.manaus)
    assert price_index(city=world.manaus, month="2026-10") == []
    assert latest_month(world.manaus) == "2026-09"


def test_an_export_closes_the_ended_months_of_every_active_city(world, monkeypatch, tmp_path):
    from datasets.services import datasets_export

    _at_clock(monkeypatch, at(2026, 11, 20, 12))
    datasets_export(directory=tmp_path, progress=False)
    through = dict(City.objects.values_list("slug", "price_index_closed_through"))
    assert through == {"sao-paulo": "2026-10", "manaus": "2026-10", "curitiba": ""}
    kept = PriceIndexHistory.objects.filter(city=world.sp).count()
    assert kept == sum(1 for c in price_index(city=world.sp) if c["month"] <= "2026-10")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and batch settings")
@pytest.mark.django_db(transaction=True)
def test_closing_runs_as_a_batch_and_waits_for_a_city_another_transaction_holds(world):
    """An export closes months before its snapshot: with the batch's statement timeout (the
    live reads' 5 s would cancel the whole index of a big city, and every export after it),
    and after an import holding the city row (an export that skipped it went on to publish
    the month before it was kept)."""
    import threading
    import time

    import psycopg

    from datasets.snapshot import batch_transaction, statement_timeout_ms

    with batch_transaction(), connection.cursor() as cursor:
        cursor.execute("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'")
        assert int(cursor.fetchone()[0]) == statement_timeout_ms()
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params) as other:
        other.execute("SELECT 1 FROM beers_city WHERE id = %s FOR UPDATE", [world.sp.pk])
        threading.Timer(1.0, other.commit).start()
        started = time.monotonic()
        with batch_transaction():
            kept = price_index_close_months(city=world.sp, now=at(2026, 11, 20))
        assert time.monotonic() - started >= 0.9 and kept > 0
    assert City.objects.get(pk=world.sp.pk).price_index_closed_through == "2026-10"


def test_an_export_closes_each_city_once_a_month_and_then_costs_one_query(
    world, monkeypatch, django_assert_num_queries
):
    """Every export runs the closing: with nothing to close it reads the cities and stops,
    rather than opening a batch transaction and locking each city row every 5 minutes."""
    from datasets.services import _close_index_months

    _at_clock(monkeypatch, at(2026, 11, 20, 12))
    _close_index_months(timezone.now())
    assert set(
        City.objects.filter(active=True).values_list("price_index_closed_through", flat=True)
    ) == {"2026-10"}
    with django_assert_num_queries(1):  # the active cities
        _close_index_months(timezone.now())


def test_the_live_price_index_is_final_from_the_second_its_month_ends_in_the_city(
    world, monkeypatch
):
    """interface.md: price_index is "final once the month is closed"; its first reader after
    the month has ended in the city's zone closes it (no export needed), and not a second
    before: October ends in Manaus (UTC−4) at 04:00 UTC on 1 November."""
    from beers.selectors import overview
    from beers.selectors.queries import CityQuery

    def ask():
        return overview.price_index_month(CityQuery("manaus", month="2026-10")).data

    world.record_check(  # 31 Oct 23:30 in Manaus, already November in UTC
        deal=world.deals.manaus,
        source=CheckSource.CONFIRMATION,
        price_cents=1500,
        at=at(2026, 11, 1, 3, 30),
    )
    _at_clock(monkeypatch, at(2026, 11, 1, 3, 59, 59))
    before = ask()
    assert before["final"] is False and before["items"]
    assert City.objects.get(pk=world.manaus.pk).price_index_closed_through < "2026-10"
    _at_clock(monkeypatch, at(2026, 11, 1, 4))
    after = ask()
    assert after["final"] is True
    assert all(cell["final"] for cell in after["items"])
    assert [{**c, "final": True} for c in before["items"]] == after["items"]  # same figures
    assert City.objects.get(pk=world.manaus.pk).price_index_closed_through == "2026-10"
    kept = PriceIndexHistory.objects.filter(city=world.manaus, month="2026-10").count()
    assert kept == len(after["items"])
    # November, without a check in Manaus: it closes empty, and is final all the same
    _at_clock(monkeypatch, at(2026, 12, 1, 3, 59, 59))
    november = CityQuery("manaus", month="2026-11")
    assert overview.price_index_month(november).data["final"] is False
    _at_clock(monkeypatch, at(2026, 12, 1, 4))
    answer = overview.price_index_month(november).data
    assert answer["final"] is True and answer["items"] == []
    assert City.objects.get(pk=world.manaus.pk).price_index_closed_through == "2026-11"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks")
@pytest.mark.django_db(transaction=True)
def test_the_live_price_index_does_not_wait_for_a_city_another_transaction_holds(
    world, monkeypatch
):
    """A reader does not queue behind an import (or a closing) holding the city row: it
    answers at once, not final, and the next reader closes the month."""
    import threading
    import time

    import psycopg

    from beers.selectors import overview
    from beers.selectors.queries import CityQuery

    _at_clock(monkeypatch, at(2026, 11, 20, 12))
    query = CityQuery("sao-paulo", month="2026-10")
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params) as other:
        other.execute("SELECT 1 FROM beers_city WHERE id = %s FOR UPDATE", [world.sp.pk])
        release = threading.Timer(5.0, other.rollback)  # a reader that waits: fails, not hangs
        release.start()
        started = time.monotonic()
        held = overview.price_index_month(query).data
        release.cancel()
        assert time.monotonic() - started < 2 and held["final"] is False
    assert City.objects.get(pk=world.sp.pk).price_index_closed_through == ""
    assert overview.price_index_month(query).data["final"] is True
    assert City.objects.get(pk=world.sp.pk).price_index_closed_through == "2026-10"
