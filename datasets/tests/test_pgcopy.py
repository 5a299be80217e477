"""PostgreSQL writes the big files (datasets/pgcopy.py): byte for byte what the portable path
(datasets.rows + orjson + csv, the path SQLite takes) writes."""

import csv
import datetime as dt
import io

import orjson
import pytest
from django.db import connection
from hypothesis import example, given, settings
from hypothesis import strategies as st

from beers.models import City, PriceIndexHistory
from beers.services import deal_create, venue_create
from datasets import pgcopy
from datasets.services import datasets_export

from .helpers import tree

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="COPY is PostgreSQL's"),
]


def _both(tmp_path, monkeypatch) -> tuple[dict, dict]:
    assert pgcopy.enabled()
    fast = tmp_path / "fast"
    datasets_export(directory=fast, progress=False)
    monkeypatch.setattr(pgcopy, "enabled", lambda: False)
    # the months the first export closed are computed again, not read back from it
    PriceIndexHistory.objects.all().delete()
    City.objects.update(price_index_closed_through="")
    portable = tmp_path / "portable"
    datasets_export(directory=portable, progress=False)
    return tree(fast), tree(portable)


def test_fast_path_writes_the_portable_paths_bytes(world, tmp_path, monkeypatch):
    # Text that needs quoting or escaping, an integral coordinate, attributes, an empty city.
    odd = venue_create(
        city=world.sp,
        name='Bar "Tab"\tBarra\\ , ; Ação',
        lat=-23.0,
        lng=-46.625,
        kind="bar",
        on_site=False,
        address="Rua A, 1\r\nfundos",
        attributes=["area_externa"],
    )
    deal_create(
        venue=odd,
        format=world.garrafa,
        beer=None,
        brand=world.brahma,
        units=3,
        packaging="balde",
        kind="combo",
        price_cents=3333,
        conditions='aspas " e \\ barra, \x01 controle; emoji 🍺',
        schedules=[{"days": [0, 6], "start": "18:00", "end": "24:00"}],
        valid_until=dt.date(2026, 12, 31),
        verified_at=dt.datetime(2026, 11, 20, 2, 59, 59, 999999, tzinfo=dt.UTC),
    )
    # the last date Python has, next to prices with no end date: still one label each
    deal_create(
        venue=odd,
        format=world.garrafa,
        beer=None,
        price_cents=1500,
        valid_until=dt.date.max,
        verified_at=dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC),
    )
    City.objects.create(
        slug="vazia",
        name="Vazia",
        state="RJ",
        timezone="America/Sao_Paulo",
        lat=-22.9,
        lng=-43.2,
        active=True,
    )
    fast, portable = _both(tmp_path, monkeypatch)
    assert fast.keys() == portable.keys()
    for name in fast:
        assert fast[name] == portable[name], name
    assert b'"items":[]' in fast["vazia/deals.json"]
    assert b'"Bar ""Tab""' in fast["sao-paulo/venues.csv"]


def test_fast_path_with_no_prices_at_all(db, tmp_path, monkeypatch):
    City.objects.create(
        slug="so-cidade",
        name="Só Cidade",
        state="SP",
        timezone="America/Sao_Paulo",
        lat=-23.5,
        lng=-46.6,
        active=True,
    )
    fast, portable = _both(tmp_path, monkeypatch)
    assert fast == portable


# PostgreSQL text holds no NUL and UTF-8 has no lone surrogates.
texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


@settings(max_examples=200, deadline=None)
@given(value=texts)
def test_strings_are_escaped_as_orjson_escapes_them(value):
    sql = pgcopy.json_object([("k", "%s", "text")])
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {sql}", [value])
        assert cursor.fetchone()[0].encode() == orjson.dumps({"k": value})


@settings(max_examples=200, deadline=None)
@given(value=st.floats(min_value=-180, max_value=180).filter(lambda x: x == 0 or abs(x) >= 1e-4))
def test_coordinates_are_written_as_python_writes_them(value):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {pgcopy._float('x')} FROM (SELECT %s::float8 AS x) t", [value])
        assert cursor.fetchone()[0] == repr(value)


def test_price_index_rows_are_the_portable_querys(world):
    from beers.selectors import price_index

    # a second check in October (local time) of the same price: the later one counts
    world.record_check(
        deal=world.deals.regular,
        source="submission",
        price_cents=1350,
        at=dt.datetime(2026, 10, 31, 2, 59, tzinfo=dt.UTC),
    )
    seen = 0
    for city in (world.sp, world.manaus):
        for start, end in [(None, None), price_index.month_bounds("2026-10", city.tz)]:
            fast = list(price_index._cell_counts_postgresql(city, start, end))
            portable = list(price_index._cell_counts_portable(city, start, end))
            assert sorted(fast, key=repr) == sorted(portable, key=repr)
            months = [(year, month) for year, month, *_ in fast]
            assert months == sorted(months)
            seen += sum(n for *_, scope, _, _, _, n in fast if scope == "city")
    # São Paulo 3 (+1 in October; not the torre of the depósito where people cannot drink),
    # Manaus 1 (30 September, local time)
    assert seen == 5
    october = price_index._cell_counts_postgresql(
        world.sp, *price_index.month_bounds("2026-10", world.sp.tz)
    )
    # the later of October's two checks, once in each scope the price belongs to
    assert {(scope, num, n) for _, _, scope, _, num, _, n in october} == {
        (scope, 1350 * 1000, 1) for scope in ("city", "format", "neighbourhood", "brand")
    }


def test_the_sql_follows_the_formats_names_and_refuses_a_missing_one():
    assert pgcopy._csv_line({"b": "2", "a": "1"}, ("a", "b")) == (
        "(COALESCE((1)::text, '') || ',' || COALESCE((2)::text, ''))"
    )
    with pytest.raises(ValueError, match="extra"):
        pgcopy._csv_line({"id": "x"}, ("id", "extra"))


@settings(max_examples=300, deadline=None)
@given(value=texts)
@example(value='a\x01\x01b\x02c\r\nd"e,f')
@example(value="\x01")
@example(value="\x02")
@example(value="")
def test_a_row_of_text_comes_back_as_csv_and_orjson_write_it(value):
    """One row carries a CSV line and a JSON item; whatever the text (quotes, commas, line
    ends, control characters), each comes back as its writer writes it."""
    line = pgcopy._csv_line({"a": pgcopy._csv_text("t.x"), "b": "t.n"}, ("a", "b"))
    item = pgcopy.json_object([("k", "t.x", "text")])
    got = []
    pgcopy._stream(
        f"SELECT 1 AS id, {line} AS line, {item} AS item FROM (SELECT %s::text AS x, 7 AS n) t",
        [value],
        ("line", "item"),
        "q.id",
        got.append,
    )
    written = io.StringIO()
    csv.writer(written, lineterminator="\r\n").writerow([value, 7])
    expected = written.getvalue().removesuffix("\r\n")
    assert got == [(expected, orjson.dumps({"k": value}).decode())]
    assert pgcopy.csv_cell(value) + ",7" == expected


def test_the_columns_written_unquoted_hold_only_values_that_need_no_quoting():
    """pgcopy writes kinds, packagings and statuses as they are: their CHECK constraints
    allow only these values, none of which a CSV cell would quote."""
    from beers.models import DealKind, DealStatus, Packaging, VenueKind

    for choices in (DealKind, DealStatus, Packaging, VenueKind):
        for value in choices.values:
            assert pgcopy.csv_cell(value) == value
