"""Import of a dataset tree (datasets.md layout) into an empty or existing database.

Upserts: cities by slug (cities.json), brands/beers by slug and formats by code
(catalog.json), bairros by (city, slug) (neighbourhoods.geojson), bars by id
(venues-all.json) and prices by id (deals.json); ids are kept. Each price gets one check
(source `import`) at its `verified_at` unless it already has one in that second.

Everything happens in one transaction: a malformed file is refused with a message naming the
file, the item (index and id) and the field, and the database is left as it was.

The files carry each price's last check only, not the history the price index of earlier
months rests on: the closed months of price-index.json are kept as they are (PriceIndexHistory)
and served from there. The files the import does not load must be there and agree with the
loaded ones: venues.json lists the bars of deals.json's prices as venues-all.json has them, and
each CSV row is its JSON twin's item in reais and local dates, cell by cell, numbers by value
(the labels `serving` and `when` are this version's wording, and a bar's `url` begins with the
source's own address: only its end is compared). What is derived (index.json's counts, a price
per litre) is not held to the loaded data, and a CSV may carry more columns than datasets.md
names, in any order. Bairros
without a boundary are not in the GeoJSON, so one a bar refers to is created with the name the
CSV gives it (or its slug), or renamed to it. A price with 3 or more open disputes is loaded suspended.
"""

import csv
import datetime as dt
import hashlib
import math
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import orjson
from django.core.management.color import no_style
from django.db import IntegrityError, connection, transaction
from django.db.models import CharField, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone
from tqdm import tqdm

from beers.geo import boundary_problem
from beers.models import (
    FORMAT_CODE_RE,
    FORMAT_TYPE_RE,
    INSTAGRAM_RE,
    RESERVED_CITY_SLUGS,
    SCHEDULES_MAX,
    SLUG_RE,
    UF_CODES,
    VENUE_ATTRIBUTES,
    Beer,
    Brand,
    CheckSource,
    City,
    Deal,
    DealKind,
    DealStatus,
    Format,
    Neighbourhood,
    Packaging,
    PriceCheck,
    PriceIndexHistory,
    ScheduleProblem,
    Venue,
    VenueKind,
    VenueStatus,
    schedules_checked,
    validate_timezone,
)
from beers.selectors.price_index import (
    FIGURES,
    MONTH_RE,
    SCOPES,
    last_ended_month,
    month_is_final,
)
from beers.selectors.published import published_deals
from beers.services import standing_with_disputes

from . import rows
from .rows import from_unix
from .services import CITY_FILES, datasets_schedule_export

BATCH = 1000
# How much later than its file's updated_at a time in it may be (a check committed while the
# source read its data, a month ending then)
WRITTEN_LEEWAY = dt.timedelta(minutes=1)
_SLUG = re.compile(SLUG_RE)
_FORMAT_CODE = re.compile(FORMAT_CODE_RE)
_FORMAT_TYPE = re.compile(FORMAT_TYPE_RE)
_INSTAGRAM = re.compile(INSTAGRAM_RE)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class ImportRefused(Exception):
    """A file that does not follow datasets.md; nothing was written."""

    def __init__(
        self,
        file: str,
        message: str,
        *,
        item: int | None = None,
        item_id=None,
        field: str | None = None,
    ):
        self.file, self.item, self.item_id, self.field = file, item, item_id, field
        where = [file]
        if item is not None:
            where.append(f"item {item}" + (f" (id {item_id})" if item_id is not None else ""))
        elif item_id is not None:  # an item known by its id alone (a CSV row's bar)
            where.append(f"id {item_id}")
        if field is not None:
            where.append(f'field "{field}"')
        super().__init__(f"{', '.join(where)}: {message}")


@dataclass
class ImportResult:
    cities: int = 0
    brands: int = 0
    beers: int = 0
    formats: int = 0
    neighbourhoods: int = 0
    venues: int = 0
    deals: int = 0
    checks_created: int = 0
    index_cells: int = 0
    # --mirror: what the database published that the tree no longer does
    withdrawn_cities: int = 0
    withdrawn_venues: int = 0
    withdrawn_deals: int = 0
    withdrawn_neighbourhoods: int = 0
    withdrawn_catalog: int = 0  # brands, beers and formats
    notes: list[str] = field(default_factory=list)


# --- field checks: each returns the value to store or raises ValueError(message) --------------


def _int(lo=None, hi=None, null=False) -> Callable:
    def check(v):
        if v is None and null:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError("must be an integer" + (" or null" if null else ""))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            if hi is None:
                raise ValueError(f"must be at least {lo}")
            if lo is None:
                raise ValueError(f"must be at most {hi}")
            raise ValueError(f"must be between {lo} and {hi}")
        return v

    return check


def _float(lo, hi) -> Callable:
    def check(v):
        if isinstance(v, bool) or not isinstance(v, int | float) or v != v:
            raise ValueError("must be a number")
        if not lo <= v <= hi:
            raise ValueError(f"must be between {lo} and {hi}")
        return float(v)

    return check


def _str(max_len, *, null=False, empty_ok=True, choices=None, pattern=None) -> Callable:
    """Text; null becomes "" when the column stores empty text (null=True)."""

    def check(v):
        if v is None and null:
            return ""
        if not isinstance(v, str):
            raise ValueError("must be a string" + (" or null" if null else ""))
        if not v and not empty_ok:
            raise ValueError("must not be empty")
        if "\x00" in v:  # PostgreSQL's text cannot hold it
            raise ValueError("must not contain the NUL character (U+0000)")
        if choices is not None and v not in choices:  # before the length: the better message
            raise ValueError(f"must be one of {', '.join(sorted(choices))}")
        if len(v) > max_len:
            raise ValueError(f"must be at most {max_len} characters")
        if pattern is not None and v and not pattern.fullmatch(v):
            raise ValueError(f"does not match {pattern.pattern}")
        return v

    return check


def _slug(null=False, max_len=140) -> Callable:
    """A slug, at most as long as the model's column for it."""

    def check(v):
        if v is None and null:
            return None
        return _str(max_len, empty_ok=False, pattern=_SLUG)(v)

    return check


# Half of JSON's safe integers (RFC 8259 §6: what every reader, JavaScript's included, reads
# exactly): the rows created after an import take the ids after the largest imported one, and
# stay inside them too (an id of 2**53 - 1 imported gave the next bar 2**53, which this
# importer then refused).
ID = _int(1, 2**52)
COUNT = _int(0, 2**31 - 1)  # a positive integer column


def _bool(v):
    if not isinstance(v, bool):
        raise ValueError("must be true or false")
    return v


# The last instant whose month, in any zone, the price index can name (years up to 9998).
_LAST_UNIX = int(dt.datetime(9998, 12, 31, tzinfo=dt.UTC).timestamp())


def _unix(v):
    _int(0, _LAST_UNIX)(v)
    return from_unix(v)


def _date(v):
    if v is None:
        return None
    if not isinstance(v, str) or not _DATE.fullmatch(v):
        raise ValueError("must be a date YYYY-MM-DD or null")
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        raise ValueError("is not a calendar date") from None


def _attributes(v):
    if not isinstance(v, list) or any(a not in VENUE_ATTRIBUTES for a in v):
        raise ValueError(f"must be a list of {', '.join(VENUE_ATTRIBUTES)}")
    if len(set(v)) != len(v):
        raise ValueError("must not repeat an attribute")
    return v


