"""The export's fast path on PostgreSQL: the database reads, joins and sorts the rows of the
big files once, and they are written as they come.

deals.json and deals.csv: one COPY per city sends each price's columns in COPY's binary
format, and datasets/_dealrows.c (compiled at install) writes each row's JSON item and CSV
line from them, a block of about 1 MB of COPY data at a time, with the row's index record for
datasets.patch. What the database cannot know is labelled in Python once per distinct value
(serving labels, schedule texts and their JSON, beers, brands) and the query sends each
label's number. Measured on 1M prices, 2 cores (bench/export_bench.py): the deals files took
2.2 s against 7-9 s when PostgreSQL built each row's text with `||`; _dealrows itself 0.4 s.

The venue files: one query writes all four, each row carrying its CSV line and its JSON item
as text, built with `||` from literal keys and values (`to_json(text)` escapes strings the
way orjson does), each ending with ",\n"; the last separator is cut when the array is
closed. CSV cells are quoted as Python's csv module quotes them (_csv_text). The rows arrive
in chunks (libpq's chunked rows mode: flat memory, and unlike a server-side cursor the query
may use parallel workers).

The bytes are the same as the portable path's (datasets.rows + orjson + csv, used on
SQLite); datasets/tests/test_pgcopy.py holds the two paths to that.
"""

import contextlib
import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson
from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, F, QuerySet
from django.db.models.expressions import RawSQL

from beers import labels
from beers.dbcopy import stream_rows
from beers.models import Beer, Brand, City, Deal, Format, Venue
from beers.selectors.published import price_brand, published_deals

from . import patch, rows
from .models import DealRowCity, RowChange

try:
    from . import _dealrows
except ImportError:  # not built (no C compiler at install): the portable path writes the files
    _dealrows = None

# _dealrows is compiled from this source when the project is installed (pyproject.toml).
_DEALROWS_SOURCE = Path(__file__).with_name("_dealrows.c")
_CHUNK = 2000
_BUFFER = 1 << 20
_CRLF = "E'\\r\\n'"
_ITEM_END = "E',\\n'"  # the last one is cut when the array is closed
PROGRESS_EVERY = 10_000


# --- SQL builders ------------------------------------------------------------------------------


def literal(text: str) -> str:
    return "'" + text.replace("'", "''").replace("%", "%%") + "'"


def _float(value: str) -> str:
    """SQL: a float as Python's repr writes it in the range of coordinates (`-23.0`, not
    `-23`); below 1e-4 PostgreSQL writes an exponent (`1e-05`) where orjson does not."""
    return (
        f"(CASE WHEN ({value}) = trunc({value}) AND abs({value}) < 1e15 "
        f"THEN ({value})::text || '.0' ELSE ({value})::text END)"
    )


def _unix(value: str) -> str:
    """SQL: whole seconds since the epoch. date_part's float8 keeps microseconds exactly enough
    at these magnitudes (spacing 2.4e-7 s), so floor() never crosses a second wrongly."""
    return f"floor(date_part('epoch', {value}))::bigint"


def _fragment(fields: dict) -> str:
    """`,"key":value,…`: members of a JSON object as orjson writes them, to join in SQL."""
    return "," + orjson.dumps(fields).decode()[1:-1]


def _json_value(expr: str, kind: str) -> str:
    """SQL of the JSON text of one value (never NULL: `null`). Kinds: int (number), text
    (string), json (JSON text already), bool, float."""
    if kind == "int":
        value = f"({expr})::text"
    elif kind == "text":
        value = f"to_json(({expr})::text)::text"
    elif kind == "json":
        value = f"({expr})"
    elif kind == "bool":
        value = f"(CASE WHEN {expr} THEN 'true' WHEN NOT {expr} THEN 'false' END)"
    elif kind == "float":
        value = _float(expr)
    else:  # pragma: no cover - a programming error
        raise ValueError(kind)
    return f"COALESCE({value}, 'null')"


def json_object(fields: list[tuple[str, str, str]]) -> str:
    """SQL text of one compact JSON object, from (key, SQL expression, kind) in order, each
    value written row by row (see _json_value): its keys as orjson writes them, joined with
    `||` (cheaper than concat() in PostgreSQL: 0.9 against 1.4 s for 23 pieces on 1M rows)."""
    pieces = [
        f"{literal(('{' if i == 0 else ',') + orjson.dumps(key).decode() + ':')} || "
        f"({_json_value(expr, kind)})::text"
        for i, (key, expr, kind) in enumerate(fields)
    ]
    return "(" + " || ".join([*pieces, "'}'"]) + ")"


