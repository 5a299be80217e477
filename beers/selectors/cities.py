"""The cities the site covers, and the per-process snapshot the live reads find them in.

Every live read starts from its city (id and time zone). Looking it up cost one database round
trip per request (0.35 ms of a 2 ms search, measured in-process on 1M prices), so each process
keeps the active cities and reloads them all, in one query, once the snapshot is older than
REFRESH_SECONDS. A slug the snapshot lacks is looked up at once (a city activated since the
load), and saving or deleting a city in this process drops the snapshot.

Search and cheapest never answer from a stale snapshot: their query also requires the city to
be active with the slug, name and time zone the snapshot has (ranking._city_as_known); when it
finds nothing, `outdated()` looks the city up and, if it changed, they answer again. Other
callers (pages, overview) may see another process's edit up to REFRESH_SECONDS late.
"""

import threading
import time
from dataclasses import dataclass

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from beers import outage
from beers.models import City

from . import render

REFRESH_SECONDS = 1.0


def cities_active(*, lang: str) -> list[dict]:
    """Active cities by name, each with its page address (one query)."""
    return [
        {"slug": c.slug, "name": c.name, "state": c.state, "url": render.city_url(c, lang)}
        for c in City.objects.filter(active=True).order_by("name", "slug")
    ]


@dataclass(frozen=True)
class _Snapshot:
    by_slug: dict[str, City]
    loaded_at: float


_snapshot: _Snapshot | None = None
_failed_at = float("-inf")  # when a load last failed (monotonic)
_lock = threading.Lock()


def active_city(slug: str) -> City | None:
    """The active city with this slug, or None. Callers must not change the instance: it is
    shared by the requests of this process."""
    current = _snapshot
    if current is None or time.monotonic() - current.loaded_at >= REFRESH_SECONDS:
        return _reloaded().by_slug.get(slug)
    city = current.by_slug.get(slug)
    if city is None:
        # Unknown here: maybe activated since the load. One indexed lookup, no reload, so a
        # stream of made-up slugs costs what it did without the snapshot.
        city = City.objects.filter(slug=slug, active=True).first()
        if city is not None:
            forget()
    return city


def outdated(city: City) -> bool:
    """Whether the database no longer has `city` (from the snapshot) as it is: inactive, gone,
    renamed or in another time zone. Drops the snapshot then. One query."""
    now = (
        City.objects.filter(pk=city.pk, active=True).values_list("slug", "name", "timezone").first()
    )
    if now == (city.slug, city.name, city.timezone):
        return False
    forget()
    return True


def _reloaded() -> _Snapshot:
    """The snapshot loaded again, once for the requests that ask together: those that waited
    take what the first one loaded, or fail at once when its load failed while they waited
    (with each loading in turn, each waited out its timeout, and of 8 requests at once the
    last answered its 503 after 24 s), as does every request while the database is known
    down (beers.outage)."""
    global _snapshot, _failed_at
    asked = time.monotonic()
    with _lock:
        current = _snapshot
        if current is not None and current.loaded_at >= asked:
            return current
        if _failed_at >= asked:
            raise outage.KnownDown("the active cities could not be read a moment ago")
        try:
            with outage.database_call():
                current = _snapshot = _load()
        except outage.DATABASE_ERRORS:
            _failed_at = time.monotonic()
            raise
        return current


def _load() -> _Snapshot:
    started = time.monotonic()
    return _Snapshot({c.slug: c for c in City.objects.filter(active=True)}, started)


@receiver(post_save, sender=City, dispatch_uid="cities-snapshot-save")
@receiver(post_delete, sender=City, dispatch_uid="cities-snapshot-delete")
def forget(**_) -> None:
    """Drop the snapshot (a city saved or deleted here; tests)."""
    global _snapshot
    _snapshot = None
