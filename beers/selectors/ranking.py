"""Rankings: a city's prices cheapest per litre first (search, cheapest now, a bar's prices).

"In the rankings" = published or disputed, the bar is open (and, for a depósito, people can
drink there), the last check is at most 180 days old (city-local dates) and today lies inside
valid_from/valid_until where set. Order: price per
litre (unrounded), then package price, then most recently verified, then id. Open bars appear
only when asked for (kind=open_bar) and rank by package price.
"""

import datetime as dt
import math
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Q, QuerySet
from django.utils import timezone

from beers import labels
from beers.errors import not_found
from beers.geo import bounding_box, distance_m
from beers.models import (
    RANKED_STATUSES,
    City,
    Deal,
    DealKind,
    FormatType,
    Venue,
    VenueKind,
    VenueStatus,
)

from . import names, on_now, render
from .queries import CheapestQuery, SearchQuery, VenueQuery

PRICE_ORDER = ("price_per_litre", "price_cents", "-verified_at", "id")
OPEN_BAR_ORDER = ("price_cents", "-verified_at", "id")


def _render(
    rows: list[dict],
    *,
    city: City,
    lang: str,
    today: dt.date,
    distances: list[int | None] | None = None,
) -> list[dict]:
    """PublicDeal dicts for rows of render.DEAL_COLUMNS, in one language activation."""
    catalogue = names.snapshot(rows)
    distances = distances or [None] * len(rows)
    with labels.language(lang):
        return [
            render.public_deal(
                row, city=city, names=catalogue, lang=lang, today=today, distance=distance
            )
            for row, distance in zip(rows, distances, strict=True)
        ]


@dataclass(frozen=True)
class Answer:
    """A rendered answer and the instant until which it stays true (cache horizon)."""

    data: dict
    fresh_until: dt.datetime


def city_get(slug: str) -> City:
    """An active city by slug, or 404."""
    city = City.objects.filter(slug=slug, active=True).first()
    if city is None:
        raise not_found(f"Unknown city: {slug}.")
    return city


def local_midnight(day: dt.date, city: City) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(0)).replace(tzinfo=city.tz)


def ranked_deals(*, city: City, today: dt.date) -> QuerySet[Deal]:
    """Every price of the city in the rankings on the city-local date `today`."""
    oldest = local_midnight(today - dt.timedelta(days=render.MAX_AGE_DAYS), city)
    return (
        Deal.objects.filter(
            city=city,
            status__in=RANKED_STATUSES,
            venue__status=VenueStatus.OPEN,
            verified_at__gte=oldest,
        )
        .exclude(venue__kind=VenueKind.DEPOSITO, venue__on_site=False)
        .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=today))
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gte=today))
    )


def filter_format(qs: QuerySet[Deal], value: str | None) -> QuerySet[Deal]:
    """A format type matches every code of that type; anything else is an exact code."""
    if not value:
        return qs
    if value in FormatType.values:
        return qs.filter(format__type=value)
    return qs.filter(format__code=value)


def per_litre_threshold(max_price_per_litre) -> float:
    """Prices whose shown (half-up rounded) price per litre is at most the maximum: the
    unrounded cents per litre must be below floor(max in cents) + 0.5."""
    return math.floor(max_price_per_litre * 100) + 0.5


def search(query: SearchQuery, *, now: dt.datetime | None = None) -> Answer:
    """DealsResponse of a city's ranking with filters (two queries)."""
    now = now or timezone.now()
    city = city_get(query.city)
    today = now.astimezone(city.tz).date()
    qs = ranked_deals(city=city, today=today)
    if query.kind == DealKind.OPEN_BAR:
        qs = qs.filter(kind=DealKind.OPEN_BAR).order_by(*OPEN_BAR_ORDER)
    else:
        qs = qs.exclude(kind=DealKind.OPEN_BAR).order_by(*PRICE_ORDER)
        if query.kind:
            qs = qs.filter(kind=query.kind)
        if query.max_price_per_litre is not None:
            qs = qs.filter(price_per_litre__lt=per_litre_threshold(query.max_price_per_litre))
    if query.max_price_per_litre is not None and query.kind == DealKind.OPEN_BAR:
        qs = qs.none()  # an open bar has no price per litre to compare
    if query.neighbourhood:
        qs = qs.filter(venue__neighbourhood__slug=query.neighbourhood)
    if query.brand:
        qs = qs.filter(brand__slug=query.brand)
    rows = list(filter_format(qs, query.format).values(*render.DEAL_COLUMNS)[: query.limit])
    deals = _render(rows, city=city, lang=query.lang, today=today)
    data = render.deals_envelope(city=city, lang=query.lang, now=now, deals=deals)
    return Answer(data, on_now.next_local_midnight(now, city.tz))


def _pages(qs: QuerySet, size: int) -> Iterator[dict]:
    """The ordered queryset page by page (one query each, pages doubling), until read out.

    Most prices have no schedule, so the first page usually holds the answer."""
    offset = 0
    while True:
        page = list(qs[offset : offset + size])
        yield from page
        if len(page) < size:
            return
        offset += size
        size *= 2