def _csv_text(column: str) -> str:
    """A CSV text cell of a column, as Python's csv module writes it (QUOTE_MINIMAL): quoted,
    its quotes doubled, when it holds a comma, a quote, CR or LF; NULL and '' write nothing.
    `column` is repeated: a column or a literal, never a placeholder."""
    return (
        f"""(CASE WHEN strpos({column}, ',') + strpos({column}, '"') """
        f"""+ strpos({column}, E'\\r') + strpos({column}, E'\\n') > 0 """
        f"""THEN '"' || replace(({column})::text, '"', '""') || '"' ELSE ({column})::text END)"""
    )


def csv_cell(text: str | None) -> str:
    """The CSV cell of a known string, quoted as _csv_text quotes it, to join from arrays."""
    if text is None:
        return ""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _in_order(sql_by_name: dict, names: tuple[str, ...]) -> list:
    """The SQL of each field or column in the format's own order (datasets.rows), refusing a
    format that gained or lost a name the SQL does not have."""
    if set(sql_by_name) != set(names):
        raise ValueError(f"SQL and format differ: {set(sql_by_name) ^ set(names)}")
    return [sql_by_name[name] for name in names]


def _json_fields(sql_by_key: dict[str, tuple[str, str]], keys: tuple[str, ...]) -> str:
    return json_object(
        [(key, *value) for key, value in zip(keys, _in_order(sql_by_key, keys), strict=True)]
    )


def _csv_line(sql_by_column: dict[str, str], columns: tuple[str, ...]) -> str:
    """SQL of one CSV line (without its CRLF) from each column's cell text, in the format's
    order; a NULL cell writes nothing. Text cells come quoted (_csv_text, csv_cell)."""
    cells = [f"COALESCE(({sql})::text, '')" for sql in _in_order(sql_by_column, columns)]
    return "(" + " || ',' || ".join(cells) + ")"


# --- copying -----------------------------------------------------------------------------------


def _rows(select_sql: str, params: list, columns: tuple[str, ...], order: str) -> Iterator[tuple]:
    """The rows of `SELECT columns … ORDER BY order` over `select_sql`, whose `columns` are
    text, as they come. Rows come in chunks (one message per chunk rather than per row, as
    COPY sends them): on 1M prices, receiving the deals' rows took 0.4 s of the client's CPU
    instead of 1.0 s, which the database's parallel workers share on small machines. Without
    chunked rows (libpq before 17) they come one by one."""
    sql = f"SELECT {', '.join(f'q.{c}' for c in columns)} FROM ({select_sql}) q ORDER BY {order}"
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL datestyle = 'ISO'")  # dates as text: YYYY-MM-DD
        yield from stream_rows(cursor, sql, params, size=_CHUNK)


def _stream(
    select_sql: str, params: list, columns: tuple[str, ...], order: str, handle, tick=None
) -> int:
    """Hand each of _rows's rows to `handle`; returns the number of rows."""
    count = 0
    with contextlib.closing(_rows(select_sql, params, columns, order)) as rows_:
        for row in rows_:
            handle(row)
            count += 1
            if tick is not None and count % PROGRESS_EVERY == 0:
                tick(PROGRESS_EVERY)
    if tick is not None:
        tick(count % PROGRESS_EVERY)
    return count


