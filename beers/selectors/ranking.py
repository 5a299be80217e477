"""Rankings: a city's prices cheapest per litre first (search, cheapest now, a bar's prices).

"In the rankings" = published or disputed, the bar is open (and, for a depósito, people can
drink there), the last check is at most 180 days old (city-local dates) and today lies inside
valid_from/valid_until where set. Order: price per
litre (unrounded), then package price, then most recently verified, then id. Open bars appear
only when asked for (kind=open_bar) and rank by package price.
"""

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.db import connection
from django.db.models import Exists, Q, QuerySet
from django.utils import timezone

from beers import labels
from beers.errors import not_found, shown
from beers.geo import bounding_box, distance_m
from beers.models import (
    FORMAT_TYPE_RE,
    OPEN_BAR_ORDER,
    PRICE_ORDER,
    RANKED_STATUSES,
    City,
    Deal,
    DealKind,
    Venue,
    VenueStatus,
)

from . import cities, names, on_now, render
from .prepared import Prepared
from .published import NOT_A_BAR, published_deals
from .queries import CheapestQuery, SearchQuery, VenueQuery


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
    """A rendered answer and the instant until which it stays true (cache horizon).
    `clock_zone`: the city's zone when the answer ends with its `local_time`, which a cached
    copy states anew each time it is served (beers.answers)."""

    data: dict
    fresh_until: dt.datetime
    clock_zone: str | None = None


def city_get(slug: str) -> City:
    """An active city by slug (from the per-process snapshot), or 404."""
    city = cities.active_city(slug)
    if city is None:
        raise not_found(f"Unknown city: {shown(slug)}.")
    return city


def local_midnight(day: dt.date, city: City) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(0)).replace(tzinfo=city.tz)


def oldest_check(city: City, today: dt.date) -> dt.datetime:
    """The earliest last check still in the rankings on the city-local date `today`."""
    return local_midnight(today - dt.timedelta(days=render.MAX_AGE_DAYS), city)


def _ranked(*, city_id: int, today: dt.date, oldest: dt.datetime) -> QuerySet[Deal]:
    """The published set (`published_deals`: what deals.json holds) narrowed to the rankings:
    a bar people drink at, checked recently enough, valid today."""
    return (
        published_deals()
        .filter(city_id=city_id, verified_at__gte=oldest)
        .exclude(NOT_A_BAR)
        .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=today))
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gte=today))
    )


def ranked_deals(*, city: City, today: dt.date) -> QuerySet[Deal]:
    """Every price of the city in the rankings on the city-local date `today`."""
    return _ranked(city_id=city.pk, today=today, oldest=oldest_check(city, today))


def _as_known(city: City) -> dict:
    """The values `_city_as_known` compares: the city as the snapshot has it."""
    return {"city_slug": city.slug, "city_name": city.name, "city_tz": city.timezone}


def _city_as_known(qs: QuerySet[Deal], given: dict) -> QuerySet[Deal]:
    """Rows only while the city is still active and as the per-process snapshot has it
    (cities.py): a stale snapshot gets no rows, never rows read in the wrong time zone.
    Uncorrelated, so PostgreSQL checks it once (a one-time filter), not per row."""
    known = City.objects.filter(
        pk=given["city_id"],
        active=True,
        slug=given["city_slug"],
        name=given["city_name"],
        timezone=given["city_tz"],
    )
    return qs.filter(Exists(known))


def _on_current_city(slug: str, answer: Callable[[City], tuple[Answer, bool]]) -> Answer:
    """`answer(city)` returns an Answer and whether its query found rows. None found may mean
    that the snapshot's city is out of date: then look again in the database and answer on
    the city as it is now (or 404)."""
    city = city_get(slug)
    result, found = answer(city)
    if not found and cities.outdated(city):
        result, _ = answer(city_get(slug))
    return result


_FORMAT_TYPE = re.compile(FORMAT_TYPE_RE)


def _format_shape(value: str | None) -> str | None:
    """A format type (a word, no digits: `lata`, `long_neck`) matches every code of that type;
    anything else is an exact code (`lata_350`)."""
    if not value:
        return None
    return "type" if _FORMAT_TYPE.fullmatch(value) else "code"


def _filter_format(qs: QuerySet[Deal], shape: str | None, value) -> QuerySet[Deal]:
    if shape == "type":
        return qs.filter(format__type=value)
    if shape == "code":
        return qs.filter(format__code=value)
    return qs


def per_litre_threshold(max_price_per_litre) -> float:
    """Prices whose shown (half-up rounded) price per litre is at most the maximum: the
    unrounded cents per litre must be below floor(max in cents) + 0.5."""
    return math.floor(max_price_per_litre * 100) + 0.5


