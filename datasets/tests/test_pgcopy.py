"""PostgreSQL writes the big files (datasets/pgcopy.py): byte for byte what the portable path
(datasets.rows + orjson + csv, the path SQLite takes) writes."""

import csv
import datetime as dt
import io

import numpy as np
import orjson
import pytest
from django.db import connection
from hypothesis import example, given, settings
from hypothesis import strategies as st

from beers.models import PRICE_MAX_CENTS, City, PriceIndexHistory, Venue
from beers.services import deal_create, venue_create
from datasets import patch, pgcopy
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


def test_fast_path_writes_the_portable_paths_bytes_for_the_demo_data(db, tmp_path, monkeypatch):
    """Every city of the demo data set (its servings, schedules, promos, open bars, disputed
    prices, conditions, bars without a bairro): the same tree either way."""
    from beers.demo import demo_load

    demo_load()
    fast, portable = _both(tmp_path, monkeypatch)
    assert fast.keys() == portable.keys()
    assert sum(name.endswith("deals.csv") for name in fast) >= 3
    for name in fast:
        assert fast[name] == portable[name], name


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


# --- the deals rows written by _dealrows -------------------------------------------------------


def _deals_both_ways(city, tmp_path) -> tuple[bytes, bytes]:
    """The city's deals.json and deals.csv as the fast path and as the portable path write
    them, concatenated."""
    from beers.models import Format
    from datasets.services import JsonWriter, _deals_portable

    formats = {f.id: f for f in Format.objects.all()}
    header = {"city": city.slug}
    out = []
    for name, write in (
        (
            "fast",
            lambda folder: pgcopy.write_deals(
                city, folder, lambda fh: JsonWriter(fh, header), formats
            ),
        ),
        (
            "portable",
            lambda folder: _deals_portable(city, folder, header, formats, lambda n=1: None),
        ),
    ):
        folder = tmp_path / name
        folder.mkdir(exist_ok=True)
        write(folder)
        out.append((folder / "deals.json").read_bytes() + (folder / "deals.csv").read_bytes())
    return out[0], out[1]


def _fresh_city() -> tuple[City, "Venue"]:
    """A city of one bar, made anew for each example (UTC−4, no summer time)."""
    Venue.objects.filter(city__slug="uma").delete()  # and their prices
    City.objects.filter(slug="uma").delete()
    city = City.objects.create(
        slug="uma",
        name="Uma",
        state="AM",
        timezone="America/Manaus",
        lat=-3.1,
        lng=-60.0,
        active=True,
    )
    return city, venue_create(city=city, name="Bar", lat=-3.1, lng=-60.0, kind="bar", on_site=True)


@settings(max_examples=150, deadline=None)
@given(value=texts)
@example(value='a\x01\x1fb\x7f\x02c\r\nd"e,f\\g\tπ🍺')
@example(value="\x00".replace("\x00", "\x08\x0c"))
def test_conditions_come_out_as_orjson_and_csv_write_them(value, tmp_path_factory):
    from beers.models import Format

    city, venue = _fresh_city()
    fmt, _ = Format.objects.get_or_create(
        code="garrafa_600",
        defaults={"type": "garrafa", "volume_ml": 600, "label_pt": "garrafa", "label_en": "bottle"},
    )
    deal_create(venue=venue, format=fmt, price_cents=990, conditions=value[:280])
    fast, portable = _deals_both_ways(city, tmp_path_factory.mktemp("rows"))
    assert fast == portable