class _Files:
    """One JSON envelope's `items` and its CSV twin, written row by row. With `index` (a
    patch.RowIndex), each row's id, bar and lengths are noted, to patch the files next time."""

    def __init__(
        self,
        folder,
        stem: str,
        header_writer_factory,
        csv_columns: tuple[str, ...],
        index: patch.RowIndex | None = None,
    ):
        self.paths = (folder / f"{stem}.json", folder / f"{stem}.csv")
        for path in self.paths:  # a new file, never one a kept copy links to (datasets.patch)
            path.unlink(missing_ok=True)
        self.json = open(self.paths[0], "wb", buffering=_BUFFER)  # noqa: SIM115
        self.out = header_writer_factory(self.json)
        self.out.begin("items")
        self.json.write(b"\n")
        self.csv = open(self.paths[1], "wb", buffering=_BUFFER)  # noqa: SIM115
        self.csv.write((",".join(csv_columns) + "\r\n").encode())
        self.json_start, self.csv_start = self.json.tell(), self.csv.tell()
        self.json_end = self.json_start
        self.index = index
        self.count = 0

    def add(self, line: bytes, item: bytes) -> tuple[int, int]:
        """A CSV line ending in CRLF and a JSON item ending in ",\n"; returns their lengths in
        bytes (item, line)."""
        self.csv.write(line)
        self.json.write(item)
        self.count += 1
        return len(item), len(line)

    def add_row(self, deal_id: int, venue: int, line: bytes, item: bytes) -> None:
        """A row, noted in the index."""
        self.index.add(deal_id, venue, *self.add(line, item))

    def add_block(self, items: bytes, lines: bytes, records: np.ndarray) -> None:
        """Rows written together (_blocks), with their index records."""
        self.json.write(items)
        self.csv.write(lines)
        if self.index is not None:
            self.index.add_records(records)
        self.count += len(records)

    def copy(self, items, lines, records) -> None:
        """Rows as they were written before (datasets.patch), with their index records."""
        self.json.write(items)
        self.csv.write(lines)
        self.index.add_records(records)
        self.count += len(records)

    def abandon(self) -> None:
        """Close both files as they are (incomplete: the export failed)."""
        self.json.close()
        self.csv.close()
        if self.index is not None:
            self.index.abandon()

    def close(self) -> int:
        fh = self.json
        fh.seek(fh.tell() - (2 if self.count else 1))  # the last ",\n", or the "\n" of none
        fh.truncate()
        self.json_end = fh.tell()
        fh.write(b"\n]" if self.count else b"]")
        self.out.close()
        fh.close()
        self.csv.close()
        if self.index is not None:
            self.index.close()
        return self.count

    def meta(self) -> dict:
        """Where the rows are, for the index of a kept copy."""
        return {
            "count": self.count,
            "json_start": self.json_start,
            "json_end": self.json_end,
            "csv_start": self.csv_start,
        }


def _inner(qs: QuerySet) -> tuple[str, list]:
    sql, params = qs.order_by().query.sql_with_params()
    return sql, list(params)


# --- deals -------------------------------------------------------------------------------------


def _deal_columns(city: City, deals: QuerySet | None = None) -> QuerySet:
    """The columns the deals rows are made of, of the city's published prices (or `deals`)."""
    deals = published_deals(city=city) if deals is None else deals
    return deals.values(
        x_id=F("id"),
        x_venue=F("venue_id"),
        x_beer=F("beer__slug"),
        x_brand=price_brand("slug"),
        x_format=F("format_id"),
        x_units=F("units"),
        x_volume=F("volume_ml"),
        x_packaging=F("packaging"),
        x_kind=F("kind"),
        x_price=F("price_cents"),
        x_open_bar=F("open_bar_minutes"),
        x_service=F("service_charge_pct"),
        x_couvert=F("couvert_cents"),
        x_conditions=F("conditions"),
        x_from=F("valid_from"),
        x_until=F("valid_until"),
        x_schedules=F("schedules"),
        x_verified=F("verified_at"),
        x_created=F("created_at"),
        x_confirmations=F("confirmations"),
        x_disputes=F("open_disputes"),
        x_status=F("status"),
        x_venue_slug=F("venue__slug"),
        x_hood=F("venue__neighbourhood__slug"),
    )


def _digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:32]


@functools.cache
def _label_sources() -> str:
    """A digest of what Python labels the deals with (beers.labels, datasets.rows, this module,
    which builds the labels' arrays, and the translation catalogues): rows written before
    they changed are written afresh."""
    paths = [Path(labels.__file__), Path(rows.__file__), Path(__file__), _DEALROWS_SOURCE]
    for folder in settings.LOCALE_PATHS:
        paths += sorted(Path(folder).glob("*/LC_MESSAGES/*.mo"))
    return _digest(*(hashlib.sha256(path.read_bytes()).hexdigest() for path in paths))