def _search_queryset(shape: tuple, *, city_id, **given) -> QuerySet:
    open_bar, format_shape, limit, today, oldest = shape
    qs = _ranked(city_id=city_id, today=today, oldest=oldest)
    qs = _city_as_known(qs, {"city_id": city_id, **given})
    if open_bar:
        qs = qs.filter(kind=DealKind.OPEN_BAR).order_by(*OPEN_BAR_ORDER)
    else:
        qs = qs.exclude(kind=DealKind.OPEN_BAR).order_by(*PRICE_ORDER)
        if "kind" in given:
            qs = qs.filter(kind=given["kind"])
        if "below" in given:
            qs = qs.filter(price_per_litre__lt=given["below"])
    if "neighbourhood" in given:
        qs = qs.filter(venue__neighbourhood__slug=given["neighbourhood"])
    if "brand" in given:
        qs = qs.filter(brand__slug=given["brand"])
    qs = _filter_format(qs, format_shape, given.get("format"))
    return qs.values(*render.DEAL_COLUMNS)[:limit]


_search_rows = Prepared(_search_queryset)


def search(query: SearchQuery, *, now: dt.datetime | None = None) -> Answer:
    """DealsResponse of a city's ranking with filters (one query; two when none match)."""
    now = now or timezone.now()
    return _on_current_city(query.city, lambda city: _search(query, city, now))


def _search(query: SearchQuery, city: City, now: dt.datetime) -> tuple[Answer, bool]:
    today = now.astimezone(city.tz).date()
    open_bar = query.kind == DealKind.OPEN_BAR
    given: dict = _as_known(city)
    if query.kind and not open_bar:
        given["kind"] = query.kind
    if query.max_price_per_litre is not None:
        given["below"] = per_litre_threshold(query.max_price_per_litre)
    for name in ("neighbourhood", "brand", "format"):
        if getattr(query, name):
            given[name] = getattr(query, name)
    if open_bar and "below" in given:
        rows = []  # an open bar has no price per litre to compare
    else:
        shape = (
            open_bar,
            _format_shape(query.format),
            query.limit,
            today,
            oldest_check(city, today),
        )
        rows = _search_rows.rows(shape, city_id=city.pk, **given)
    deals = _render(rows, city=city, lang=query.lang, today=today)
    data = render.deals_envelope(city=city, lang=query.lang, now=now, deals=deals)
    return Answer(data, on_now.next_local_midnight(now, city.tz)), bool(rows)


def _cheapest_queryset(shape: tuple, *, city_id, **given) -> QuerySet:
    format_shape, near, today, oldest, offset, size = shape
    qs = _ranked(city_id=city_id, today=today, oldest=oldest).exclude(kind=DealKind.OPEN_BAR)
    qs = _city_as_known(qs, {"city_id": city_id, **given})
    qs = _filter_format(qs, format_shape, given.get("format"))
    if near:
        # venue__city is redundant (a bar is in its price's city) but lets PostgreSQL find the
        # bars through the (city, lat, lng) index first
        qs = qs.filter(
            venue__city_id=city_id,
            venue__lat__range=(given["min_lat"], given["max_lat"]),
            venue__lng__range=(given["min_lng"], given["max_lng"]),
        )
    return qs.order_by(*PRICE_ORDER).values(*render.DEAL_COLUMNS)[offset : offset + size]


_cheapest_rows = Prepared(_cheapest_queryset)


def _pages(fetch: Callable[[int, int], list[dict]], size: int) -> Iterator[dict]:
    """Rows page by page (`fetch(offset, size)`, one query each, pages doubling), until read
    out. Most prices have no schedule, so the first page usually holds the answer."""
    offset = 0
    while True:
        page = fetch(offset, size)
        yield from page
        if len(page) < size:
            return
        offset += size
        size *= 2


def cheapest(query: CheapestQuery, *, now: dt.datetime | None = None) -> Answer:
    """DealsResponse of the cheapest prices on right now in the city's time zone."""
    now = now or timezone.now()
    return _on_current_city(query.city, lambda city: _cheapest(query, city, now))


def _cheapest(query: CheapestQuery, city: City, now: dt.datetime) -> tuple[Answer, bool]:
    local = now.astimezone(city.tz)
    today = local.date()
    given: dict = {"city_id": city.pk, **_as_known(city)}
    if query.format:
        given["format"] = query.format
    if query.has_point:
        # Inside means distance_m (rounded half up) <= radius_m: up to half a metre further.
        box = bounding_box(query.lat, query.lng, query.radius_m + 0.5)
        given.update(zip(("min_lat", "max_lat", "min_lng", "max_lng"), box, strict=True))
    shape = (_format_shape(query.format), query.has_point, today, oldest_check(city, today))

    fetched = 0

    def fetch(offset: int, size: int) -> list[dict]:
        nonlocal fetched
        page = _cheapest_rows.rows((*shape, offset, size), **given)
        fetched += len(page)
        return page

    rows: list[dict] = []
    distances: list[int | None] = []
    for row in _pages(fetch, size=query.limit + 20):
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
    deals = _render(rows, city=city, lang=query.lang, today=today, distances=distances)
    answer = render.deals_envelope(city=city, lang=query.lang, now=now, deals=deals)
    answer["local_time"] = local.replace(microsecond=0).isoformat()  # the last key
    return Answer(answer, next_change(city, now), clock_zone=city.timezone), fetched > 0