def cheapest(query: CheapestQuery, *, now: dt.datetime | None = None) -> Answer:
    """DealsResponse of the cheapest prices on right now in the city's time zone."""
    now = now or timezone.now()
    city = city_get(query.city)
    local = now.astimezone(city.tz)
    qs = ranked_deals(city=city, today=local.date()).exclude(kind=DealKind.OPEN_BAR)
    qs = filter_format(qs, query.format)
    if query.has_point:
        min_lat, max_lat, min_lng, max_lng = bounding_box(query.lat, query.lng, query.radius_m)
        # venue__city is redundant (a bar is in its price's city) but lets PostgreSQL find the
        # bars through the (city, lat, lng) index first
        qs = qs.filter(
            venue__city=city,
            venue__lat__range=(min_lat, max_lat),
            venue__lng__range=(min_lng, max_lng),
        )
    qs = qs.order_by(*PRICE_ORDER).values(*render.DEAL_COLUMNS)
    rows: list[dict] = []
    distances: list[int | None] = []
    for row in _pages(qs, size=query.limit + 20):
        if not on_now.is_on(row["schedules"], local):
            continue
        distance = None
        if query.has_point:
            distance = distance_m(query.lat, query.lng, row["venue__lat"], row["venue__lng"])
            if distance > query.radius_m:
                continue
        rows.append(row)
        distances.append(distance)
        if len(rows) >= query.limit:
            break
    deals = _render(rows, city=city, lang=query.lang, today=local.date(), distances=distances)
    answer = render.deals_envelope(city=city, lang=query.lang, now=now, deals=deals)
    answer["local_time"] = local.replace(microsecond=0).isoformat()
    return Answer(answer, next_change(city, now))


def next_change(city: City, now: dt.datetime) -> dt.datetime:
    """When the set of prices on in the city may next change: a schedule edge or midnight.

    Reads the schedules of every published or disputed price of the city (index-only scan on
    `deal_schedules`), a superset of the ranked ones: an extra edge only ends a cached answer
    earlier, never later."""
    schedules = (
        Deal.objects.filter(city=city, status__in=RANKED_STATUSES)
        .exclude(kind=DealKind.OPEN_BAR)
        .exclude(schedules=[])
        .order_by()
        .values_list("schedules", flat=True)
        .distinct()
    )
    return on_now.next_boundary(list(schedules), now, city.tz)


def venue_detail(query: VenueQuery, *, now: dt.datetime | None = None) -> Answer:
    """VenueResponse: one bar and every price it has in the rankings, cheapest per litre
    first, open bars last by package price."""
    now = now or timezone.now()
    venue = (
        Venue.objects.select_related("city", "neighbourhood")
        .filter(id=query.venue_id, city__active=True)
        .first()
        if query.venue_id < 2**63
        else None
    )
    if venue is None:
        raise not_found(f"Unknown bar: {query.venue_id}.")
    return _venue_answer(venue, lang=query.lang, now=now)


def venue_by_slug(
    *, city_slug: str, venue_slug: str, lang: str, now: dt.datetime | None = None
) -> Answer:
    """The same answer, for a bar named by its city and slug (pages, MCP)."""
    now = now or timezone.now()
    city = city_get(city_slug)
    venue = (
        Venue.objects.select_related("city", "neighbourhood")
        .filter(city=city, slug=venue_slug)
        .first()
    )
    if venue is None:
        raise not_found(f"Unknown bar in {city_slug}: {venue_slug}.")
    return _venue_answer(venue, lang=lang, now=now)


def _venue_answer(venue: Venue, *, lang: str, now: dt.datetime) -> Answer:
    city = venue.city
    today = now.astimezone(city.tz).date()
    ranked = list(
        ranked_deals(city=city, today=today)
        .filter(venue=venue)
        .order_by(*PRICE_ORDER)
        .values(*render.DEAL_COLUMNS)
    )
    # NULL price per litre (open bars) sorts last on PostgreSQL and first on SQLite: be explicit.
    priced = [r for r in ranked if r["kind"] != DealKind.OPEN_BAR]
    open_bars = sorted(
        (r for r in ranked if r["kind"] == DealKind.OPEN_BAR),
        key=lambda r: (r["price_cents"], -r["verified_at"].timestamp(), r["id"]),
    )
    deals = _render(priced + open_bars, city=city, lang=lang, today=today)
    has_price = venue.status == VenueStatus.OPEN and (
        bool(ranked) or Deal.objects.filter(venue=venue, status__in=RANKED_STATUSES).exists()
    )
    answer = render.deals_envelope(city=city, lang=lang, now=now, deals=deals)
    answer["venue"] = render.public_venue(venue, city=city, lang=lang, has_price=has_price)
    return Answer(answer, on_now.next_local_midnight(now, city.tz))