# The labels of the prices, written once per distinct value (_labels): the query joins them
# over arrays and sends each label's number (WITH ORDINALITY, 1-based), _dealrows writes its
# text. Every price finds its labels (they are read from the same prices, in the same
# snapshot), yet the joins are LEFT JOINs: an inner join on a jsonb equality with a function
# scan made PostgreSQL guess 25 rows out of 1M and plan no parallel workers.
_LABEL_JOINS = (
    "LEFT JOIN unnest(%s::bigint[], %s::int[], %s::text[]) WITH ORDINALITY "
    "AS s(format_id, units, packaging, n) "
    "ON s.format_id = d.x_format AND s.units = d.x_units AND s.packaging = d.x_packaging "
    "LEFT JOIN unnest(%s::jsonb[], %s::text[]::date[], %s::text[]::date[]) WITH ORDINALITY "
    "AS w(schedules, valid_from, valid_until, n) "
    "ON w.schedules = d.x_schedules "
    "AND w.valid_from = COALESCE(d.x_from, 'infinity'::date) "
    "AND w.valid_until = COALESCE(d.x_until, 'infinity'::date) "
    "LEFT JOIN unnest(%s::text[]) WITH ORDINALITY AS bj(slug, n) ON bj.slug = d.x_beer "
    "LEFT JOIN unnest(%s::text[]) WITH ORDINALITY AS rj(slug, n) ON rj.slug = d.x_brand"
)


def _row_columns(city: City) -> tuple[str, ...]:
    """The columns _dealrows reads, in its order (C_ID … C_VERIFIED_ON in _dealrows.c), over
    the price's columns (`d`) and the label joins, typed as it reads them in binary."""
    return (
        "d.x_id::int8",
        "d.x_venue::int8",
        "bj.n::int4",
        "rj.n::int4",
        "s.n::int4",
        "w.n::int4",
        "d.x_kind::text",
        "d.x_units::int4",
        "d.x_volume::int4",
        "d.x_packaging::text",
        "d.x_price::int4",
        "d.x_open_bar::int4",
        "d.x_service::int4",
        "d.x_couvert::int4",
        "d.x_conditions::text",
        "d.x_verified::timestamptz",
        "d.x_created::timestamptz",
        "d.x_confirmations::int4",
        "d.x_disputes::int4",
        "d.x_status::text",
        "d.x_venue_slug::text",
        "d.x_hood::text",
        # the zone written into the SQL, so the recipe changes with it
        f"(d.x_verified AT TIME ZONE {literal(city.timezone)})::date",
    )


def _labels(deals: QuerySet, formats: dict[int, Format]) -> tuple[list, tuple]:
    """The arrays of _LABEL_JOINS for these prices, and the tables of their labels' text
    (bytes, in _dealrows's T_* order): each serving, validity and schedule, beer and brand
    labelled once."""
    # One scan for both: the distinct (serving, schedule) pairs are few.
    pairs = (
        deals.values_list(
            "format_id", "units", "packaging", "schedules", "valid_from", "valid_until"
        )
        .order_by()
        .distinct()
    )
    servings: dict[tuple, None] = {}
    whens: dict[tuple, tuple] = {}
    for format_id, units, packaging, schedules, valid_from, valid_until in pairs:
        servings[(format_id, units, packaging)] = None
        key = orjson.dumps(schedules).decode()
        whens.setdefault((key, valid_from, valid_until), (schedules, valid_from, valid_until))
    beers = sorted(Beer.objects.values_list("slug", flat=True))
    brands = sorted(Brand.objects.values_list("slug", flat=True))

    def day(value) -> str:
        # no date: 'infinity', which no real date equals (a NULL would never join)
        return value.isoformat() if value else "infinity"

    params = [
        [format_id for format_id, _, _ in servings],
        [units for _, units, _ in servings],
        [packaging for _, _, packaging in servings],
        [key for key, _, _ in whens],
        [day(valid_from) for _, valid_from, _ in whens],
        [day(valid_until) for _, _, valid_until in whens],
        beers,
        brands,
    ]

    def iso(value) -> str | None:
        return value.isoformat() if value else None

    tables = (
        [_fragment({"beer": slug}) for slug in beers],
        [csv_cell(slug) for slug in beers],
        [_fragment({"brand": slug}) for slug in brands],
        [csv_cell(slug) for slug in brands],
        [
            _fragment({"format_code": formats[f].code, "units": units, "packaging": packaging})
            for f, units, packaging in servings
        ],
        [csv_cell(formats[f].code) for f, _, _ in servings],
        [
            csv_cell(
                labels.serving_label(fmt=formats[f], units=units, packaging=packaging, lang="pt-BR")
            )
            for f, units, packaging in servings
        ],
        [
            _fragment(
                {
                    "valid_from": iso(valid_from),
                    "valid_until": iso(valid_until),
                    "schedules": rows.schedules_item(schedules),
                }
            )
            for schedules, valid_from, valid_until in whens.values()
        ],
        [
            csv_cell(labels.schedule_text(schedules or [], "pt-BR", valid_from, valid_until))
            for schedules, valid_from, valid_until in whens.values()
        ],
        [iso(valid_from) or "" for _, valid_from, _ in whens.values()],
        [iso(valid_until) or "" for _, _, valid_until in whens.values()],
    )
    return params, tuple([text.encode() for text in table] for table in tables)