def next_change(city: City, now: dt.datetime) -> dt.datetime:
    """When the set of prices on in the city may next change: a schedule edge or midnight.

    Reads the distinct schedules of every published or disputed price of the city but its
    open bars (which cheapest never lists), from the `deal_schedules` index: a superset of the
    ranked ones, and an extra edge only ends a cached answer earlier, never later."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_distinct_schedules_sql(), [city.pk, city.pk])
            schedules = [json.loads(row[0]) for row in cursor.fetchall()]
    else:
        schedules = [row["schedules"] for row in _city_schedules.rows("all", city_id=city.pk)]
    return on_now.next_boundary(schedules, now, city.tz)


_city_schedules = Prepared(
    lambda shape, city_id: (
        Deal.objects.filter(city_id=city_id, status__in=RANKED_STATUSES)
        .exclude(kind=DealKind.OPEN_BAR)
        .exclude(schedules=[])
        .order_by()
        .values("schedules")
        .distinct()
    )
)


@functools.cache
def _distinct_schedules_sql() -> str:
    """The same set on PostgreSQL as a loose index scan: one index probe per distinct schedule
    (most cities have a handful) instead of comparing every scheduled price's JSON (measured on
    1M prices, 2,000 scheduled prices in a city: DISTINCT 2.7 ms, this 0.1 ms). The constants
    are literals so the planner can use the partial index in a prepared generic plan."""
    from psycopg import sql

    scheduled = sql.SQL(
        "city_id = %s AND status IN ({statuses}) AND kind <> {open_bar}"
        " AND schedules <> '[]'::jsonb"
    ).format(
        statuses=sql.SQL(", ").join(sql.Literal(str(s)) for s in RANKED_STATUSES),
        open_bar=sql.Literal(str(DealKind.OPEN_BAR)),
    )
    query = sql.SQL(
        "WITH RECURSIVE sets(schedules) AS ("
        " (SELECT schedules FROM {deal} WHERE {scheduled} ORDER BY schedules LIMIT 1)"
        " UNION ALL"
        " SELECT (SELECT d.schedules FROM {deal} d WHERE {scheduled}"
        " AND d.schedules > sets.schedules ORDER BY d.schedules LIMIT 1)"
        " FROM sets WHERE sets.schedules IS NOT NULL"
        ") SELECT schedules::text FROM sets WHERE schedules IS NOT NULL"
    ).format(deal=sql.Identifier(Deal._meta.db_table), scheduled=scheduled)
    return query.as_string(None)


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
        raise not_found(f"Unknown bar in {shown(city_slug)}: {shown(venue_slug)}.")
    return _venue_answer(venue, lang=lang, now=now)


_venue_rows = Prepared(
    lambda shape, *, city_id, venue_id: (
        _ranked(city_id=city_id, today=shape[0], oldest=shape[1])
        .filter(venue_id=venue_id)
        .order_by(*PRICE_ORDER)
        .values(*render.DEAL_COLUMNS)
    )
)


def _venue_answer(venue: Venue, *, lang: str, now: dt.datetime) -> Answer:
    city = venue.city
    today = now.astimezone(city.tz).date()
    ranked = _venue_rows.rows(
        (today, oldest_check(city, today)), city_id=city.pk, venue_id=venue.pk
    )
    # NULL price per litre (open bars) sorts last on PostgreSQL and first on SQLite: be explicit.
    priced = [r for r in ranked if r["kind"] != DealKind.OPEN_BAR]
    open_bars = sorted(
        (r for r in ranked if r["kind"] == DealKind.OPEN_BAR),
        key=lambda r: (r["price_cents"], -r["verified_at"].timestamp(), r["id"]),  # OPEN_BAR_ORDER
    )
    deals = _render(priced + open_bars, city=city, lang=lang, today=today)
    has_price = venue.status == VenueStatus.OPEN and (
        bool(ranked) or published_deals().filter(venue=venue).exists()
    )
    answer = render.deals_envelope(city=city, lang=lang, now=now, deals=deals)
    answer["venue"] = render.public_venue(venue, city=city, lang=lang, has_price=has_price)
    return Answer(answer, on_now.next_local_midnight(now, city.tz))
