"""Export of the open datasets (datasets.md) and keeping them fresh.

Rows are read with `.values().iterator()` (server-side cursors on PostgreSQL) and written as
they come to files in a temporary folder, so memory stays flat whatever the size. The whole
tree is then uploaded under a new generation and `current.json` switched to it (see
generations.py). On PostgreSQL the export reads one REPEATABLE READ snapshot, so counts,
`cities.json` and the per-city files agree with each other.
"""

import contextlib
import csv
import datetime as dt
import hashlib
import logging
import math
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, Max, Q, Sum, TextField
from django.db.models.functions import Cast
from django.utils import timezone
from tqdm import tqdm

from beers import labels
from beers.answers import DATASETS_LICENSE, answers_changed
from beers.geo import boundary_problem
from beers.models import (
    Beer,
    Brand,
    City,
    Deal,
    Format,
    Neighbourhood,
    PriceCheck,
    PriceIndexHistory,
    Venue,
)
from beers.selectors.catalog import catalog, cities_summary
from beers.selectors.price_index import month_ends_after, price_index
from beers.selectors.published import UnixSeconds, published_deals
from beers.services import price_index_close_ended

from . import patch, pgcopy, rows
from .generations import FileInfo, Hashes, prune, publish, read_pointer
from .snapshot import batch_session, export_snapshot
from .storage import datasets_storage

logger = logging.getLogger(__name__)

LICENSE = DATASETS_LICENSE
API_PREFIX = "/api/v1/"
CITY_FILES = (
    "deals.json",
    "deals.csv",
    "venues.json",
    "venues.csv",
    "venues-all.json",
    "venues-all.csv",
    "price-index.json",
    "price-index.csv",
    "neighbourhoods.geojson",
)
TOP_FILES = ("index.json", "cities.json", "catalog.json")
CHUNK = 2000
LOCK_KEY = "datasets:export-lock"
PENDING_KEY = "datasets:export-pending"

DEAL_FIELDS = (
    "id",
    "venue_id",
    "beer__slug",
    "beer__brand__slug",
    "brand__slug",
    "format_id",
    "format__code",
    "units",
    "volume_ml",
    "packaging",
    "kind",
    "price_cents",
    "open_bar_minutes",
    "service_charge_pct",
    "couvert_cents",
    "conditions",
    "valid_from",
    "valid_until",
    "schedules_json",
    "verified_unix",
    "created_unix",
    "confirmations",
    "open_disputes",
    "status",
    "venue__slug",
    "venue__neighbourhood__slug",
)
VENUE_FIELDS = (
    "id",
    "slug",
    "name",
    "kind",
    "on_site",
    "neighbourhood__slug",
    "address",
    "lat",
    "lng",
    "instagram",
    "opening_hours",
    "attributes",
    "status",
    "created_unix",
)


@dataclass
class ExportResult:
    updated_at: str
    fingerprint: str
    generation: str | None = None  # None when written to a plain folder
    files: dict[str, FileInfo] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0