class DealSql:
    """The query of a city's deals rows for _dealrows (its columns over `inner`, as `d`, and
    the label joins), and the recipe of the export rows they make (datasets.models)."""

    def __init__(self, city: City, formats: dict[int, Format]):
        self.city = city
        self.formats = formats
        self.inner, self.inner_params = _inner(_deal_columns(city))
        self.columns = ", ".join(_row_columns(city))
        # The SQL (the zone written in it), the labels' code and the formats they name:
        # export rows made by other ones are stale (see datasets.models).
        self.recipe = _digest(
            # the columns' own query too: which prices, and what each column reads
            self.inner,
            repr(self.inner_params),
            _LABEL_JOINS,
            self.columns,
            _label_sources(),
            repr(
                sorted(
                    (f.id, f.code, f.type, f.volume_ml, f.label_pt, f.label_en)
                    for f in formats.values()
                )
            ),
        )

    def formatted(self, deals: QuerySet | None = None) -> tuple[str, list, tuple]:
        """COPY of every price's columns (or of `deals`, the city's published prices
        filtered) in id order, its parameters and the label tables (one scan of the prices,
        to label them)."""
        if deals is None:
            deals, inner, inner_params = (
                published_deals(city=self.city),
                self.inner,
                self.inner_params,
            )
        else:
            inner, inner_params = _inner(_deal_columns(self.city, deals))
        params, tables = _labels(deals, self.formats)
        return (
            f"COPY (SELECT {self.columns} FROM ({inner}) d {_LABEL_JOINS} ORDER BY d.x_id) "
            "TO STDOUT (FORMAT binary)",
            [*inner_params, *params],
            tables,
        )

    def changed(self, ids: np.ndarray) -> tuple[str, list, tuple]:
        """`formatted` of the city's published prices among `ids`. The ids go as one array
        constant: the planner reads those prices by their key, or, where it expects few
        prices in all (its figures not yet updated after a bulk load), scans them and looks
        each one up in a hash of the ids. Read from CHANGED into an array at run time, the
        ids were searched one by one for each price scanned: 23 s for 50k changed prices of
        a city of 50k, against 2.2 s here."""
        return self.formatted(
            published_deals(city=self.city).filter(
                RawSQL(
                    f"{Deal._meta.db_table}.id = ANY(%s::bigint[])",
                    [ids.tolist()],
                    output_field=BooleanField(),
                )
            )
        )


_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


def _blocks(copy_sql: str, params: list, tables: tuple) -> Iterator[tuple[bytes, bytes, bytes]]:
    """The deals rows of a COPY of DealSql, a block at a time (about _BUFFER of its data):
    their JSON items, CSV lines and index records (patch.RECORD), written by _dealrows."""
    with connection.cursor() as cursor, cursor.cursor.copy(copy_sql, params) as copy:
        pending = bytearray()
        started = False
        for data in copy:
            pending += data
            if not started:
                if len(pending) < 19:
                    continue
                if pending[:11] != _COPY_SIGNATURE:  # pragma: no cover - not PostgreSQL's
                    raise ValueError("not a binary COPY")
                extension = int.from_bytes(pending[15:19], "big")
                if len(pending) < 19 + extension:
                    continue
                del pending[: 19 + extension]
                started = True
            if len(pending) >= _BUFFER:
                items, lines, records, used = _dealrows.format(pending, tables)
                del pending[:used]
                yield items, lines, records
        items, lines, records, used = _dealrows.format(pending, tables)
        if bytes(pending[used:]) != b"\xff\xff":  # the trailer, after whole rows only
            raise ValueError("the deals' COPY ended inside a row")
        yield items, lines, records


