"""The export's fast path on PostgreSQL: the database writes the rows of the big files.

One query per city writes both `deals.json` and `deals.csv`, and one more the four venue
files: each row carries its CSV line and its JSON item as text, ready to write, so the rows
are read, joined and sorted once and Python only hands strings to files. The rows arrive in
chunks (libpq's chunked rows mode: flat memory, and unlike a server-side cursor the query may
use parallel workers). The bytes are the same as the portable path's (datasets.rows + orjson +
csv, used on SQLite); datasets/tests/test_pgcopy.py holds the two paths to that. What the
database cannot know is labelled in Python once per distinct value (serving labels, schedule
texts and their JSON, attributes) and joined from arrays.

JSON items are built with `||` from literal keys and values (`to_json(text)` escapes strings
the way orjson does; strings that repeat, as servings, schedules, beers and brands, come joined
with their JSON written once by orjson), each ending with ",\n"; the last separator is cut when
the array is closed. CSV cells are quoted as Python's csv module quotes them (_csv_text).
Measured on 1M prices, 2 cores: `||` costs less than `concat()` (0.9 against 1.4 s for 23
pieces on 1M rows), and the chunks took the client's CPU from 3.1 to 1.0 s.
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
from beers.models import RANKED_STATUSES, Beer, Brand, City, Deal, DealKind, Format, Venue
from beers.selectors.published import price_brand, published_deals

from . import patch, rows
from .models import DealRowCity, RowChange

_CHUNK = 2000
_BUFFER = 1 << 20
_CRLF = "E'\\r\\n'"
_ITEM_END = "E',\\n'"  # the last one is cut when the array is closed
PROGRESS_EVERY = 10_000


# --- SQL builders ------------------------------------------------------------------------------


def literal(text: str) -> str:
    return "'" + text.replace("'", "''").replace("%", "%%") + "'"


def _brl(cents: str) -> str:
    """SQL: integer cents as reais, `rows.brl`'s text (NULL stays NULL). Amounts are never
    negative here (CHECK constraints on prices and couvert; so is a price per litre)."""
    return f"(({cents}) / 100)::text || '.' || right((100 + ({cents}) %% 100)::text, 2)"


def _float(value: str) -> str:
    """SQL: a float as Python's repr writes it in the range of coordinates (`-23.0`, not
    `-23`); below 1e-4 PostgreSQL writes an exponent (`1e-05`) where orjson does not."""
    return (
        f"(CASE WHEN ({value}) = trunc({value}) AND abs({value}) < 1e15 "
        f"THEN ({value})::text || '.0' ELSE ({value})::text END)"
    )


def _date(value: str) -> str:
    """SQL: a date as YYYY-MM-DD (_stream sets DateStyle ISO for the transaction)."""
    return f"({value})::text"


def _unix(value: str) -> str:
    """SQL: whole seconds since the epoch. date_part's float8 keeps microseconds exactly enough
    at these magnitudes (spacing 2.4e-7 s), so floor() never crosses a second wrongly."""
    return f"floor(date_part('epoch', {value}))::bigint"


def _fragment(fields: dict) -> str:
    """`,"key":value,…`: members of a JSON object as orjson writes them, to join in SQL."""
    return "," + orjson.dumps(fields).decode()[1:-1]


def _json_pieces(pieces: list[tuple[tuple[str, ...], str]], keys: tuple[str, ...]) -> str:
    """SQL of one compact JSON object from pieces (the keys a piece writes, the SQL of its
    text: `,"key":value` for each, `{"key":value` for the first member), refusing pieces out of
    the format's order (datasets.rows)."""
    written = tuple(key for piece_keys, _ in pieces for key in piece_keys)
    if written != keys:
        raise ValueError(f"SQL and format differ: {written} != {keys}")
    if not pieces[0][1].startswith("'{"):  # pragma: no cover - a programming error
        raise ValueError("the first piece must be a _member(..., first=True)")
    return "(" + " || ".join([*(sql for _, sql in pieces), "'}'"]) + ")"