def _progress_wanted(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else progress


# --- writers ---------------------------------------------------------------------------------


class JsonWriter:
    """One JSON object: the header's fields, then arrays written one element per line as the
    elements come (nothing is held in memory)."""

    def __init__(self, fh, header: dict):
        self.fh, self.count = fh, 0
        body = orjson.dumps(header)
        fh.write(body[:-1])  # without the closing brace
        self._empty = body == b"{}"

    def _key(self, key: str) -> None:
        self.fh.write((b"" if self._empty else b",") + orjson.dumps(key) + b":")
        self._empty = False

    def begin(self, key: str) -> None:
        self._key(key)
        self.fh.write(b"[")
        self.count = 0

    def add(self, item) -> None:
        self.fh.write((b",\n" if self.count else b"\n") + orjson.dumps(item))
        self.count += 1

    def end(self) -> int:
        self.fh.write(b"\n]" if self.count else b"]")
        return self.count

    def field(self, key: str, value) -> None:
        self._key(key)
        self.fh.write(orjson.dumps(value))

    def close(self) -> None:
        self.fh.write(b"}\n")


def _open_csv(path: Path, columns: Iterable[str]):
    fh = open(path, "w", newline="", encoding="utf-8")  # noqa: SIM115 - closed by the caller
    writer = csv.writer(fh, lineterminator="\r\n")
    writer.writerow(columns)
    return fh, writer


def _envelope(updated_at: str, **extra) -> dict:
    return {
        "updated_at": updated_at,
        "license": LICENSE,
        "attribution": settings.ATTRIBUTION,
        **extra,
    }


def _write_json(
    path: Path, header: dict, arrays: dict[str, Iterable], tail: dict | None = None
) -> None:
    """An envelope whose arrays are written one element per line, then `tail`'s fields."""
    with open(path, "wb") as fh:
        out = JsonWriter(fh, header)
        for key, items in arrays.items():
            out.begin(key)
            for item in items:
                out.add(item)
            out.end()
        for key, value in (tail or {}).items():
            out.field(key, value)
        out.close()


# --- the data --------------------------------------------------------------------------------


def data_fingerprint() -> str:
    """A cheap digest that changes when the published data changes (new, edited, moderated or
    checked prices; new or closed bars; catalogue or city changes; an imported index), or the
    site's name and address the files carry. Seven aggregate queries.

    Edits it cannot see (a renamed bar, say) reach the files at the next forced export
    (DATASETS_MAX_AGE_SECONDS) or when a service calls datasets_schedule_export().
    """
    parts = [
        Deal.objects.aggregate(
            n=Count("id"),
            max_id=Max("id"),
            verified=Max("verified_at"),
            created=Max("created_at"),
            confirmations=Sum("confirmations"),
            disputes=Sum("open_disputes"),
            price=Sum("price_cents"),
            published=Count("id", filter=Q(status="published")),
            disputed=Count("id", filter=Q(status="disputed")),
        ),
        Venue.objects.aggregate(
            n=Count("id"), max_id=Max("id"), open=Count("id", filter=Q(status="open"))
        ),
        PriceCheck.objects.aggregate(n=Count("id"), max_id=Max("id")),
        City.objects.aggregate(n=Count("id"), active=Count("id", filter=Q(active=True))),
        Neighbourhood.objects.aggregate(n=Count("id"), max_id=Max("id")),
        PriceIndexHistory.objects.aggregate(n=Count("id"), max_id=Max("id")),
        {
            "brands": Brand.objects.count(),
            "beers": Beer.objects.aggregate(n=Count("id"), max_id=Max("id")),
            "formats": Format.objects.count(),
        },
        # what the files say besides the data: their attribution and the bars' addresses
        # (an import run beside `make run` on another port exported under the default ones)
        (settings.ATTRIBUTION, settings.SITE_URL),
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _deals_and_csv(
    city: City,
    folder: Path,
    header: dict,
    formats: dict[int, Format],
    bar: bool,
    *,
    kept: patch.Kept | None = None,
) -> tuple[int, set[int]]:
    """deals.json and deals.csv; returns how many prices, and the ids of their bars. With
    `kept` (PostgreSQL, in the export's own transaction): patching the last export's files
    kept there."""
    total = published_deals(city=city).count() if bar else None
    with tqdm(
        total=total, disable=not bar, desc=f"{city.slug} deals", unit="row", file=sys.stderr
    ) as progress:
        if pgcopy.enabled():
            return pgcopy.write_deals(
                city,
                folder,
                lambda fh: JsonWriter(fh, header),
                formats,
                tick=progress.update,
                kept=kept,
            )
        return _deals_portable(city, folder, header, formats, progress.update)


def _deals_portable(
    city: City, folder: Path, header: dict, formats: dict[int, Format], tick
) -> tuple[int, set[int]]:
    """The same files through datasets.rows, orjson and csv (SQLite, or DATASETS_COPY off)."""
    tz = city.tz
    qs = (
        published_deals(city=city)
        .annotate(
            verified_unix=UnixSeconds("verified_at"),
            created_unix=UnixSeconds("created_at"),
            # the JSON as text, parsed by orjson: Django's JSONField converter is the slow part
            schedules_json=Cast("schedules", TextField()),
        )
        .order_by("id")
        .values(*DEAL_FIELDS)
    )
    # Few distinct servings and schedules repeat over many prices: label each once.
    servings: dict[tuple, str] = {}
    whens: dict[tuple, str | None] = {}
    venues: set[int] = set()
    with open(folder / "deals.json", "wb") as jf, labels.language("pt-BR"):
        csv_fh, writer = _open_csv(folder / "deals.csv", rows.DEALS_CSV_COLUMNS)
        with csv_fh:
            items = JsonWriter(jf, header)
            items.begin("items")
            for row in qs.iterator(chunk_size=CHUNK):
                row["schedules"] = orjson.loads(row["schedules_json"])
                item = rows.deal_item(row)
                items.add(item)
                venues.add(row["venue_id"])
                serving_key = (row["format_id"], row["units"], row["packaging"])
                serving = servings.get(serving_key)
                if serving is None:
                    serving = servings[serving_key] = labels.serving_label(
                        fmt=formats[row["format_id"]],
                        units=row["units"],
                        packaging=row["packaging"],
                        lang="pt-BR",
                    )
                when_key = (row["schedules_json"], row["valid_from"], row["valid_until"])
                if when_key in whens:
                    when = whens[when_key]
                else:
                    when = whens[when_key] = labels.schedule_text(
                        row["schedules"],
                        "pt-BR",
                        valid_from=row["valid_from"],
                        valid_until=row["valid_until"],
                    )
                writer.writerow(
                    rows.deal_csv_row(
                        item,
                        venue=row["venue__slug"],
                        neighbourhood=row["venue__neighbourhood__slug"],
                        volume_ml=row["volume_ml"],
                        serving=serving,
                        when=when,
                        tz=tz,
                    )
                )
                tick()
            count = items.end()
            items.close()
    return count, venues


def _venues(city: City, folder: Path, header: dict, listed: set[int]) -> tuple[int, int]:
    """`venues` (the bars whose ids are `listed`: those with a price in deals.json) and
    `venues-all` (every bar of the city), JSON and CSV, in one pass; returns their counts."""
    if pgcopy.enabled():
        return pgcopy.write_venues(city, folder, lambda fh: JsonWriter(fh, header), listed)
    base = f"{settings.SITE_URL}/{city.slug}/"
    with contextlib.ExitStack() as stack:
        outputs = []
        for stem in ("venues", "venues-all"):
            jf = stack.enter_context(open(folder / f"{stem}.json", "wb"))  # noqa: SIM115
            csv_fh, writer = _open_csv(folder / f"{stem}.csv", rows.VENUES_CSV_COLUMNS)
            stack.enter_context(csv_fh)
            items = JsonWriter(jf, header)
            items.begin("items")
            outputs.append((items, writer))
        (with_price, with_price_csv), (every, every_csv) = outputs
        for row in (
            Venue.objects.filter(city=city)
            .annotate(created_unix=UnixSeconds("created_at"))
            .order_by("id")
            .values(*VENUE_FIELDS)
            .iterator(chunk_size=CHUNK)
        ):
            item = rows.venue_item(row)
            line = rows.venue_csv_row(item, url=base + item["slug"])
            every.add(item)
            every_csv.writerow(line)
            if item["id"] in listed:
                with_price.add(item)
                with_price_csv.writerow(line)
        counts = []
        for items, _ in outputs:
            counts.append(items.end())
            items.close()
    return counts[0], counts[1]


def ring_is_ccw(ring: list) -> bool:
    """Shoelace: a positive area means counter-clockwise (lon/lat axes)."""
    area = 0.0
    for (x1, y1, *_), (x2, y2, *_) in zip(ring, ring[1:], strict=False):
        area += x1 * y2 - x2 * y1
    return area > 0


def geometry_rfc7946(geometry: dict) -> dict:
    """The geometry with RFC 7946's winding: outer rings counter-clockwise, holes clockwise."""

    def polygon(rings):
        return [
            ring if ring_is_ccw(ring) == (i == 0) else list(reversed(ring))
            for i, ring in enumerate(rings)
        ]

    if geometry["type"] == "Polygon":
        return {"type": "Polygon", "coordinates": polygon(geometry["coordinates"])}
    return {"type": "MultiPolygon", "coordinates": [polygon(p) for p in geometry["coordinates"]]}


def _neighbourhoods(city: City, folder: Path) -> int:
    """Bairros with a Polygon/MultiPolygon boundary (those without one are not features)."""
    with open(folder / "neighbourhoods.geojson", "wb") as fh:
        features = JsonWriter(fh, {"type": "FeatureCollection"})
        features.begin("features")
        for slug, name, boundary in (
            Neighbourhood.objects.filter(city=city)
            .exclude(boundary=None)
            .order_by("slug")
            .values_list("slug", "name", "boundary")
            .iterator(chunk_size=200)
        ):
            if boundary_problem(boundary):  # written before it was checked: left out
                logger.warning("datasets: bairro %s/%s has no usable boundary", city.slug, slug)
                continue
            features.add(
                {
                    "type": "Feature",
                    "properties": {"slug": slug, "name": name},
                    "geometry": geometry_rfc7946(boundary),
                }
            )
        count = features.end()
        features.close()
    return count


class _Ahead:
    """The cities' price indexes and the data fingerprint, computed while the other files
    are written: on PostgreSQL, inside the export's own transaction, by a second connection
    sharing its snapshot (`pg_export_snapshot`), in a thread; elsewhere when asked. They are
    work for the database, the deals mostly for Python: they run while the rows are refreshed
    and the deals and venue files written, with half the export's parallel workers (the
    export's own connection keeps a core busy). On 1M prices, 2 cores, after 1% changed: the
    export took 1.9-2.0 s so, against 2.2 s with no worker and 2.4-3.7 s with two (they then
    slowed the deals files from 0.4 to 0.8-2.0 s), and 2.4-2.9 s when they began after the
    refresh. Alone, the index takes 0.83 s with two workers and the fingerprint 0.15 s."""

    FINGERPRINT = "fingerprint"

    def __init__(self, cities: list[City], *, ahead: bool):
        self.thread = None
        self.futures: dict = {}
        if not ahead:
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_export_snapshot()")
            snapshot = cursor.fetchone()[0]
        self.futures = {city.id: Future() for city in cities}
        self.futures[self.FINGERPRINT] = Future()
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._run, args=(snapshot, cities), name="price-index", daemon=True
        )
        self.thread.start()

    def _run(self, snapshot: str, cities: list[City]) -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    cursor.execute(f"SET TRANSACTION SNAPSHOT {pgcopy.literal(snapshot)}")
                    batch_session(cursor)
                    # Half the workers: the export's own connection keeps a core busy.
                    workers = int(settings.DATASETS_PARALLEL_WORKERS) // 2
                    cursor.execute(f"SET LOCAL max_parallel_workers_per_gather = {workers}")
                for city in cities:
                    if self.stop.is_set():
                        break
                    self.futures[city.id].set_result(_index_of(city))
                if not self.stop.is_set():
                    self.futures[self.FINGERPRINT].set_result(data_fingerprint())
        except BaseException as exc:  # handed to the export's thread, which raises it
            for future in self.futures.values():
                if not future.done():
                    future.set_exception(exc)
        finally:
            connection.close()

    def cells(self, city: City) -> list[dict]:
        future = self.futures.get(city.id)
        return future.result() if future else _index_of(city)

    def fingerprint(self) -> str:
        future = self.futures.get(self.FINGERPRINT)
        return future.result() if future else data_fingerprint()

    def shutdown(self) -> None:
        """Wait for the thread (told to stop when the export failed before the end)."""
        if self.thread is not None:
            self.stop.set()
            self.thread.join()


def _index_of(city: City) -> list[dict]:
    """The city's price index as the export's snapshot has it (its City row read there, after
    the closing)."""
    return price_index(city=city, closed=city.price_index_closed_through)


def _price_index(city: City, folder: Path, header: dict, cells: list[dict]) -> int:
    _write_json(folder / "price-index.json", header, {"items": cells})
    fh, writer = _open_csv(folder / "price-index.csv", rows.PRICE_INDEX_CSV_COLUMNS)
    with fh:
        for cell in cells:
            writer.writerow(rows.price_index_csv_row(cell))
    return len(cells)


def _write_cities(
    root: Path,
    cities: list[City],
    updated_at: str,
    formats: dict[int, Format],
    indexes: _Ahead,
    bar: bool,
    kept: patch.Kept | None = None,
    hashes: Hashes | None = None,
) -> dict[str, dict[str, int]]:
    """Each city's files; returns their counts."""
    counts: dict[str, dict[str, int]] = {}
    for city in tqdm(cities, disable=not bar, desc="cities", unit="city", file=sys.stderr):
        folder = root / city.slug
        folder.mkdir(parents=True, exist_ok=True)
        header = _envelope(updated_at, city=city.slug)
        deals, listed = _deals_and_csv(city, folder, header, formats, bar, kept=kept)
        if hashes is not None:  # hashed while the rest is written
            hashes.add(f"{city.slug}/deals.json", f"{city.slug}/deals.csv")
        venues, venues_all = _venues(city, folder, header, listed)
        hoods = _neighbourhoods(city, folder)
        _price_index(city, folder, header, indexes.cells(city))
        counts[city.slug] = {
            "deals": deals,
            "venues": venues,
            "venues_all": venues_all,
            "neighbourhoods": hoods,
        }
    return counts


def _write_tree(
    root: Path, *, now: dt.datetime, bar: bool, hashes: Hashes
) -> tuple[str, dict, str]:
    """Every file of datasets.md under `root`; index.json last; each city's deals files
    handed to `hashes` once written. Returns (updated_at, counts, fingerprint)."""
    with export_snapshot() as own:
        updated_at = timezone.now().astimezone(dt.UTC).isoformat(timespec="seconds")
        formats = {f.id: f for f in Format.objects.all()}
        _write_json(root / "catalog.json", _envelope(updated_at), catalog())
        cities = list(City.objects.filter(active=True).order_by("slug"))
        # The last export's files kept (PostgreSQL, in the export's own snapshot): the deals
        # files are patched from there.
        cached = own and pgcopy.enabled()
        kept = None
        # From here the price index is computed beside the rest, the rows' refresh included.
        ahead = _Ahead(cities, ahead=cached)
        try:
            if cached:
                with tqdm(
                    total=len(cities), disable=not bar, desc="rows", unit="city", file=sys.stderr
                ) as progress:
                    refreshed = pgcopy.refresh_rows(cities, formats, tick=progress.update)
                kept = patch.Kept(patch.work_dir(), refreshed.tokens, refreshed.changed)
                # Once committed (and before another export may start): this export's
                # copies are the ones to patch, the others go (a failure to delete one is
                # logged: the files are written, and the next export prunes again).
                transaction.on_commit(kept.prune, robust=True)
            elif own:  # PostgreSQL with DATASETS_COPY off: no rows kept, no changes piling up
                pgcopy.forget_rows()
                patch.forget()
            counts = _write_cities(root, cities, updated_at, formats, ahead, bar, kept, hashes)
            fingerprint = ahead.fingerprint()
        finally:
            ahead.shutdown()
        # After the city files, with their counts: the same figures, and no second count.
        summary = cities_summary(
            counts={slug: (c["deals"], c["venues"]) for slug, c in counts.items()}
        )
        _write_json(root / "cities.json", _envelope(updated_at), {"items": summary})
    index_items = [
        {
            "city": slug,
            "counts": counts[slug],
            "files": {name: f"{API_PREFIX}{slug}/{name}" for name in CITY_FILES},
        }
        for slug in sorted(counts)
    ]
    _write_json(
        root / "index.json",
        _envelope(updated_at),
        {"items": index_items},
        tail={"files": {name: f"{API_PREFIX}{name}" for name in ("cities.json", "catalog.json")}},
    )
    return updated_at, counts, fingerprint


def tree_files(counts: dict) -> list[str]:
    """Relative names of every file of a tree, index.json last."""
    names = ["cities.json", "catalog.json"]
    for slug in sorted(counts):
        names += [f"{slug}/{name}" for name in CITY_FILES]
    return names + ["index.json"]


def _close_index_months(now: dt.datetime) -> None:
    """Before the export's snapshot, which then reads the months closed: a final month's cells
    are written as they were when it closed (datasets.md: `final` once the month has ended).
    A batch job (the whole index, once a month per city), not a live read's 5 s; a city with
    nothing to close costs no statement beyond the list of cities."""
    for city in City.objects.filter(active=True):
        price_index_close_ended(city, now)


def _drop_other_cities(root: Path, counts: dict) -> None:
    """A plain tree written over an older one: the files of cities it no longer has go (the
    tree would list a city its folders hold no more, and an import refuses a folder of a city
    that cities.json does not list). Only the datasets' own file names are deleted."""
    for folder in root.iterdir():
        if folder.name in counts or not folder.is_dir() or folder.is_symlink():
            continue
        ours = [folder / name for name in CITY_FILES if (folder / name).is_file()]
        if not ours:
            continue
        for path in ours:
            path.unlink()
        with contextlib.suppress(OSError):  # it holds other files: it stays
            folder.rmdir()


def datasets_export(
    *, directory: Path | None = None, now: dt.datetime | None = None, progress: bool | None = None
) -> ExportResult:
    """Write every dataset file. With `directory`, as a plain tree there (the layout that
    import_datasets reads); otherwise to `storages["datasets"]` as a new generation, served
    once complete, older generations pruned."""
    started = time.monotonic()
    now = now or timezone.now()
    bar = _progress_wanted(progress)
    _close_index_months(now)
    with contextlib.ExitStack() as stack:
        if directory is None:
            # Beside the kept copies (datasets.patch): on one file system, they are links.
            work = Path(settings.DATASETS_WORK_DIR)
            work.mkdir(parents=True, exist_ok=True)
            root = Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="export-", dir=work))
            )
        else:
            root = Path(directory)
            root.mkdir(parents=True, exist_ok=True)
        hashes = stack.enter_context(Hashes(root))
        updated_at, counts, fingerprint = _write_tree(root, now=now, bar=bar, hashes=hashes)
        if directory is not None:
            _drop_other_cities(root, counts)
        order = tree_files(counts)
        files = hashes.results(order)
        result = ExportResult(
            updated_at=updated_at, fingerprint=fingerprint, files=files, counts=counts
        )
        if directory is None:
            storage = datasets_storage()
            result.generation = publish(
                storage,
                root=root,
                files=files,
                now=now,
                order=order,
                extra={
                    "updated_at": updated_at,
                    "fingerprint": fingerprint,
                    "final_at": _index_turns_final_at(now),
                },
            )
            prune(
                storage,
                now=now,
                grace_seconds=settings.DATASETS_GRACE_SECONDS,
            )
    result.seconds = time.monotonic() - started
    logger.info("datasets: exported %s in %.1fs", result.generation or directory, result.seconds)
    return result


