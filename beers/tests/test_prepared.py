"""Querysets compiled once per shape (beers/selectors/prepared.py) and the SQL they send."""

import datetime as dt
import json

import pytest
from django.db import connection
from django.utils import timezone

from beers.models import Deal
from beers.selectors import ranking
from beers.selectors.prepared import Prepared
from beers.selectors.queries import SearchQuery

from .factories import CityFactory, DealFactory, VenueFactory

pytestmark = pytest.mark.django_db

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL's prepared statements"
)


def _deals_between(shape, *, low, high, since, name=None):
    qs = Deal.objects.filter(price_cents__gte=low, price_cents__lte=high, verified_at__gte=since)
    if name is not None:
        qs = qs.filter(venue__name=name)
    return qs.order_by("price_cents", "id").values("id", "price_cents", "venue__name")[:shape]


@pytest.fixture
def deals():
    now = timezone.now()
    city = CityFactory()
    bars = [VenueFactory(city=city, name=n) for n in ("Bar A", "Bar B")]
    return [
        DealFactory(
            venue=bars[i % 2], price_cents=1000 + 100 * i, verified_at=now - dt.timedelta(days=i)
        )
        for i in range(8)
    ]


def test_later_calls_bind_their_own_values_to_the_same_shape(deals):
    prepared = Prepared(_deals_between)
    now = timezone.now()
    cases = [
        (10, {"low": 1000, "high": 1500, "since": now - dt.timedelta(days=30)}),
        (10, {"low": 1200, "high": 1800, "since": now - dt.timedelta(days=3, hours=1)}),
        (2, {"low": 0, "high": 99_999, "since": now - dt.timedelta(days=30)}),
        (10, {"low": 1000, "high": 1800, "since": now - dt.timedelta(days=30), "name": "Bar B"}),
        (10, {"low": 1100, "high": 1800, "since": now - dt.timedelta(days=30), "name": "Bar A"}),
    ]
    for shape, values in cases * 2:  # the second round runs every shape compiled already
        expected = list(_deals_between(shape, **values))
        assert prepared.rows(shape, **values) == expected
        assert expected  # each case selects something
    assert len({tuple(r["id"] for r in prepared.rows(s, **v)) for s, v in cases}) == len(cases)


def test_a_value_the_sql_changes_is_refused(deals):
    prepared = Prepared(
        lambda shape, name: Deal.objects.filter(venue__name__icontains=name).values("id")
    )
    with pytest.raises(TypeError, match="transformed"):
        prepared.rows("contains", name="Bar")


def test_a_value_the_sql_does_not_use_is_refused(deals):
    prepared = Prepared(
        lambda shape, low, unused: Deal.objects.filter(price_cents__gte=low).values("id")
    )
    with pytest.raises(TypeError, match="unused"):
        prepared.rows("low", low=1, unused=2)


def test_a_bool_belongs_in_the_shape(deals):
    prepared = Prepared(lambda shape, flag: Deal.objects.filter(venue__on_site=flag).values("id"))
    with pytest.raises(TypeError, match="shape"):
        prepared.rows("flag", flag=True)


@on_postgresql
def test_constants_are_literals_and_only_values_are_parameters(deals):
    city = deals[0].city
    ranking.search(SearchQuery(city=city.slug))
    today = timezone.now().astimezone(city.tz).date()
    shape = (False, None, 20, today, ranking.oldest_check(city, today))
    values = ("city_id", "city_name", "city_slug", "city_tz")
    compiled = ranking._search_rows._shapes[("default", shape, values)]
    assert compiled.sql.count("%s") == 5 and len(compiled.params) == 5  # city_id twice
    assert "'published'" in compiled.sql and f"'{today.isoformat()}'::date" in compiled.sql


@on_postgresql
def test_repeated_reads_run_as_prepared_generic_plans(deals):
    city = deals[0].city
    for _ in range(8):
        answer = ranking.search(SearchQuery(city=city.slug))
        assert answer.data["count"] == len(deals)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans + custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%%FROM \"beers_deal\" INNER JOIN%%'"
            " AND statement LIKE '%%LIMIT 20'"
        )
        plans = [row[0] for row in cursor.fetchall()]
    assert plans  # psycopg prepared it (after 5 runs); the plan is PostgreSQL's choice


@on_postgresql
def test_the_loose_index_scan_finds_the_distinct_schedules(deals):
    venue = deals[0].venue
    week = [0, 1, 2, 3, 4, 5, 6]
    sets = [
        [{"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"}],
        [{"days": week, "start": "22:00", "end": "02:00"}],
        [
            {"days": [5], "start": "18:00", "end": "24:00"},
            {"days": [6], "start": "12:00", "end": "15:00"},
        ],
    ]
    for i, schedules in enumerate(sets * 3):
        DealFactory(venue=venue, price_cents=2000 + i, schedules=schedules)
    DealFactory(
        venue=venue, schedules=[{"days": [0], "start": "09:00", "end": "10:00"}], status="suspended"
    )
    DealFactory(
        venue=venue,
        kind="open_bar",
        open_bar_minutes=60,
        schedules=[{"days": [0], "start": "11:00", "end": "12:00"}],
    )
    with connection.cursor() as cursor:
        cursor.execute(ranking._distinct_schedules_sql(), [venue.city_id, venue.city_id])
        found = sorted(row[0] for row in cursor.fetchall())
    distinct = ranking._city_schedules.rows("all", city_id=venue.city_id)

    def canonical(schedules):
        return json.dumps(schedules, sort_keys=True)

    assert sorted(canonical(json.loads(s)) for s in found) == sorted(
        canonical(r["schedules"]) for r in distinct
    )
    assert sorted(map(canonical, sets)) == sorted(canonical(json.loads(s)) for s in found)