def _member(key: str, value_sql: str, *, first: bool = False) -> tuple[tuple[str, ...], str]:
    """A piece of one member whose value is JSON text (never NULL); the first member opens
    the object."""
    opening = ("{" if first else ",") + orjson.dumps(key).decode() + ":"
    return (key,), f"{literal(opening)} || ({value_sql})::text"


def _choice(key: str, column: str, values) -> tuple[tuple[str, ...], str]:
    """A member whose value is one of a few known strings: their JSON, written once."""
    cases = " ".join(f"WHEN {literal(v)} THEN {literal(_fragment({key: v}))}" for v in values)
    return (key,), f"(CASE {column} {cases} END)"


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
    value written row by row (see _json_value)."""
    return _json_pieces(
        [
            _member(key, _json_value(expr, kind), first=i == 0)
            for i, (key, expr, kind) in enumerate(fields)
        ],
        tuple(key for key, _, _ in fields),
    )


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

    def add(self, line: str, item: str) -> tuple[int, int]:
        """A CSV line ending in CRLF and a JSON item ending in ",\n"; returns their lengths in
        bytes (item, line)."""
        if item is None or line is None:  # a label join missed: a NULL piece nulls the row
            raise ValueError(f"{self.json.name}: row {self.count + 1} came out NULL")
        line_bytes, item_bytes = line.encode(), item.encode()
        self.csv.write(line_bytes)
        self.json.write(item_bytes)
        self.count += 1
        return len(item_bytes), len(line_bytes)

    def add_row(self, deal_id: int, venue: int, line: str, item: str) -> None:
        """A row, noted in the index."""
        self.index.add(deal_id, venue, *self.add(line, item))

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
    paths = [Path(labels.__file__), Path(rows.__file__), Path(__file__)]
    for folder in settings.LOCALE_PATHS:
        paths += sorted(Path(folder).glob("*/LC_MESSAGES/*.mo"))
    return _digest(*(hashlib.sha256(path.read_bytes()).hexdigest() for path in paths))


# The labels joined to each price, over arrays (_label_params). Every price finds its labels
# (they are read from the same prices, in the same snapshot), yet the joins are LEFT JOINs: an
# inner join on a jsonb equality with a function scan made PostgreSQL guess 25 rows out of 1M,
# plan no parallel workers and take 4.1 s for the deals' JSON instead of 2.9 s.
_LABEL_JOINS = (
    "LEFT JOIN unnest(%s::bigint[], %s::int[], %s::text[], %s::text[], %s::text[], "
    "%s::text[]) AS s(format_id, units, packaging, code_csv, label_csv, json) "
    "ON s.format_id = d.x_format AND s.units = d.x_units AND s.packaging = d.x_packaging "
    "LEFT JOIN unnest(%s::jsonb[], %s::text[]::date[], %s::text[]::date[], %s::text[], "
    "%s::text[]) "
    "AS w(schedules, valid_from, valid_until, json, label_csv) "
    "ON w.schedules = d.x_schedules "
    "AND w.valid_from = COALESCE(d.x_from, 'infinity'::date) "
    "AND w.valid_until = COALESCE(d.x_until, 'infinity'::date) "
    "LEFT JOIN unnest(%s::text[], %s::text[]) AS bj(slug, json) ON bj.slug = d.x_beer "
    "LEFT JOIN unnest(%s::text[], %s::text[]) AS rj(slug, json) ON rj.slug = d.x_brand"
)


def _label_params(deals: QuerySet, formats: dict[int, Format]) -> list:
    """The arrays of _LABEL_JOINS for these prices: each serving, validity and schedule, beer
    and brand labelled once."""
    # One scan for both: the distinct (serving, schedule) pairs are few.
    pairs = (
        deals.values_list(
            "format_id", "units", "packaging", "schedules", "valid_from", "valid_until"
        )
        .order_by()
        .distinct()
    )
    servings: set[tuple] = set()
    whens: dict[tuple, tuple] = {}
    for format_id, units, packaging, schedules, valid_from, valid_until in pairs:
        servings.add((format_id, units, packaging))
        key = orjson.dumps(schedules).decode()
        whens.setdefault((key, valid_from, valid_until), (schedules, valid_from, valid_until))
    s_format, s_units, s_packaging, s_code, s_label, s_json = [], [], [], [], [], []
    for format_id, units, packaging in servings:
        s_format.append(format_id)
        s_units.append(units)
        s_packaging.append(packaging)
        s_json.append(
            _fragment(
                {"format_code": formats[format_id].code, "units": units, "packaging": packaging}
            )
        )
        s_code.append(csv_cell(formats[format_id].code))
        s_label.append(
            csv_cell(
                labels.serving_label(
                    fmt=formats[format_id], units=units, packaging=packaging, lang="pt-BR"
                )
            )
        )
    w_key, w_from, w_until, w_json, w_label = [], [], [], [], []
    for (key, valid_from, valid_until), (schedules, *_) in whens.items():
        w_key.append(key)
        # no date: 'infinity', which no real date equals (a NULL would never join)
        w_from.append(valid_from.isoformat() if valid_from else "infinity")
        w_until.append(valid_until.isoformat() if valid_until else "infinity")
        w_json.append(
            _fragment(
                {
                    "valid_from": valid_from.isoformat() if valid_from else None,
                    "valid_until": valid_until.isoformat() if valid_until else None,
                    "schedules": rows.schedules_item(schedules),
                }
            )
        )
        w_label.append(
            csv_cell(labels.schedule_text(schedules or [], "pt-BR", valid_from, valid_until))
        )
    beers = sorted(Beer.objects.values_list("slug", flat=True))
    brands = sorted(Brand.objects.values_list("slug", flat=True))
    params = [
        s_format,
        s_units,
        s_packaging,
        s_code,
        s_label,
        s_json,
        w_key,
        w_from,
        w_until,
        w_json,
        w_label,
        beers,
        [_fragment({"beer": slug}) for slug in beers],
        brands,
        [_fragment({"brand": slug}) for slug in brands],
    ]
    return params


def _per_litre(d: str = "d") -> str:
    den = f"({d}.x_units::bigint * {d}.x_volume)"
    return (
        f"(CASE WHEN {d}.x_kind = 'open_bar' THEN NULL "
        f"ELSE (2000 * {d}.x_price::bigint + {den}) / (2 * {den}) END)"
    )


class DealSql:
    """The SQL of a city's deals rows over the columns of `inner` (as `d`) and the label
    joins: the CSV line and the JSON item, and the recipe of the export rows they make
    (datasets.models)."""

    def __init__(self, city: City, formats: dict[int, Format]):
        self.city = city
        self.formats = formats
        self.inner, self.inner_params = _inner(_deal_columns(city))
        # Strings come joined, their JSON written once per distinct value (a serving, a
        # validity and schedule, a beer, a brand); only `conditions` is escaped row by row.
        # On 1M prices this took 3.0 s of one core instead of 3.9 s with a member-by-member
        # concatenation.
        item = _json_pieces(
            [
                _member("id", "d.x_id", first=True),
                _member("venue_id", "d.x_venue"),
                (("beer",), """COALESCE(bj.json, ',"beer":null')"""),
                (("brand",), """COALESCE(rj.json, ',"brand":null')"""),
                (("format_code", "units", "packaging"), "s.json"),
                _choice("kind", "d.x_kind", DealKind.values),
                _member("price_cents", "d.x_price"),
                _member(
                    "price_per_litre_cents",
                    "(CASE WHEN d.x_kind = 'open_bar' THEN 'null' "
                    f"ELSE ({_per_litre()})::text END)",
                ),
                _member("open_bar_minutes", "COALESCE(d.x_open_bar::text, 'null')"),
                _member("service_charge_pct", "COALESCE(d.x_service::text, 'null')"),
                _member("couvert_cents", "COALESCE(d.x_couvert::text, 'null')"),
                _member(
                    "conditions",
                    "(CASE WHEN d.x_conditions = '' THEN 'null' "
                    "ELSE to_json(d.x_conditions::text)::text END)",
                ),
                (("valid_from", "valid_until", "schedules"), "w.json"),
                _member("verified_at", _unix("d.x_verified")),
                _member("created_at", _unix("d.x_created")),
                _member("confirmations", "d.x_confirmations"),
                _member("open_disputes", "d.x_disputes"),
                _choice("status", "d.x_status", RANKED_STATUSES),
            ],
            rows.DEAL_KEYS,
        )
        line = _csv_line(
            {
                "id": "d.x_id",
                "venue_id": "d.x_venue",
                "venue": _csv_text("d.x_venue_slug"),
                "neighbourhood": _csv_text("d.x_hood"),
                "beer": _csv_text("d.x_beer"),
                "brand": _csv_text("d.x_brand"),
                "format_code": "s.code_csv",
                "serving": "s.label_csv",
                "units": "d.x_units",
                "litres": "trim_scale((d.x_units * d.x_volume)::numeric / 1000)",
                "packaging": "d.x_packaging",
                "kind": "d.x_kind",
                "price_brl": _brl("d.x_price"),
                "price_per_litre_brl": _brl(_per_litre()),
                "when": "w.label_csv",
                "valid_from": _date("d.x_from"),
                "valid_until": _date("d.x_until"),
                "service_charge_pct": "d.x_service",
                "couvert_brl": _brl("d.x_couvert"),
                "conditions": _csv_text("d.x_conditions"),
                # the zone written into the SQL, so the digest changes with it
                "verified_on": _date(f"(d.x_verified AT TIME ZONE {literal(city.timezone)})::date"),
                "confirmations": "d.x_confirmations",
                "status": "d.x_status",
            },
            rows.DEALS_CSV_COLUMNS,
        )
        self.line = f"{line} || {_CRLF}"
        self.item = f"{item} || {_ITEM_END}"
        # The SQL (the zone written in it), the labels' code and the formats they name:
        # export rows made by other ones are stale (see datasets.models).
        self.recipe = _digest(
            # the columns' own query too: which prices, and what each column reads
            self.inner,
            repr(self.inner_params),
            _LABEL_JOINS,
            self.line,
            self.item,
            _label_sources(),
            repr(
                sorted(
                    (f.id, f.code, f.type, f.volume_ml, f.label_pt, f.label_en)
                    for f in formats.values()
                )
            ),
        )

    def formatted(self, deals: QuerySet | None = None) -> tuple[str, list]:
        """SELECT of (id, venue, line, item) of every price (or of `deals`, the city's
        published prices filtered), formatted here, and its parameters (one scan of the
        prices, to label them)."""
        if deals is None:
            deals, inner, inner_params = (
                published_deals(city=self.city),
                self.inner,
                self.inner_params,
            )
        else:
            inner, inner_params = _inner(_deal_columns(self.city, deals))
        labelled = _label_params(deals, self.formats)
        return (
            f"SELECT d.x_id AS id, d.x_venue AS venue, {self.line} AS line, "
            f"{self.item} AS item FROM ({inner}) d {_LABEL_JOINS}",
            [*inner_params, *labelled],
        )

    def changed(self, ids: np.ndarray) -> tuple[str, list]:
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
    """`deals.json` and `deals.csv` of a city, written by PostgreSQL. Returns how many prices,
    and the ids of their bars. With `kept` (the export's own transaction, after
    refresh_rows): the last export's copy patched with the changed prices' rows when it is
    still good (datasets.patch), or every row formatted; either way kept for the next
    export."""
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

            def add(row: tuple[int, int, str, str]) -> None:
                venues.add(row[1])
                if index is None:
                    files.add(row[2], row[3])
                else:
                    files.add_row(*row)

            select, params = sql.formatted()
            formatted = _stream(select, params, ("id", "venue", "line", "item"), "q.id", add, tick)
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
    select, params = sql.changed(changed)
    with contextlib.closing(_rows(select, params, ("id", "venue", "line", "item"), "q.id")) as new:
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
        every.add(line, item)
        if venue in listed:
            with_price.add(line, item)

    try:
        _stream(select, inner_params + join_params, ("id", "line", "item"), "q.id", add)
    except BaseException:
        with_price.abandon()
        every.abandon()
        raise
    return with_price.close(), every.close()


def enabled() -> bool:
    """The fast path runs on PostgreSQL unless DATASETS_COPY is off (the portable path then)."""
    return connection.vendor == "postgresql" and settings.DATASETS_COPY
