"""Names of the small catalogue tables (formats, beers, brands, bairros), kept per process.

Joining them into every ranking query multiplied PostgreSQL's planning time by eight (2.7 ms
vs 0.36 ms warm, measured on 1M prices); they change rarely, so each process keeps a snapshot
and reloads it when it is older than REFRESH_SECONDS, when a row names an id it lacks, or when
the data version (beers.data_version) moved on since it was loaded: an answer computed for a
version is computed with that version's names (a bar renamed in another process, then cached
for 10 minutes under the old name, was the alternative); elsewhere (pages) the version is read
at most once every VERSION_CHECK_SECONDS.
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from beers import data_version
from beers.models import Beer, Brand, Format, Neighbourhood
from beers.outage import STORE

REFRESH_SECONDS = 60
VERSION_CHECK_SECONDS = 1.0


@dataclass(frozen=True)
class FormatName:
    code: str
    type: str
    volume_ml: int
    label_pt: str
    label_en: str


@dataclass(frozen=True)
class Snapshot:
    formats: dict[int, FormatName]
    beers: dict[int, str]
    brands: dict[int, str]
    neighbourhoods: dict[int, tuple[str, str]]  # id -> (slug, name)
    loaded_at: float
    version: object = None  # the global data version read before loading (None: unknown)

    def has(self, *, format_id=None, beer_id=None, brand_id=None, neighbourhood_id=None) -> bool:
        return (
            (format_id is None or format_id in self.formats)
            and (beer_id is None or beer_id in self.beers)
            and (brand_id is None or brand_id in self.brands)
            and (neighbourhood_id is None or neighbourhood_id in self.neighbourhoods)
        )


_lock = threading.Lock()
_snapshot: Snapshot | None = None
_version_checked_at = 0.0
_expected: ContextVar = ContextVar("names_expected_version", default=None)


@contextmanager
def expected_version(version) -> Iterator[None]:
    """Inside: snapshots are those of data version `version` (the one an answer is computed
    at, read before it; None: unknown)."""
    token = _expected.set(version)
    try:
        yield
    finally:
        _expected.reset(token)


def _version_now():
    """The global data version, or None when the store does not answer (then known not to,
    for a while: beers.outage)."""
    if STORE.down():
        return None
    try:
        return data_version.read([data_version.VERSION_KEY])[0]
    except Exception:
        STORE.failed()
        return None


def _load(version) -> Snapshot:
    return Snapshot(
        formats={
            row[0]: FormatName(*row[1:])
            for row in Format.objects.values_list(
                "id", "code", "type", "volume_ml", "label_pt", "label_en"
            )
        },
        beers=dict(Beer.objects.values_list("id", "name")),
        brands=dict(Brand.objects.values_list("id", "name")),
        neighbourhoods={
            row[0]: (row[1], row[2])
            for row in Neighbourhood.objects.values_list("id", "slug", "name")
        },
        loaded_at=time.monotonic(),
        version=version,
    )


def _knows(snapshot: Snapshot, row: dict) -> bool:
    return snapshot.has(
        format_id=row.get("format_id"),
        beer_id=row.get("beer_id"),
        brand_id=row.get("brand_id"),
        neighbourhood_id=row.get("venue__neighbourhood_id"),
    )


def snapshot(rows: list[dict] | None = None) -> Snapshot:
    """The current snapshot, reloaded when stale or when `rows` name an unknown id."""
    global _snapshot, _version_checked_at
    current = _snapshot
    now = time.monotonic()
    fresh = current is not None and now - current.loaded_at < REFRESH_SECONDS
    expected = _expected.get()
    if fresh and expected is None and now - _version_checked_at >= VERSION_CHECK_SECONDS:
        _version_checked_at = now
        expected = _version_now()
    if fresh and expected is not None:
        fresh = expected == current.version
    if fresh and rows:
        fresh = all(_knows(current, r) for r in rows)
    if fresh:
        return current
    with _lock:
        # another thread may have loaded it meanwhile (every request after a change finds
        # the same snapshot stale): that one serves, unless it lacks an id or a version
        latest = _snapshot
        if (
            latest is not current
            and latest is not None
            and (expected is None or latest.version == expected)
            and (not rows or all(_knows(latest, r) for r in rows))
        ):
            return latest
        _snapshot = _load(expected if expected is not None else _version_now())
        return _snapshot


def forget() -> None:
    """Drop the snapshot (tests; other changes reach it through the data version)."""
    global _snapshot
    _snapshot = None