def _index_turns_final_at(now: dt.datetime) -> int | None:
    """Unix time of the first month end after `now` in any active city's zone: the files'
    price index then says `final` for a month it exported as open, so they are due again."""
    ends = [
        month_ends_after(ZoneInfo(name), now)
        for name in City.objects.filter(active=True).values_list("timezone", flat=True).distinct()
    ]
    return math.ceil(min(ends).timestamp()) if ends else None


def datasets_export_if_changed(
    *, force: bool = False, now: dt.datetime | None = None
) -> ExportResult | None:
    """Export when the data changed since the served generation, a month ended in a city
    since (its index turns `final`), the generation is older than DATASETS_MAX_AGE_SECONDS,
    or `force`. One export at a time: a request that finds one running leaves a mark, and the
    next run exports."""
    now = now or timezone.now()
    pointer = read_pointer(datasets_storage())
    pending = bool(cache.get(PENDING_KEY))
    if not force and not pending and pointer is not None:
        age = now.timestamp() - pointer.get("created_at", 0)
        max_age = settings.DATASETS_MAX_AGE_SECONDS
        final_at = pointer.get("final_at")
        month_ended = final_at is not None and now.timestamp() >= final_at
        if age < max_age and not month_ended and pointer.get("fingerprint") == data_fingerprint():
            return None
    if not cache.add(LOCK_KEY, 1, timeout=settings.DATASETS_LOCK_SECONDS):
        cache.set(PENDING_KEY, 1, timeout=None)
        return None
    try:
        cache.delete(PENDING_KEY)
        return datasets_export(now=now, progress=False)
    finally:
        cache.delete(LOCK_KEY)