@settings(max_examples=150, deadline=None)
@given(
    price=st.integers(1, PRICE_MAX_CENTS),
    units=st.integers(1, 50),
    volume=st.integers(1, 20_000),
    kind=st.sampled_from(["regular", "happy_hour", "combo", "open_bar"]),
    verified=st.datetimes(
        min_value=dt.datetime(1900, 1, 1),  # noqa: DTZ001 - hypothesis wants naive bounds
        max_value=dt.datetime(9998, 12, 31),  # noqa: DTZ001
        timezones=st.just(dt.UTC),
    ),
    extras=st.tuples(
        st.none() | st.integers(0, 30),
        st.none() | st.integers(0, 100_000),
        st.none() | st.integers(1, 1440),
    ),
)
@example(
    price=1,
    units=3,
    volume=1000,
    kind="regular",
    verified=dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC),
    extras=(None, None, None),
)
@example(
    price=999,
    units=1,
    volume=2000,
    kind="regular",
    verified=dt.datetime(2000, 1, 1, 3, 59, 59, 999999, tzinfo=dt.UTC),
    extras=(0, 0, None),
)
def test_numbers_and_instants_come_out_as_the_portable_path_writes_them(
    price, units, volume, kind, verified, extras, tmp_path_factory
):
    """Prices per litre, litres, reais, Unix seconds and local dates (Manaus, UTC−4) of any
    price, instants before 1970 and 2000 too."""
    from beers.models import Format

    city, venue = _fresh_city()
    fmt, _ = Format.objects.get_or_create(
        code=f"garrafa_{volume}",
        defaults={"type": "garrafa", "volume_ml": volume, "label_pt": "g", "label_en": "b"},
    )
    service, couvert, minutes = extras
    deal_create(
        venue=venue,
        format=fmt,
        price_cents=price,
        units=units,
        packaging="single" if units == 1 else "balde",
        kind=kind,
        open_bar_minutes=minutes if kind == "open_bar" else None,
        service_charge_pct=service,
        couvert_cents=couvert,
        verified_at=verified,
    )
    fast, portable = _deals_both_ways(city, tmp_path_factory.mktemp("rows"))
    assert fast == portable


def _tuple(*fields: bytes | None) -> bytes:
    """One tuple of COPY's binary format."""
    out = len(fields).to_bytes(2, "big")
    for field in fields:
        out += b"\xff\xff\xff\xff" if field is None else len(field).to_bytes(4, "big") + field
    return out


def _good_fields() -> list[bytes | None]:
    i4, i8 = (
        (lambda n: n.to_bytes(4, "big", signed=True)),
        (lambda n: n.to_bytes(8, "big", signed=True)),
    )
    return [
        i8(7),
        i8(3),
        None,
        None,
        i4(1),
        i4(1),
        b"regular",
        i4(1),
        i4(600),
        b"single",
        i4(990),
        None,
        None,
        None,
        b"",
        i8(0),
        i8(0),
        i4(0),
        i4(0),
        b"published",
        b"bar",
        None,
        i4(0),
    ]


TABLES = (
    [],
    [],
    [],
    [],
    [b',"format_code":"g","units":1,"packaging":"single"'],
    [b"g"],
    [b"g"],
    [b',"valid_from":null,"valid_until":null,"schedules":[]'],
    [b""],
    [b""],
    [b""],
)


def test_the_formatter_reads_whole_rows_and_leaves_a_part_for_the_next_block():
    from datasets import _dealrows

    row = _tuple(*_good_fields())
    items, lines, records, used = _dealrows.format(row + row[:-5], TABLES)
    assert used == len(row)
    assert items.startswith(b'{"id":7,"venue_id":3,"beer":null,"brand":null,"format_code":"g"')
    assert items.endswith(
        b',"created_at":946684800,"confirmations":0,"open_disputes":0,"status":"published"},\n'
    )
    assert (
        lines == b"7,3,bar,,,,g,g,1,0.6,single,regular,9.90,16.50,,,,,,,2000-01-01,0,published\r\n"
    )
    assert np.frombuffer(records, dtype=patch.FIELDS).tolist() == [(7, 3, len(items), len(lines))]
    # the trailer ends the rows
    assert _dealrows.format(row + b"\xff\xff", TABLES)[3] == len(row)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({0: None}, "column 0 came out NULL"),
        ({4: (9).to_bytes(4, "big")}, "label 9 out of range"),
        ({7: b"x"}, "not an integer"),
        ({15: b"\x00" * 4}, "not a timestamp"),
        ({8: (0).to_bytes(4, "big")}, "no volume"),
    ],
)
def test_the_formatter_refuses_a_row_it_cannot_write(change, message):
    from datasets import _dealrows

    fields = _good_fields()
    for at, value in change.items():
        fields[at] = value
    with pytest.raises(ValueError, match=message):
        _dealrows.format(_tuple(*fields), TABLES)
    with pytest.raises(ValueError, match="22 columns, 23 expected"):
        _dealrows.format(_tuple(*_good_fields()[:-1]), TABLES)
    with pytest.raises(ValueError, match="column 0: a length of -2"):
        _dealrows.format((23).to_bytes(2, "big") + b"\xff\xff\xff\xfe", TABLES)