_SCHEDULE_PROBLEMS = {
    "list": f"must be a list of at most {SCHEDULES_MAX} schedules",
    "object": "schedule {i} must be an object",
    "days": "schedule {i}: days must be 1 to 7 integers 0..6",
    "start": "schedule {i}: start must be HH:MM, hour 00 to 23",
    "end": "schedule {i}: end must be HH:MM, hour 00 to 24",
}


def _schedules(v):
    try:
        return schedules_checked(v)
    except ScheduleProblem as problem:
        raise ValueError(_SCHEDULE_PROBLEMS[problem.part].format(i=problem.index)) from None


CITY_FIELDS = {
    "slug": _slug(max_len=80),
    "name": _str(80, empty_ok=False),
    "state": _str(2, choices=set(UF_CODES)),
    "timezone": _str(64, empty_ok=False),
    "lat": _float(-90, 90),
    "lng": _float(-180, 180),
}
CITY_COUNT_FIELDS = {"deal_count": _int(lo=0), "venue_count": _int(lo=0)}
BRAND_FIELDS = {"slug": _slug(max_len=80), "name": _str(80, empty_ok=False)}
BEER_FIELDS = {
    "slug": _slug(max_len=100),
    "name": _str(80, empty_ok=False),
    "brand": _slug(null=True, max_len=80),
}
FORMAT_FIELDS = {
    "code": _str(40, pattern=_FORMAT_CODE, empty_ok=False),
    "type": _str(16, pattern=_FORMAT_TYPE),
    "volume_ml": _int(1, 20000),
    "label_pt": _str(60),
    "label_en": _str(60),
}
VENUE_FIELDS = {
    "id": ID,
    "slug": _slug(),
    "name": _str(120, empty_ok=False),
    "kind": _str(16, choices=set(VenueKind.values)),
    "on_site": _bool,
    "neighbourhood": _slug(null=True, max_len=80),
    "address": _str(200, null=True),
    "lat": _float(-90, 90),
    "lng": _float(-180, 180),
    "instagram": _str(30, null=True, pattern=_INSTAGRAM),
    "opening_hours": _str(255, null=True),
    "attributes": _attributes,
    "status": _str(8, choices=set(VenueStatus.values)),
    "created_at": _unix,
}
DEAL_FIELDS = {
    "id": ID,
    "venue_id": ID,
    "beer": _slug(null=True, max_len=100),
    "brand": _slug(null=True, max_len=80),
    "format_code": _str(40, pattern=_FORMAT_CODE, empty_ok=False),
    "units": _int(1, 50),
    "packaging": _str(8, choices=set(Packaging.values)),
    "kind": _str(12, choices=set(DealKind.values)),
    "price_cents": _int(1, 1_000_000),
    "price_per_litre_cents": _int(0, 2**31 - 1, null=True),
    "open_bar_minutes": _int(1, 1440, null=True),
    "service_charge_pct": _int(0, 30, null=True),
    "couvert_cents": _int(0, 100_000, null=True),
    "conditions": _str(280, null=True),
    "valid_from": _date,
    "valid_until": _date,
    "schedules": _schedules,
    "verified_at": _unix,
    "created_at": _unix,
    "confirmations": COUNT,
    "open_disputes": COUNT,
    "status": _str(10, choices={"published", "disputed"}),
}


def _clean(file: str, index: int, item, fields: dict, id_key: str = "id") -> dict:
    if not isinstance(item, dict):
        raise ImportRefused(file, "must be an object", item=index)
    item_id = item.get(id_key)
    out = {}
    for name, check in fields.items():
        if name not in item:
            raise ImportRefused(file, "is missing", item=index, item_id=item_id, field=name)
        try:
            out[name] = check(item[name])
        except ValueError as exc:
            raise ImportRefused(
                file, f"{exc} (got {item[name]!r:.60})", item=index, item_id=item_id, field=name
            ) from None
    return out


def _unreadable(rel: str, exc: OSError) -> ImportRefused:
    """A file of the layout that cannot be read: missing, a folder, not readable."""
    if isinstance(exc, FileNotFoundError):
        return ImportRefused(rel, "file is missing")
    if isinstance(exc, IsADirectoryError):
        return ImportRefused(rel, "is a folder, not a file")
    return ImportRefused(rel, f"cannot be read ({exc.strerror or exc})")


def _load(root: Path, rel: str) -> dict:
    path = root / rel
    try:
        raw = path.read_bytes()
        data = orjson.loads(raw)
    except OSError as exc:
        raise _unreadable(rel, exc) from None
    except orjson.JSONDecodeError as exc:
        raise ImportRefused(rel, _not_json(raw, exc)) from None
    if not isinstance(data, dict):
        raise ImportRefused(rel, "must be a JSON object")
    return data