def _deal_rows(copy_sql: str, params: list, tables: tuple) -> Iterator[tuple]:
    """The rows of _blocks one by one: (id, bar, CSV line, JSON item), the last two bytes."""
    for items, lines, records in _blocks(copy_sql, params, tables):
        index = np.frombuffer(records, dtype=patch.FIELDS)
        json_at = np.concatenate(([0], np.cumsum(index["json"])))
        csv_at = np.concatenate(([0], np.cumsum(index["csv"])))
        for i, (deal_id, venue, _, _) in enumerate(index.tolist()):
            yield (
                deal_id,
                venue,
                lines[csv_at[i] : csv_at[i + 1]],
                items[json_at[i] : json_at[i + 1]],
            )


# The prices the noted changes concern, found by refresh_rows in the export's snapshot.
CHANGED = "pg_temp.breja_changed_prices"


def _changed_prices(changes: str) -> str:
    """SQL of the ids of the prices the noted changes concern: changed prices, and the prices
    of changed bars, of bars in changed bairros, of changed beers and brands (a price's own
    brand or its beer's), as they are in this snapshot. Each set of ids drives an index scan
    (an array; an IN over the changes may read every price)."""
    deal, venue, beer = Deal._meta.db_table, Venue._meta.db_table, Beer._meta.db_table

    def ids(kind: str) -> str:
        return f"ARRAY(SELECT row_id FROM {changes} WHERE kind = '{kind}')"

    return " UNION ".join(
        [
            f"SELECT row_id AS deal_id FROM {changes} WHERE kind = 'deal'",
            f"SELECT id FROM {deal} WHERE venue_id = ANY({ids('venue')})",
            f"SELECT id FROM {deal} WHERE venue_id = ANY(ARRAY("
            f"SELECT id FROM {venue} WHERE neighbourhood_id = ANY({ids('neighbourhood')})))",
            f"SELECT id FROM {deal} WHERE beer_id = ANY({ids('beer')})",
            f"SELECT id FROM {deal} WHERE brand_id = ANY({ids('brand')})",
            f"SELECT id FROM {deal} WHERE beer_id = ANY(ARRAY("
            f"SELECT id FROM {beer} WHERE brand_id = ANY({ids('brand')})))",
        ]
    )


# More changes than this since the last export (an import, a city's prices deleted) and
# every city is formatted whole, rather than each changed price looked up by its id. The
# triggers (migration 0004) note a statement changing more rows than this as one change.
BULK_CHANGES = 50_000


def forget_rows() -> None:
    """Drop the cities' rows state and the changes noted for them: an export that keeps no
    copies (DATASETS_COPY off) leaves none that could be patched wrongly later."""
    with connection.cursor() as cursor:
        for model in (RowChange, DealRowCity):
            cursor.execute(f"DELETE FROM {model._meta.db_table}")


@dataclass
class Refreshed:
    """What refresh_rows decided: each city's rows token before (None: formatted whole) and
    after, and the ids of the prices changed since the last export (sorted; the cities
    patched format only these again)."""

    tokens: dict[int, tuple[str | None, str]]
    changed: np.ndarray