def datasets_export_if_month_ended(*, now: dt.datetime | None = None) -> ExportResult | None:
    """Export when a month has ended in a city since the served generation (its index turns
    `final`, datasets.md), else nothing. Reads the pointer alone (no database query), so the
    beat runs it every minute: the files say `final` within a minute of the month's end,
    not within the 5-minute check of the data (datasets_export_if_changed)."""
    now = now or timezone.now()
    pointer = read_pointer(datasets_storage())
    final_at = pointer.get("final_at") if pointer is not None else None
    if final_at is None or now.timestamp() < final_at:
        return None
    return datasets_export_if_changed(now=now)


SCHEDULED_KEY = "datasets:export-scheduled"


def datasets_schedule_export() -> None:
    """Ask for a fresh export once the current transaction commits (after a moderation
    approval or an admin edit, say), DATASETS_EXPORT_DELAY_SECONDS later. The requests of that
    window share one export: the first enqueues it, the others find it waiting (it reads the
    data when it runs, after every one of them committed). Run eagerly (no broker), each
    request exports at once."""
    from .tasks import datasets_export_if_changed as task

    answers_changed()  # the live answers too, at once
    delay = settings.DATASETS_EXPORT_DELAY_SECONDS

    def enqueue() -> None:
        marked = False
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            try:
                if not cache.add(SCHEDULED_KEY, 1, delay):
                    return  # one is already waiting to run
                marked = True
            except Exception:  # no cache: an export per request, as before the mark
                logger.warning("datasets: cache unavailable, export not shared", exc_info=True)
        try:
            task.apply_async(kwargs={"force": True}, countdown=delay)
        except Exception:
            if marked:  # nothing waits to run: the next request must enqueue
                cache.delete(SCHEDULED_KEY)
            raise

    # robust: the data is committed; a broker down costs the export, never the request
    transaction.on_commit(enqueue, robust=True)