def _not_json(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """Why a file is not JSON: where its UTF-8 breaks (orjson then names the file's start),
    or orjson's own words."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = raw.count(b"\n", 0, bad.start) + 1
        column = bad.start - (raw.rfind(b"\n", 0, bad.start) + 1) + 1
        return f"not valid UTF-8 at byte {bad.start} (line {line}, byte {column} of the line)"
    return f"not valid JSON ({exc})"


class _NotLineDelimited(Exception):
    """The file is not laid out one item per line as the export writes it."""


def _items_stream(root: Path, rel: str):
    """(envelope, items) of a file. Files laid out as the export writes them (header line
    ending in `"items":[`, one item per line, then `]}`) are read line by line, so memory
    stays flat; the items iterator raises _NotLineDelimited if the layout turns out to differ.
    Any other file is parsed whole."""
    path = root / rel
    try:
        with open(path, "rb") as fh:
            first = fh.readline().rstrip(b"\r\n")
    except OSError as exc:
        raise _unreadable(rel, exc) from None
    # The whole envelope is on the first line only when the items close the file: keys after
    # the array (`],"license":…}`) would be missed, so such a file is parsed whole.
    if first.endswith(b'"items":[') and _closes_with_items(path):
        try:
            envelope = orjson.loads(first + b"]}")
        except orjson.JSONDecodeError:
            envelope = None
        if isinstance(envelope, dict):
            return envelope, _line_items(path)
    data = _load(root, rel)
    return data, iter(_array(data, rel))


def _closes_with_items(path: Path) -> bool:
    """Whether the file's last line is `]}` (trailing white space aside)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        fh.seek(max(0, fh.tell() - 64))
        tail = fh.read().rstrip()
    return tail.endswith(b"\n]}")


def _line_items(path: Path):
    with open(path, "rb") as fh:
        fh.readline()
        comma, count = False, 0
        for line in fh:
            line = line.rstrip(b"\r\n")
            if line == b"]}":
                if comma or fh.read().strip():
                    raise _NotLineDelimited
                return
            if count and not comma:  # two items without a comma between them
                raise _NotLineDelimited
            count += 1
            comma = line.endswith(b",")
            try:
                yield orjson.loads(line[:-1] if comma else line)
            except orjson.JSONDecodeError:
                raise _NotLineDelimited from None
        raise _NotLineDelimited


def _array(data: dict, rel: str, key: str = "items") -> list:
    value = data.get(key)
    if not isinstance(value, list):
        raise ImportRefused(rel, f'"{key}" must be an array', field=key)
    return value


def _written_at(data: dict) -> dt.datetime:
    """The envelope's `updated_at` as an instant (UTC when it names no offset)."""
    written_at = dt.datetime.fromisoformat(data["updated_at"])
    return written_at if written_at.tzinfo else written_at.replace(tzinfo=dt.UTC)


def _envelope(data: dict, rel: str, city: str | None = None) -> None:
    if data.get("license") != "ODbL-1.0":
        raise ImportRefused(rel, 'must be "ODbL-1.0"', field="license")
    for key in ("updated_at", "attribution"):
        if not isinstance(data.get(key), str):
            raise ImportRefused(rel, "must be a string", field=key)
    try:
        written_at = _written_at(data)
    except ValueError:
        raise ImportRefused(rel, "must be an ISO 8601 date and time", field="updated_at") from None
    if not 0 <= written_at.timestamp() <= _LAST_UNIX:  # the range of the files' unix times
        raise ImportRefused(rel, "must be between 1970 and 9998", field="updated_at")
    if city is not None and data.get("city") != city:
        raise ImportRefused(rel, f'must be "{city}"', field="city")


# --- writing ---------------------------------------------------------------------------------

CONSTRAINT_FIELDS = {
    "venue_slug_per_city": "slug",
    "neighbourhood_slug_per_city": "slug",
    "deal_validity_order": "valid_until",
    "deal_price_range": "price_cents",
    "beers_venue.slug": "slug",
    "beers_neighbourhood.slug": "slug",  # SQLite's wording
}


def _bulk_upsert(
    model,
    objs: list,
    *,
    unique: list[str],
    update: list[str],
    file: str,
    labels: list[tuple[int, object]],
) -> None:
    """Insert or update `objs` in one statement; on a database refusal, find the item."""
    if not objs:
        return
    try:
        with transaction.atomic():
            model.objects.bulk_create(
                objs,
                update_conflicts=True,
                unique_fields=unique,
                update_fields=update,
                batch_size=BATCH,
            )
    except IntegrityError:
        for obj, (index, item_id) in zip(objs, labels, strict=True):
            try:
                with transaction.atomic():
                    model.objects.bulk_create(
                        [obj], update_conflicts=True, unique_fields=unique, update_fields=update
                    )
            except IntegrityError as exc:
                text = str(exc)
                fld = next((f for c, f in CONSTRAINT_FIELDS.items() if c in text), None)
                raise ImportRefused(
                    file,
                    f"refused by the database ({text.splitlines()[0]})",
                    item=index,
                    item_id=item_id,
                    field=fld,
                ) from None
        raise


def _import_cities(root: Path, result: ImportResult) -> list[City]:
    """The cities (their `deal_count` and `venue_count` are checked as numbers only: derived,
    and an export writes its own)."""
    rel = "cities.json"
    data = _load(root, rel)
    _envelope(data, rel)
    cities, seen = [], set()
    for i, raw in enumerate(_array(data, rel)):
        item = _clean(rel, i, raw, {**CITY_FIELDS, **CITY_COUNT_FIELDS}, "slug")
        item.pop("deal_count"), item.pop("venue_count")
        if item["slug"] in seen:
            raise ImportRefused(rel, "repeated", item=i, item_id=item["slug"], field="slug")
        seen.add(item["slug"])
        if item["slug"] in RESERVED_CITY_SLUGS:
            raise ImportRefused(
                rel,
                "is a path of the site itself (its pages and files would answer as that)",
                item=i,
                item_id=item["slug"],
                field="slug",
            )
        try:
            validate_timezone(item["timezone"])
        except Exception:
            raise ImportRefused(
                rel, "is not an IANA time zone", item=i, item_id=item["slug"], field="timezone"
            ) from None
        city, _ = City.objects.update_or_create(
            slug=item["slug"], defaults={**item, "active": True}
        )
        cities.append(city)
    result.cities = len(cities)
    return cities


@dataclass(frozen=True)
class _Catalog:
    """The slugs and codes of the tree's catalog.json: what its prices may name (the database
    may hold more, which the tree then does not describe)."""

    brands: frozenset[str]
    beers: frozenset[str]
    formats: frozenset[str]


def _import_catalog(root: Path, result: ImportResult) -> _Catalog:
    rel = "catalog.json"
    data = _load(root, rel)
    _envelope(data, rel)
    brands = [
        _clean(rel, i, b, BRAND_FIELDS, "slug") for i, b in enumerate(_array(data, rel, "brands"))
    ]
    beers = [
        _clean(rel, i, b, BEER_FIELDS, "slug") for i, b in enumerate(_array(data, rel, "beers"))
    ]
    formats = [
        _clean(rel, i, f, FORMAT_FIELDS, "code") for i, f in enumerate(_array(data, rel, "formats"))
    ]
    for items, key, label in (
        (brands, "slug", "brands"),
        (beers, "slug", "beers"),
        (formats, "code", "formats"),
    ):
        seen = set()
        for i, item in enumerate(items):
            if item[key] in seen:
                raise ImportRefused(rel, f"{label}: repeated", item=i, item_id=item[key], field=key)
            seen.add(item[key])
    for i, f in enumerate(formats):  # decisions.md: codes are {type}_{volume_ml}
        if not f["code"].startswith(f["type"] + "_"):
            raise ImportRefused(
                rel,
                "formats: the code must start with its type",
                item=i,
                item_id=f["code"],
                field="code",
            )
        if f["code"] != f"{f['type']}_{f['volume_ml']}":
            raise ImportRefused(
                rel,
                "formats: the code must end with its volume (type_volume)",
                item=i,
                item_id=f["code"],
                field="volume_ml",
            )
    _bulk_upsert(
        Brand,
        [Brand(**b) for b in brands],
        unique=["slug"],
        update=["name"],
        file=rel,
        labels=[(i, b["slug"]) for i, b in enumerate(brands)],
    )
    brand_ids = dict(Brand.objects.values_list("slug", "id"))
    tree_brands = frozenset(b["slug"] for b in brands)
    objs = []
    for i, b in enumerate(beers):
        if b["brand"] is not None and b["brand"] not in tree_brands:
            raise ImportRefused(
                rel, "beers: unknown brand", item=i, item_id=b["slug"], field="brand"
            )
        objs.append(Beer(slug=b["slug"], name=b["name"], brand_id=brand_ids.get(b["brand"])))
    _bulk_upsert(
        Beer,
        objs,
        unique=["slug"],
        update=["name", "brand"],
        file=rel,
        labels=[(i, b["slug"]) for i, b in enumerate(beers)],
    )
    Beer.prices_follow_their_beers()  # prices the files do not hold (retired, closed bars)
    _bulk_upsert(
        Format,
        [Format(**f) for f in formats],
        unique=["code"],
        update=["type", "volume_ml", "label_pt", "label_en"],
        file=rel,
        labels=[(i, f["code"]) for i, f in enumerate(formats)],
    )
    result.brands, result.beers, result.formats = len(brands), len(beers), len(formats)
    return _Catalog(
        brands=tree_brands,
        beers=frozenset(b["slug"] for b in beers),
        formats=frozenset(f["code"] for f in formats),
    )


def _import_neighbourhoods(
    root: Path, city: City, result: ImportResult
) -> tuple[dict[str, int], dict[str, str]]:
    """The city's bairros with a boundary; returns (slug → id of every bairro of the city,
    slug → name of each feature)."""
    rel = f"{city.slug}/neighbourhoods.geojson"
    data = _load(root, rel)
    if data.get("type") != "FeatureCollection":
        raise ImportRefused(rel, 'must be "FeatureCollection"', field="type")
    objs, labels, seen = [], [], set()
    for i, feature in enumerate(_array(data, rel, "features")):
        if not isinstance(feature, dict) or feature.get("type") != "Feature":
            raise ImportRefused(rel, 'must be a "Feature"', item=i, field="type")
        props = feature.get("properties")
        if not isinstance(props, dict):
            raise ImportRefused(rel, "must be an object", item=i, field="properties")
        item = _clean(
            rel, i, props, {"slug": _slug(max_len=80), "name": _str(120, empty_ok=False)}, "slug"
        )
        if item["slug"] in seen:
            raise ImportRefused(rel, "repeated", item=i, item_id=item["slug"], field="slug")
        seen.add(item["slug"])
        geometry = feature.get("geometry")
        problem = boundary_problem(geometry)
        if problem:
            raise ImportRefused(rel, problem, item=i, item_id=item["slug"], field="geometry")
        objs.append(
            Neighbourhood(city=city, slug=item["slug"], name=item["name"], boundary=geometry)
        )
        labels.append((i, item["slug"]))
    _bulk_upsert(
        Neighbourhood,
        objs,
        unique=["city", "slug"],
        update=["name", "boundary"],
        file=rel,
        labels=labels,
    )
    result.neighbourhoods += len(objs)
    features = {obj.slug: obj.name for obj in objs}
    return dict(Neighbourhood.objects.filter(city=city).values_list("slug", "id")), features


def _refuse_other_cities_ids(model, what: str, rel: str, ids: list[int], labels, city: City):
    """Refuse the first of `ids` that the database holds for another city (an id names one
    bar, one price). `labels`: (item index, id) of each id. Queried in chunks: a database takes
    a bounded number of parameters."""
    found: dict[int, str] = {}
    for start in range(0, len(ids), BATCH):
        found.update(
            model.objects.filter(id__in=ids[start : start + BATCH])
            .exclude(city=city)
            .values_list("id", "city__slug")
        )
    for i, item_id in labels:
        if item_id in found:
            raise ImportRefused(
                rel,
                f"already the id of a {what} of {found[item_id]} in the database",
                item=i,
                item_id=item_id,
                field="id",
            )


def _import_venues(
    root: Path,
    city: City,
    hoods: dict[str, int],
    result: ImportResult,
    tree: dict[int, str],
    digests: dict[str, dict[int, bytes]],
) -> dict[int, str]:
    """The city's bars; returns id → status. `tree` holds the bar ids of the cities read
    before (id → city slug): an id names one bar in the whole tree. Fills `digests[city]`
    (id → digest of the item as written) for venues.json's items to be compared with.
    A bairro the GeoJSON has no boundary for is created if new, named by its slug: the files
    name bairros only in the GeoJSON (datasets use slugs)."""
    rel = f"{city.slug}/venues-all.json"
    data = _load(root, rel)
    _envelope(data, rel, city.slug)
    raw_items = _array(data, rel)
    objs, labels, ids, slugs = [], [], {}, {}
    digests[city.slug] = {}
    taken = dict(Venue.objects.filter(city=city).values_list("slug", "id"))
    for i, raw in enumerate(raw_items):
        item = _clean(rel, i, raw, VENUE_FIELDS)

        def refuse(message, fld, i=i, item_id=item["id"]):
            return ImportRefused(rel, message, item=i, item_id=item_id, field=fld)

        if item["id"] in ids:
            raise refuse("repeated", "id")
        if item["id"] in tree:
            raise refuse(f"already the id of a bar of {tree[item['id']]}", "id")
        ids[item["id"]] = item["status"]
        digests[city.slug][item["id"]] = _digest(item)  # datasets.md's fields, as read
        if item["slug"] in slugs:
            raise refuse(f"already used by item {slugs[item['slug']]}", "slug")
        slugs[item["slug"]] = i
        slug = item.pop("neighbourhood")
        if slug is not None and slug not in hoods:
            # A bairro without a boundary is no GeoJSON feature: created, named by its slug.
            hood = Neighbourhood.objects.create(city=city, slug=slug, name=slug)
            hoods[slug] = hood.id
            result.notes.append(f"{rel}: created bairro {slug} (no boundary in the GeoJSON)")
        objs.append(Venue(city=city, neighbourhood_id=hoods.get(slug), **item))
        labels.append((i, item["id"]))
    _refuse_other_cities_ids(Venue, "bar", rel, list(ids), labels, city)
    for obj, (i, item_id) in zip(objs, labels, strict=True):
        owner = taken.get(obj.slug, item_id)
        if owner != item_id and owner not in ids:  # a bar the file does not rename
            raise ImportRefused(
                rel,
                f"already used by bar {owner} of {city.slug}",
                item=i,
                item_id=item_id,
                field="slug",
            )
    # Slugs the file passes between its own bars (two swapped, a chain of renames): the
    # database checks (city, slug) row by row, so the renamed bars first give theirs up.
    held = {bar_id: slug for slug, bar_id in taken.items()}
    renamed = [obj.id for obj in objs if held.get(obj.id, obj.slug) != obj.slug]
    placeholder = Concat(Value(f"renaming-{secrets.token_hex(8)}-"), Cast("id", CharField()))
    for start in range(0, len(renamed), BATCH):
        Venue.objects.filter(pk__in=renamed[start : start + BATCH]).update(slug=placeholder)
    update = [f for f in VENUE_FIELDS if f not in ("id", "neighbourhood")] + [
        "neighbourhood",
        "city",
    ]
    _bulk_upsert(Venue, objs, unique=["id"], update=update, file=rel, labels=labels)
    result.venues += len(objs)
    tree.update(dict.fromkeys(ids, city.slug))
    return ids


def _import_deals(
    root: Path,
    city: City,
    venue_ids: dict[int, str],
    result: ImportResult,
    bar: bool,
    tree: set[int],
    catalog: _Catalog,
) -> int:
    """The city's prices; returns how many."""
    rel = f"{city.slug}/deals.json"
    envelope, items = _items_stream(root, rel)
    _envelope(envelope, rel, city.slug)
    written_at = _written_at(envelope)
    try:
        with transaction.atomic():  # a savepoint, so that the fallback starts clean
            counts = _deals_from(items, rel, city, venue_ids, bar, tree, catalog, written_at)
    except _NotLineDelimited:
        # Valid JSON laid out otherwise (pretty-printed, say): parse the whole file instead.
        data = _load(root, rel)
        counts = _deals_from(
            iter(_array(data, rel)), rel, city, venue_ids, bar, tree, catalog, written_at
        )
    result.deals += counts[0]
    result.checks_created += counts[1]
    return counts[0]


def _deals_from(
    raw_items,
    rel: str,
    city: City,
    venue_ids: dict[int, str],
    bar: bool,
    tree: set[int],
    catalog: _Catalog,
    written_at: dt.datetime,
) -> tuple[int, int]:
    """Validate and upsert prices as they come; returns (prices, checks created). `tree`:
    the price ids of the cities read before, the seen ones added. A price names beers, brands
    and formats of the tree's catalog.json (not others the database holds), and was seen
    and checked before the file was written (its `updated_at`, a minute's leeway)."""
    counts = [0, 0]
    latest = (written_at + WRITTEN_LEEWAY).timestamp()
    beers, beer_brands = {}, {}
    for slug, beer_id, brand_slug in Beer.objects.values_list("slug", "id", "brand__slug"):
        if slug in catalog.beers:
            beers[slug], beer_brands[slug] = beer_id, brand_slug
    brands = {
        slug: brand_id
        for slug, brand_id in Brand.objects.values_list("slug", "id")
        if slug in catalog.brands
    }
    formats = {
        code: (fid, ml)
        for code, fid, ml in Format.objects.values_list("code", "id", "volume_ml")
        if code in catalog.formats
    }
    seen: set[int] = set()
    objs, labels = [], []
    for i, raw in enumerate(
        tqdm(raw_items, disable=not bar, desc=f"{city.slug} deals", unit="row", file=sys.stderr)
    ):
        item = _clean(rel, i, raw, DEAL_FIELDS)
        item_id = item["id"]

        def refuse(message, fld, i=i, item_id=item_id):
            return ImportRefused(rel, message, item=i, item_id=item_id, field=fld)

        if item_id in seen:
            raise refuse("repeated", "id")
        if item_id in tree:
            raise refuse("already the id of a price of another city of the tree", "id")
        seen.add(item_id)
        if item["venue_id"] not in venue_ids:
            raise refuse(f"no bar with this id in {city.slug}/venues-all.json", "venue_id")
        if venue_ids[item["venue_id"]] != VenueStatus.OPEN:
            raise refuse("the bar is closed (deals.json holds the prices of open bars)", "venue_id")
        for key, table in (("beer", beers), ("brand", brands)):
            if item[key] is not None and item[key] not in table:
                raise refuse(f"not in catalog.json {key}s", key)
        beer_brand = beer_brands.get(item["beer"])
        if item["beer"] is not None and item["brand"] != beer_brand:
            if beer_brand is None:
                raise refuse("must be null: its beer has no brand in catalog.json", "brand")
            raise refuse(f"must be {beer_brand!r}, the brand of its beer", "brand")
        if item["format_code"] not in formats:
            raise refuse("not in catalog.json formats", "format_code")
        if item["valid_from"] and item["valid_until"] and item["valid_from"] > item["valid_until"]:
            raise refuse("is before valid_from", "valid_until")
        for key in ("created_at", "verified_at"):
            if item[key].timestamp() > latest:
                raise refuse("is after the file was written (its updated_at)", key)
        # price_per_litre_cents is derived (price, units, the format's volume): the database
        # computes its own, so a tree rounding it another way is not refused for it.
        format_id, volume_ml = formats[item["format_code"]]
        # interface.md: 3 open disputes take a price out of the rankings, 2 make it disputed,
        # whatever the tree calls it (an export never writes a published price with 2)
        item["status"] = standing_with_disputes(item["status"], item["open_disputes"])
        objs.append(
            Deal(
                id=item_id,
                city=city,
                venue_id=item["venue_id"],
                beer_id=beers.get(item["beer"]),
                brand_id=brands.get(item["brand"]),
                format_id=format_id,
                volume_ml=volume_ml,
                **{k: item[k] for k in _DEAL_COPIED},
            )
        )
        labels.append((i, item_id))
        if len(objs) >= BATCH:
            _write_deals(objs, labels, rel, counts, city)
            objs, labels = [], []
    _write_deals(objs, labels, rel, counts, city)
    tree |= seen
    return counts[0], counts[1]


# Item fields stored as they are; the others are resolved (ids of slugs, the city, volume).
_DEAL_COPIED = (
    "units",
    "packaging",
    "kind",
    "price_cents",
    "open_bar_minutes",
    "service_charge_pct",
    "couvert_cents",
    "conditions",
    "valid_from",
    "valid_until",
    "schedules",
    "verified_at",
    "created_at",
    "confirmations",
    "open_disputes",
    "status",
)
_DEAL_UPDATE = ["city", "venue", "beer", "brand", "format", "volume_ml", *_DEAL_COPIED]


def _write_deals(objs: list[Deal], labels: list, rel: str, counts: list[int], city: City) -> None:
    if not objs:
        return
    _refuse_other_cities_ids(Deal, "price", rel, [d.id for d in objs], labels, city)
    _bulk_upsert(Deal, objs, unique=["id"], update=_DEAL_UPDATE, file=rel, labels=labels)
    counts[0] += len(objs)
    # One check per price at its verified_at, unless one exists in that second; one there at
    # another amount takes the file's (a price edited by hand, its check's moment kept): the
    # file's is the price's last check, which the price index of that month reads.
    have: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for check_id, deal_id, checked_at, cents in PriceCheck.objects.filter(
        deal_id__in=[d.id for d in objs]
    ).values_list("id", "deal_id", "checked_at", "price_cents"):
        have.setdefault((deal_id, int(checked_at.timestamp() // 1)), []).append((check_id, cents))
    checks, repriced = [], {}  # repriced: amount → ids of the checks that take it
    for d in objs:
        found = have.get((d.id, int(d.verified_at.timestamp())))
        if found is None:
            checks.append(
                PriceCheck(
                    deal_id=d.id,
                    price_cents=d.price_cents,
                    checked_at=d.verified_at,
                    source=CheckSource.IMPORT,
                )
            )
        else:
            repriced.setdefault(d.price_cents, []).extend(
                check_id for check_id, cents in found if cents != d.price_cents
            )
    for cents, ids in repriced.items():  # one statement per amount, not per price
        if ids:
            PriceCheck.objects.filter(pk__in=ids).update(price_cents=cents)
    PriceCheck.objects.bulk_create(checks, batch_size=BATCH)
    counts[1] += len(checks)


INDEX_FIELDS = {
    "month": _str(7, pattern=MONTH_RE),
    "final": _bool,
    "scope": _str(16, choices=set(SCOPES)),
    "key": _str(140, null=True, empty_ok=False),  # null (the city scope) is stored as ""
    "n": _int(1, 2**31 - 1),
    **dict.fromkeys(FIGURES[1:], COUNT),  # min, p25, median, p75 (cents per litre)
}


def _import_price_index(root: Path, city: City, result: ImportResult, mirror: bool) -> int:
    """The closed months of the city's price-index.json, kept as PriceIndexHistory: the index
    rests on checks the tree does not carry (it has each price's last check only), so these
    months are served as the source published them. Returns the number of items."""
    rel = f"{city.slug}/price-index.json"
    data = _load(root, rel)
    _envelope(data, rel, city.slug)
    now = timezone.now()
    written_at = _written_at(data)
    # The months that had ended in the city when the tree was written (a minute's leeway:
    # a month ending while the source wrote its files)
    ended = last_ended_month(city.tz, min(written_at - WRITTEN_LEEWAY, now))
    cells, seen = [], set()
    raw_items = _array(data, rel)
    for i, raw in enumerate(raw_items):
        item = _clean(rel, i, raw, INDEX_FIELDS, "month")

        def refuse(message, fld, i=i, month=item["month"]):
            return ImportRefused(rel, message, item=i, item_id=month, field=fld)

        if (item["scope"] == "city") != (raw["key"] is None):
            raise refuse("must be null for the city scope, and a key for the others", "key")
        # datasets.md: a format type, or a bairro's or brand's slug (one the city may no
        # longer have: a closed month keeps the cells it was published with)
        pattern = _FORMAT_TYPE if item["scope"] == "format" else _SLUG
        if item["key"] and not pattern.fullmatch(item["key"]):
            what = "format type" if item["scope"] == "format" else f"{item['scope']}'s slug"
            raise refuse(f"must be a {what} for the {item['scope']} scope", "key")
        figures = [item[name] for name in FIGURES[1:]]
        if figures != sorted(figures):
            raise refuse("min_cents ≤ p25_cents ≤ median_cents ≤ p75_cents fails", "p25_cents")
        if item["final"] and not month_is_final(item["month"], city.tz, now):
            raise refuse(f"is true, yet the month has not ended in {city.timezone}", "final")
        if not item["final"] and item["month"] <= ended:
            raise refuse(
                f"is false, yet the month had ended in {city.timezone} when the file was "
                "written (its updated_at)",
                "final",
            )
        cell = (item["month"], item["scope"], item["key"])
        if cell in seen:
            raise refuse("repeated cell (month, scope, key)", "key")
        seen.add(cell)
        if item.pop("final"):
            cells.append(PriceIndexHistory(city=city, **item))
    # The source closed every month that had ended in the city when it wrote the tree, those
    # without cells too: the mirror serves them as the source did (never reopening one). The
    # same minute's leeway as above: a month that ended while the source wrote its files may
    # still be open there (its cells not final, accepted above); closed here with none of
    # them kept, it was lost for good.
    months = {cell.month for cell in cells}
    source_closed = max([ended, *months])
    # An upsert of the tree's final months: the months this database closed itself and the
    # tree lacks stay as they are; a mirror takes the source's closed months whole (a month
    # it closed itself from its own copy of the data, the source closed empty).
    kept = PriceIndexHistory.objects.filter(city=city)
    if mirror:
        kept.filter(month__lte=source_closed).delete()
    else:
        kept.filter(month__in=months).delete()
    PriceIndexHistory.objects.bulk_create(cells, batch_size=BATCH)
    closed = max(source_closed, city.price_index_closed_through)
    City.objects.filter(pk=city.pk).update(price_index_closed_through=closed)
    city.price_index_closed_through = closed
    result.index_cells += len(cells)
    return len(raw_items)


def _csv_rows(
    root: Path,
    rel: str,
    columns: tuple[str, ...] | None,
    cells: Iterator[tuple[object, dict]] | None = None,
) -> int:
    """Data rows of a CSV file (UTF-8, no BOM, RFC 4180), after checking that its header holds
    `columns`, in any order, others besides (datasets.md: the format changes by adding
    fields); `None`: a header of any names (datasets.md names no price-index.csv column).
    `cells` gives, row by row, the id of the JSON twin's item and the cells its row must have
    (_same_cell; a column the header lacks is not compared)."""
    try:
        fh = open(root / rel, newline="", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise _unreadable(rel, exc) from None
    with fh:
        try:
            reader = csv.reader(fh, strict=True)
            header = next(reader, None)
            if header is not None and header[:1] and header[0].startswith("\ufeff"):
                raise ImportRefused(rel, "must not start with a byte order mark")
            if not header:
                raise ImportRefused(rel, "has no header row")
            missing = [c for c in columns or () if c not in header]
            if missing:
                raise ImportRefused(rel, f"the header lacks: {','.join(missing)}")
            position = {name: i for i, name in reversed(list(enumerate(header)))}
            count, blank_at = 0, None  # blank lines: at the end only (an editor's habit)
            for row in reader:
                if not row:
                    blank_at = count if blank_at is None else blank_at
                    continue
                if blank_at is not None:
                    raise ImportRefused(rel, "has a blank line between rows", item=blank_at)
                if len(row) != len(header):
                    raise ImportRefused(rel, f"has {len(row)} cells, not {len(header)}", item=count)
                twin = next(cells, None) if cells is not None else None
                if twin is not None:
                    _compare_row(rel, count, row, position, *twin)
                count += 1
        except (UnicodeDecodeError, csv.Error) as exc:
            where = f" at line {reader.line_num}" if isinstance(exc, csv.Error) else ""
            raise ImportRefused(rel, f"not valid UTF-8 CSV{where} ({exc})") from None
    return count


# CSV cells read as numbers, compared by value: a spreadsheet may write 12.9 for 12.90, or
# -23 for -23.0. Every other cell is compared as text.
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
_NUMBER_COLUMNS = frozenset(
    {
        "id",
        "venue_id",
        "units",
        "litres",
        "price_brl",
        "price_per_litre_brl",
        "service_charge_pct",
        "couvert_brl",
        "confirmations",
        "lat",
        "lng",
        "n",
        "min_brl",
        "p25_brl",
        "median_brl",
        "p75_brl",
    }
)


@dataclass(frozen=True)
class _EndsWith:
    """An expected cell known by its end only (a bar's page address: the site's own origin
    comes first)."""

    text: str


@dataclass(frozen=True)
class _Slug:
    """An expected cell naming something by its slug; a tree exported before 2026-12-07 wrote
    the display name (`name`) there, which is read as well. `name=None`: a bairro without a
    boundary, which no file of such a tree named otherwise (any name is read)."""

    text: str | None
    name: str | None

    def matches(self, found: str) -> bool:
        if self.text is None:
            return found == ""
        return found in (self.text, self.name) or (self.name is None and found != "")


_BOOLEAN_COLUMNS = frozenset({"on_site", "final"})
_COORDINATES = frozenset({"lat", "lng"})
_LINE_BREAK = re.compile(r"\r\n?")


def _same_cell(column: str, found: str, expected) -> bool:
    """Whether a CSV cell says what its JSON twin's value does, as people's tools write it: a
    number by value (a spreadsheet keeps 15 significant digits of a coordinate, so those agree
    to 1e-9 degrees, a tenth of a millimetre), a boolean in any case (TRUE), a line break in a
    cell however the file's lines end (dos2unix turns CRLF into LF)."""
    if isinstance(expected, _EndsWith):
        return found.endswith(expected.text)
    if isinstance(expected, _Slug):
        return expected.matches(found)
    text = "" if expected is None else str(expected)
    if column in _NUMBER_COLUMNS and found and text:
        if not _NUMBER.fullmatch(found):
            return False
        if column in _COORDINATES:
            return math.isclose(float(found), float(text), rel_tol=0, abs_tol=1e-9)
        return Decimal(found) == Decimal(text)
    if column in _BOOLEAN_COLUMNS:
        return found.lower() == text
    return _LINE_BREAK.sub("\n", found) == _LINE_BREAK.sub("\n", text)


def _compare_row(rel: str, index: int, row: list[str], position: dict, item_id, expected: dict):
    """A CSV row against the cells its JSON twin's item gives it (datasets.md: the same rows
    for people, in reais and local dates)."""
    for column, value in expected.items():
        at = position.get(column)
        if at is not None and not _same_cell(column, row[at], value):
            shown = value.text if isinstance(value, _EndsWith | _Slug) else value
            raise ImportRefused(
                rel,
                f"is {row[at]!r:.60}, yet its JSON twin says {shown!r:.60}",
                item=index,
                item_id=item_id,
                field=column,
            )


def _items_again(root: Path, rel: str) -> Iterator:
    """The items of a file the import has read and checked already, one at a time again."""
    _, items = _items_stream(root, rel)
    done = 0
    try:
        for item in items:
            yield item
            done += 1
    except _NotLineDelimited:  # laid out otherwise: the whole file, from where it stopped
        yield from _array(_load(root, rel), rel)[done:]


def _hood_cell(slug: str | None, features: dict[str, str]) -> _Slug:
    return _Slug(slug, features.get(slug))


def _deal_cells(
    root: Path, city: City, listed: set[int], features: dict[str, str]
) -> Iterator[tuple[int, dict]]:
    """The cells of each deals.csv row, from deals.json's items as loaded, with the slugs the
    import stored of each price's bar and its bairro (or, from an older tree, the names of
    them, of its beer and its brand: _Slug). The labels `serving` and `when` are this
    version's wording of the item's own fields: not compared. Adds each price's bar to
    `listed`."""
    bars = {
        bar_id: (_Slug(slug, name), _hood_cell(hood, features))
        for bar_id, slug, name, hood in Venue.objects.filter(city=city).values_list(
            "id", "slug", "name", "neighbourhood__slug"
        )
    }
    beers = dict(Beer.objects.values_list("slug", "name"))
    brands = dict(Brand.objects.values_list("slug", "name"))
    volumes = dict(Format.objects.values_list("code", "volume_ml"))
    for item in _items_again(root, f"{city.slug}/deals.json"):
        venue, hood = bars[item["venue_id"]]
        listed.add(item["venue_id"])
        per_litre = item.get("price_per_litre_cents")
        derived = per_litre is None or (isinstance(per_litre, int) and per_litre >= 0)
        cells = dict(
            zip(
                rows.DEALS_CSV_COLUMNS,
                rows.deal_csv_row(
                    {**item, "price_per_litre_cents": per_litre if derived else None},
                    venue=venue,
                    neighbourhood=hood,
                    volume_ml=volumes[item["format_code"]],
                    serving="",
                    when=None,
                    tz=city.tz,
                ),
                strict=True,
            )
        )
        del cells["serving"], cells["when"]
        cells["beer"] = _Slug(item["beer"], beers.get(item["beer"], item["beer"]))
        cells["brand"] = _Slug(item["brand"], brands.get(item["brand"], item["brand"]))
        if not derived:  # not held to the price (see _deals_from): nothing to compare with
            del cells["price_per_litre_brl"]
        yield item["id"], cells


def _venue_cells(items: list, city: City, features: dict[str, str]):
    """The cells of each venues CSV row from its JSON twin's items, the page's address by
    its end (`/{city}/{slug}`), the bairro by its slug (_Slug)."""
    for item in items:
        cells = dict(
            zip(
                rows.VENUES_CSV_COLUMNS,
                rows.venue_csv_row(item, url=_EndsWith(f"/{city.slug}/{item['slug']}")),
                strict=True,
            )
        )
        cells["neighbourhood"] = _hood_cell(item["neighbourhood"], features)
        yield item["id"], cells


def _index_cells(items: list):
    for item in items:
        yield (
            item["month"],
            dict(zip(rows.PRICE_INDEX_CSV_COLUMNS, rows.price_index_csv_row(item), strict=True)),
        )


def _item_by_id(root: Path, rel: str, item_id: int) -> dict:
    """One item of a file, found again to explain a refusal (read whole: an error path)."""
    for raw in _array(_load(root, rel), rel):
        if isinstance(raw, dict) and raw.get("id") == item_id:
            return raw
    return {}


def _first_difference(item: dict, other: dict) -> str | None:
    """The first key (in the item's order, then the other's) whose values differ."""
    for key in [*item, *(k for k in other if k not in item)]:
        if (
            key not in item
            or key not in other
            or orjson.dumps(item[key]) != orjson.dumps(other[key])
        ):
            return key
    return None


def _digest(item: dict) -> bytes:
    return hashlib.blake2b(orjson.dumps(item, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


def _check_twins(
    root: Path,
    city: City,
    venue_ids: dict[int, str],
    deals: int,
    index_items: int,
    digests,
    features: dict[str, str],
) -> int:
    """The city's files the import does not load: each must be there, well formed and agree
    with the files it loaded: venues.json lists the bars of deals.json's prices, as
    venues-all.json has them, and a CSV has the rows of its JSON twin, in reais and local
    dates. Returns the number of bars in venues.json."""
    slug = city.slug
    listed: set[int] = set()  # the bars of deals.json's prices, as deals.csv is read
    found = _csv_rows(
        root,
        f"{slug}/deals.csv",
        rows.DEALS_CSV_COLUMNS,
        _deal_cells(root, city, listed, features),
    )
    if found != deals:
        raise ImportRefused(f"{slug}/deals.csv", f"has {found} rows, deals.json {deals} items")
    rel = f"{slug}/venues.json"
    data = _load(root, rel)
    _envelope(data, rel, slug)
    venues = _array(data, rel)
    cleaned, seen = [], set()
    for i, raw in enumerate(venues):
        item = _clean(rel, i, raw, VENUE_FIELDS)
        if item["id"] not in venue_ids:
            raise ImportRefused(
                rel, f"not a bar of {slug}/venues-all.json", item=i, item_id=item["id"], field="id"
            )
        if item["id"] in seen:
            raise ImportRefused(rel, "repeated", item=i, item_id=item["id"], field="id")
        seen.add(item["id"])
        if item["id"] not in listed:  # datasets.md: the bars with a price in deals.json
            raise ImportRefused(
                rel,
                f"a bar with no price in {slug}/deals.json",
                item=i,
                item_id=item["id"],
                field="id",
            )
        # The fields datasets.md names, as values: a field one file adds (the format grows by
        # adding) or a number written otherwise (-23, -23.0) is no difference.
        if _digest(item) != digests[item["id"]]:
            twin = f"{slug}/venues-all.json"
            other = _clean(twin, 0, _item_by_id(root, twin, item["id"]), VENUE_FIELDS)
            field = _first_difference(item, other)
            raise ImportRefused(
                rel,
                f"differs from the same bar in {twin} (one of the two files is wrong)",
                item=i,
                item_id=item["id"],
                field=field,
            )
        cleaned.append(raw)
    missing = sorted(listed - seen)
    if missing:
        raise ImportRefused(
            rel, f"lacks bar {missing[0]}, which has prices in {slug}/deals.json", field="items"
        )
    every = _array(_load(root, f"{slug}/venues-all.json"), f"{slug}/venues-all.json")
    index = _array(_load(root, f"{slug}/price-index.json"), f"{slug}/price-index.json")
    for name, columns, cells, expected in (
        (
            "venues.csv",
            rows.VENUES_CSV_COLUMNS,
            _venue_cells(cleaned, city, features),
            len(venues),
        ),
        (
            "venues-all.csv",
            rows.VENUES_CSV_COLUMNS,
            _venue_cells(every, city, features),
            len(venue_ids),
        ),
        ("price-index.csv", None, _index_cells(index), index_items),
    ):
        found = _csv_rows(root, f"{slug}/{name}", columns, cells)
        if found != expected:
            twin = name.replace(".csv", ".json")
            raise ImportRefused(f"{slug}/{name}", f"has {found} rows, {twin} {expected} items")
    return len(venues)


def _check_index(root: Path, counts: dict[str, dict[str, int]]) -> None:
    """index.json lists the cities of cities.json, each with its counts and its files. The
    counts and addresses are not held to the files: they are derived (an export writes its
    own), and datasets.md leaves room in how they are read (cities.json's `deal_count` too)."""
    rel = "index.json"
    data = _load(root, rel)
    _envelope(data, rel)
    listed = []
    for i, item in enumerate(_array(data, rel)):
        if not isinstance(item, dict) or not isinstance(item.get("city"), str):
            raise ImportRefused(rel, "must be a city's slug", item=i, field="city")
        if item["city"] not in counts:
            raise ImportRefused(rel, "not a city of cities.json", item=i, field="city")
        slug = item["city"]
        listed.append(slug)
        for key in ("counts", "files"):
            if not isinstance(item.get(key), dict):
                raise ImportRefused(rel, "must be an object", item=i, item_id=slug, field=key)
    if sorted(listed) != sorted(counts):
        raise ImportRefused(rel, "must list each city of cities.json once", field="items")
    if not isinstance(data.get("files"), dict):
        raise ImportRefused(rel, "must name cities.json and catalog.json", field="files")


def _withdraw(city: City, venue_ids: set[int], deal_ids: set[int], result: ImportResult) -> None:
    """--mirror: the city's bars missing from venues-all.json (which lists closed ones too:
    the source deleted them) are deleted with their prices, and the prices deals.json would
    list (`published_deals`: published or disputed, at a bar open now) but does not are
    retired (retired, suspended or deleted at the source: the tree does not say which); a
    later tree that lists them again publishes them again. A closed bar's prices are in no
    deals.json, so they stay as they were."""
    gone = [
        pk
        for pk in Venue.objects.filter(city=city).values_list("pk", flat=True)
        if pk not in venue_ids
    ]
    for start in range(0, len(gone), BATCH):
        Venue.objects.filter(pk__in=gone[start : start + BATCH]).delete()
    result.withdrawn_venues += len(gone)
    gone = [
        pk for pk in published_deals(city=city).values_list("pk", flat=True) if pk not in deal_ids
    ]
    for start in range(0, len(gone), BATCH):
        result.withdrawn_deals += Deal.objects.filter(pk__in=gone[start : start + BATCH]).update(
            status=DealStatus.RETIRED
        )


def _withdraw_neighbourhoods(city: City, features: set[str], result: ImportResult) -> None:
    """--mirror: the city's bairros that neighbourhoods.geojson does not have lose their
    boundary (the source has none), and those no bar names any more are deleted."""
    others = Neighbourhood.objects.filter(city=city).exclude(slug__in=features)
    others.exclude(boundary=None).update(boundary=None)
    deleted, _ = others.filter(venues=None).delete()
    result.withdrawn_neighbourhoods += deleted


def _withdraw_catalog(catalog: _Catalog, result: ImportResult) -> None:
    """--mirror: the beers, brands and formats catalog.json does not list are deleted, but for
    those a row here still names (a price the mirror retired, a submission or a menu draft
    waiting here): they stay, and a note says how many."""
    kept = 0
    for model, key, listed in (
        (Beer, "slug", catalog.beers),
        (Brand, "slug", catalog.brands),  # after the beers: a brand is named by its beers
        (Format, "code", catalog.formats),
    ):
        for obj in model.objects.exclude(**{f"{key}__in": listed}):
            if _named_elsewhere(obj):
                kept += 1
            else:
                obj.delete()
                result.withdrawn_catalog += 1
    if kept:
        result.notes.append(
            f"kept {kept} brands, beers or formats catalog.json no longer lists: "
            "prices, submissions or menu drafts here still name them"
        )


def _named_elsewhere(obj) -> bool:
    """Whether any row points at `obj` (every relation to its model, whatever its on_delete)."""
    return any(
        relation.related_model._base_manager.filter(**{relation.field.name: obj}).exists()
        for relation in obj._meta.related_objects
    )


IMPORTED_TABLES = (City, Neighbourhood, Venue, Brand, Beer, Format, Deal, PriceCheck)


def _reset_sequences() -> None:
    """After rows with explicit ids, the next id must come after them (PostgreSQL)."""
    statements = connection.ops.sequence_reset_sql(no_style(), IMPORTED_TABLES)
    if statements:
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)


def _refuse_unlisted_cities(root: Path, cities: list[City]) -> None:
    """A folder of a city's files that cities.json does not list: a tree of two exports, or
    a city left out by mistake; loading the rest would drop it without a word."""
    listed = {city.slug for city in cities}
    for path in sorted(root.iterdir()):
        if path.name in listed or not path.is_dir():
            continue
        if any((path / name).exists() for name in CITY_FILES):
            raise ImportRefused(
                f"{path.name}/", "holds a city's files, yet cities.json does not list the city"
            )


def datasets_import(
    directory: Path, *, progress: bool | None = None, mirror: bool = False
) -> ImportResult:
    """Load the tree in `directory` (datasets.md layout). All or nothing: raises
    ImportRefused, with the database unchanged, on the first malformed file or item.
    With `mirror`, what the database publishes and the tree does not is withdrawn
    (_withdraw), so that a mirror follows its source's removals too."""
    root = Path(directory)
    bar = sys.stderr.isatty() if progress is None else progress
    result = ImportResult()
    with transaction.atomic():
        cities = _import_cities(root, result)
        _refuse_unlisted_cities(root, cities)
        catalog = _import_catalog(root, result)
        venues_of: dict[int, str] = {}
        venue_digests: dict[str, dict[int, bytes]] = {}
        deals_of: set[int] = set()
        counts: dict[str, dict[str, int]] = {}  # per city, as index.json gives them
        for city in tqdm(cities, disable=not bar, desc="cities", unit="city", file=sys.stderr):
            hoods, features = _import_neighbourhoods(root, city, result)
            venue_ids = _import_venues(root, city, hoods, result, venues_of, venue_digests)
            deals = _import_deals(root, city, venue_ids, result, bar, deals_of, catalog)
            if mirror:
                _withdraw(city, set(venue_ids), deals_of, result)
                _withdraw_neighbourhoods(city, set(features), result)
            index_items = _import_price_index(root, city, result, mirror)
            counts[city.slug] = {
                "deals": deals,
                "venues": _check_twins(
                    root,
                    city,
                    venue_ids,
                    deals,
                    index_items,
                    venue_digests.pop(city.slug),
                    features,
                ),
                "venues_all": len(venue_ids),
                "neighbourhoods": len(features),
            }
        _check_index(root, counts)
        if mirror:
            _withdraw_catalog(catalog, result)
            result.withdrawn_cities = (
                City.objects.filter(active=True)
                .exclude(pk__in=[city.pk for city in cities])
                .update(active=False)
            )
        _reset_sequences()
        datasets_schedule_export()  # the served files and the live answers follow
    _analyze()
    return result


def _analyze() -> None:
    """Fresh planner statistics for the tables an import filled (PostgreSQL): autovacuum
    comes to them later, or never where it is off, and until then the plans assume the old
    sizes (cheapest with a 10 km radius took 1.6 s on a city of 100,000 imported prices, 133 ms
    after ANALYZE). Run after the commit, so it counts the new rows; inside a caller's
    transaction (tests) it sees them too."""
    if connection.vendor != "postgresql":
        return
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in IMPORTED_TABLES)
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")  # a big table's sample, at most seconds
        try:
            cursor.execute(f"ANALYZE {tables}")
        finally:
            cursor.execute("RESET statement_timeout")