def refresh_rows(cities: list[City], formats: dict[int, Format], tick=None) -> Refreshed:
    """Find, in the export's snapshot, what changed since the last export, and which cities'
    last files can be patched (datasets.patch) rather than formatted whole. Runs inside the
    export's own transaction (snapshot.export_snapshot, REPEATABLE READ, one export at a
    time): it sees the changes committed before its snapshot, and forgets only those (a
    change committed later waits for the next export). The prices a changed bar, bairro,
    beer or brand concerns are those of the snapshot. A city whose recipe differs, or that
    was not exported the last time, is formatted whole, and so is every city after more than
    BULK_CHANGES changes. `tick(1)` after each city. A city's rows token changes whenever its
    rows may have."""
    state, changes = DealRowCity._meta.db_table, RowChange._meta.db_table
    ids = [city.id for city in cities]
    tokens: dict[int, tuple[str | None, str]] = {}
    changed = np.zeros(0, dtype=np.int64)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), bool_or(kind = 'bulk') FROM {changes}")
        noted, bulk_statement = cursor.fetchone()
        # Many changes (an import, a city's prices deleted; a statement of more than
        # BULK_CHANGES rows notes one 'bulk' change, migration 0004): every city is formatted
        # whole, rather than each changed price looked up by its id.
        bulk = noted > BULK_CHANGES or bool(bulk_statement)
        if noted and not bulk:
            cursor.execute(
                f"CREATE TEMPORARY TABLE {CHANGED.split('.')[1]} ON COMMIT DROP AS "
                f"{_changed_prices(changes)}"
            )
            cursor.execute(f"SELECT deal_id FROM {CHANGED} ORDER BY 1")
            changed = np.array([deal_id for (deal_id,) in cursor.fetchall()], dtype=np.int64)
            cursor.execute(f"DROP TABLE {CHANGED}")
            bulk = len(changed) > BULK_CHANGES
        # Cities not exported now are forgotten: their changes are not followed meanwhile.
        cursor.execute(f"DELETE FROM {state} WHERE NOT city_id = ANY(%s)", [ids])
        cursor.execute(f"SELECT city_id, recipe, token FROM {state}")
        known = {city_id: (recipe, token) for city_id, recipe, token in cursor.fetchall()}
        for city in cities:
            recipe = DealSql(city, formats).recipe
            old_recipe, old_token = known.get(city.id, (None, None))
            if old_recipe == recipe and not bulk:
                token = patch.new_token() if noted else old_token
                tokens[city.id] = (old_token, token)
            else:
                token = patch.new_token()
                tokens[city.id] = (None, token)
            if token != old_token:
                cursor.execute(
                    f"INSERT INTO {state} (city_id, recipe, token) VALUES (%s, %s, %s) "
                    "ON CONFLICT (city_id) DO UPDATE SET recipe = EXCLUDED.recipe, "
                    "token = EXCLUDED.token",
                    [city.id, recipe, token],
                )
            if tick is not None:
                tick(1)
        if noted:
            cursor.execute(f"DELETE FROM {changes}")  # the changes this snapshot sees
        if bulk:
            changed = np.zeros(0, dtype=np.int64)
    return Refreshed(tokens=tokens, changed=changed)


def write_deals(
    city: City,
    folder,
    header_writer_factory,
    formats,
    tick=None,
    *,
    kept: patch.Kept | None = None,
) -> tuple[int, set[int]]:
    """`deals.json` and `deals.csv` of a city, from PostgreSQL's COPY of its prices' columns
    formatted by _dealrows. Returns how many prices, and the ids of their bars. With `kept`
    (the export's own transaction, after refresh_rows): the last export's copy patched with
    the changed prices' rows when it is still good (datasets.patch), or every row formatted;
    either way kept for the next export."""
    sql = DealSql(city, formats)
    index = None
    if kept is not None:
        copy = kept.start(city.id)
        index = patch.RowIndex(copy)
    files = _Files(folder, "deals", header_writer_factory, rows.DEALS_CSV_COLUMNS, index)
    venues: set[int] = set()
    base = kept.base(city.id) if kept is not None else None
    try:
        if base is not None:
            venues, formatted = _patch(sql, base, kept.changed, files, tick)
        else:
            formatted = 0
            for items, lines, records in _blocks(*sql.formatted()):
                index_records = np.frombuffer(records, dtype=patch.FIELDS)
                files.add_block(items, lines, index_records)
                venues.update(np.unique(index_records["venue"]).tolist())
                formatted += len(index_records)
                if tick is not None:
                    tick(len(index_records))
    except BaseException:
        files.abandon()
        raise
    count = files.close()
    if kept is not None:
        kept.formatted[city.slug] = formatted
        kept.keep(city.id, copy, files.paths, files.meta())
    return count, venues


def _patch(
    sql: DealSql, base: patch.Base, changed: np.ndarray, files: _Files, tick
) -> tuple[set[int], int]:
    """The files patched from `base`: only the changed prices' rows are formatted, as they
    come in id order. Returns the ids of the bars written and how many rows were formatted."""
    formatted = 0

    def counted(rows_):
        nonlocal formatted
        for row in rows_:
            formatted += 1
            yield row

    if not len(changed):  # nothing changed since: no query
        return patch.apply(base, changed, iter(()), files, tick), 0
    with contextlib.closing(_deal_rows(*sql.changed(changed))) as new:
        venues = patch.apply(base, changed, counted(new), files, tick)
    return venues, formatted


# --- venues ------------------------------------------------------------------------------------


def _attributes(qs: QuerySet) -> tuple[str, list]:
    keys, as_json, as_csv = [], [], []
    for attributes in qs.order_by().values_list("attributes", flat=True).distinct():
        keys.append(orjson.dumps(attributes).decode())
        items = list(attributes or [])
        as_json.append(orjson.dumps(items).decode())
        as_csv.append(csv_cell("|".join(items)))
    sql = (
        "LEFT JOIN unnest(%s::jsonb[], %s::text[], %s::text[]) AS a(attributes, json, csv) "
        "ON a.attributes = v.x_attributes"
    )
    return sql, [keys, as_json, as_csv]


def write_venues(city: City, folder, header_writer_factory, listed: set[int]) -> tuple[int, int]:
    """`venues-all.json`/`.csv` (every bar of the city) and `venues.json`/`.csv` (the bars
    whose ids are `listed`), written by PostgreSQL from one query. Returns their counts
    (venues, venues-all)."""
    qs = Venue.objects.filter(city=city)
    columns = qs.values(
        x_id=F("id"),
        x_slug=F("slug"),
        x_name=F("name"),
        x_kind=F("kind"),
        x_on_site=F("on_site"),
        x_hood=F("neighbourhood__slug"),
        x_address=F("address"),
        x_lat=F("lat"),
        x_lng=F("lng"),
        x_instagram=F("instagram"),
        x_hours=F("opening_hours"),
        x_attributes=F("attributes"),
        x_status=F("status"),
        x_created=F("created_at"),
    )
    inner, inner_params = _inner(columns)
    joins, join_params = _attributes(qs)
    item = _json_fields(
        {
            "id": ("v.x_id", "int"),
            "slug": ("v.x_slug", "text"),
            "name": ("v.x_name", "text"),
            "kind": ("v.x_kind", "text"),
            "on_site": ("v.x_on_site", "bool"),
            "neighbourhood": ("v.x_hood", "text"),
            "address": ("NULLIF(v.x_address, '')", "text"),
            "lat": ("v.x_lat", "float"),
            "lng": ("v.x_lng", "float"),
            "instagram": ("NULLIF(v.x_instagram, '')", "text"),
            "opening_hours": ("NULLIF(v.x_hours, '')", "text"),
            "attributes": ("a.json", "json"),
            "status": ("v.x_status", "text"),
            "created_at": (_unix("v.x_created"), "int"),
        },
        rows.VENUE_KEYS,
    )
    base = f"{settings.SITE_URL}/{city.slug}/"
    line = _csv_line(
        {
            "id": "v.x_id",
            "slug": _csv_text("v.x_slug"),
            "name": _csv_text("v.x_name"),
            "kind": "v.x_kind",
            "on_site": "(CASE WHEN v.x_on_site THEN 'true' WHEN NOT v.x_on_site THEN 'false' END)",
            "neighbourhood": _csv_text("v.x_hood"),
            "address": _csv_text("v.x_address"),
            "lat": _float("v.x_lat"),
            "lng": _float("v.x_lng"),
            "instagram": _csv_text("v.x_instagram"),
            "opening_hours": _csv_text("v.x_hours"),
            "attributes": "a.csv",
            "url": _csv_text(f"{literal(base)} || v.x_slug"),
        },
        rows.VENUES_CSV_COLUMNS,
    )
    select = (
        f"SELECT v.x_id AS id, {line} || {_CRLF} AS line, "
        f"{item} || {_ITEM_END} AS item FROM ({inner}) v {joins}"
    )
    every = _Files(folder, "venues-all", header_writer_factory, rows.VENUES_CSV_COLUMNS)
    with_price = _Files(folder, "venues", header_writer_factory, rows.VENUES_CSV_COLUMNS)

    def add(row: tuple[int, str, str]) -> None:
        venue, line, item = row
        if item is None or line is None:  # a label join missed: a NULL piece nulls the row
            raise ValueError(f"venues: row {every.count + 1} came out NULL")
        line_bytes, item_bytes = line.encode(), item.encode()
        every.add(line_bytes, item_bytes)
        if venue in listed:
            with_price.add(line_bytes, item_bytes)

    try:
        _stream(select, inner_params + join_params, ("id", "line", "item"), "q.id", add)
    except BaseException:
        with_price.abandon()
        every.abandon()
        raise
    return with_price.close(), every.close()


def enabled() -> bool:
    """The fast path runs on PostgreSQL unless DATASETS_COPY is off or _dealrows was not built
    (the portable path then)."""
    return connection.vendor == "postgresql" and settings.DATASETS_COPY and _dealrows is not None
