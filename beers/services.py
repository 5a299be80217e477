"""Writes to the ground floor: venues placed in their bairro, deals with a check."""

import copy
import datetime as dt

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .answers import answers_changed
from .geo import point_in_geometry
from .models import (
    DISPUTED_AT,
    SUSPENDED_AT,
    Beer,
    Brand,
    CheckSource,
    City,
    Deal,
    DealStatus,
    Format,
    Neighbourhood,
    PriceCheck,
    PriceIndexHistory,
    Venue,
    VenueStatus,
)
from .selectors.price_index import FIGURES as INDEX_FIGURES
from .selectors.price_index import last_ended_month, price_index
from .text import name_key, slug_of


def neighbourhood_for_point(*, city: City, lat: float, lng: float) -> Neighbourhood | None:
    """The bairro whose boundary holds the point, if any."""
    for hood in Neighbourhood.objects.filter(city=city).exclude(boundary=None):
        if point_in_geometry(lat, lng, hood.boundary):
            return hood
    return None


def venue_slug_free(*, city: City, name: str) -> str:
    """A slug from the name, unique inside the city (suffix -2, -3, … when taken)."""
    base = slug_of(name, 120) or "bar"
    slug, n = base, 2
    while Venue.objects.filter(city=city, slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


@transaction.atomic
def venue_create(
    *,
    city: City,
    name: str,
    lat: float,
    lng: float,
    kind: str,
    on_site: bool,
    address: str = "",
    instagram: str = "",
    opening_hours: str = "",
    attributes: list[str] | None = None,
    slug: str | None = None,
) -> Venue:
    """Create a bar, placed in the bairro that holds its point."""
    venue = Venue(
        city=city,
        name=name,
        lat=lat,
        lng=lng,
        kind=kind,
        on_site=on_site,
        address=address,
        instagram=instagram,
        opening_hours=opening_hours,
        attributes=attributes or [],
        slug=slug or venue_slug_free(city=city, name=name),
        neighbourhood=neighbourhood_for_point(city=city, lat=lat, lng=lng),
    )
    venue.full_clean(exclude=["neighbourhood"])
    venue.save()
    return venue


@transaction.atomic
def deal_create(
    *,
    venue: Venue,
    format: Format,
    price_cents: int,
    beer: Beer | None = None,
    brand: Brand | None = None,
    units: int = 1,
    packaging: str = "single",
    kind: str = "regular",
    open_bar_minutes: int | None = None,
    service_charge_pct: int | None = None,
    couvert_cents: int | None = None,
    conditions: str = "",
    valid_from: dt.date | None = None,
    valid_until: dt.date | None = None,
    schedules: list[dict] | None = None,
    verified_at: dt.datetime | None = None,
    status: str = "published",
    source: str = CheckSource.SUBMISSION,
    credit: str = "",
) -> Deal:
    """Create a price and its first check."""
    verified_at = verified_at or timezone.now()
    if beer is not None and brand is None:
        brand = beer.brand
    deal = Deal.objects.create(
        city_id=venue.city_id,
        venue=venue,
        beer=beer,
        brand=brand,
        format=format,
        volume_ml=format.volume_ml,
        units=units,
        packaging=packaging,
        kind=kind,
        price_cents=price_cents,
        open_bar_minutes=open_bar_minutes,
        service_charge_pct=service_charge_pct,
        couvert_cents=couvert_cents,
        conditions=conditions,
        valid_from=valid_from,
        valid_until=valid_until,
        schedules=schedules or [],
        verified_at=verified_at,
        created_at=verified_at,
        status=status,
        credit=credit,
    )
    PriceCheck.objects.create(
        deal=deal, price_cents=price_cents, checked_at=verified_at, source=source
    )
    return deal


@transaction.atomic
def deal_record_check(
    *,
    deal: Deal,
    source: str,
    price_cents: int | None = None,
    at: dt.datetime | None = None,
    credit: str = "",
) -> Deal:
    """A new check of a price: it is verified now (at its price, or a corrected one).

    A check older than the price's last one joins the history only: it neither moves the
    price's last check back in time nor replaces a newer amount. A new amount starts the count
    of confirmations again (those confirmed the old one) and is credited to `credit` alone
    (the nickname of whoever sent it, else nobody: the earlier sender did not send this
    amount); a check with a nickname credits it whatever the amount."""
    at = at or timezone.now()
    observed = deal.price_cents if price_cents is None else price_cents
    if deal.verified_at is None or at >= deal.verified_at:
        fields = ["price_cents", "verified_at"]
        new_amount = observed != deal.price_cents
        if new_amount:
            deal.price_cents = observed
            deal.confirmations = 0
            fields.append("confirmations")
        if (new_amount or credit) and deal.credit != credit:
            deal.credit = credit
            fields.append("credit")
        deal.verified_at = at
        deal.save(update_fields=fields)
    PriceCheck.objects.create(deal=deal, price_cents=observed, checked_at=at, source=source)
    deal.refresh_from_db(fields=["price_per_litre"])
    return deal


def beer_for_name(name: str | None) -> tuple[Beer | None, Brand | None]:
    """The beer (and its brand) a sender named, creating the beer when it is new.

    A name that is a brand's ("Brahma") gives the brand only; a new beer whose first words
    name a brand ("Brahma Duplo Malte") is filed under that brand."""
    beer, brand, new = beer_named(name)
    if new is None:
        return beer, brand
    beer, _created = Beer.objects.get_or_create(
        slug=new[1], defaults={"name": new[0], "brand": brand}
    )
    return beer, beer.brand


def beer_named(name: str | None) -> tuple[Beer | None, Brand | None, tuple[str, str] | None]:
    """What a sender's beer name names, creating nothing: (the beer, its brand, None); (None,
    the brand, None) for a brand's name; (None, the brand its first words name or None, (name,
    slug) of the new beer it would be); (None, None, None) for no name."""
    if not name or not name.strip():
        return None, None, None
    name = " ".join(name.split())
    key, slug = name_key(name), slug_of(name, 100)
    beer = Beer.objects.select_related("brand").filter(Q(name__iexact=name) | Q(slug=slug)).first()
    if beer is not None:
        return beer, beer.brand, None
    for beer in Beer.objects.select_related("brand").filter(name__icontains=name.split()[0]):
        if name_key(beer.name) == key:
            return beer, beer.brand, None
    brands = list(Brand.objects.all())
    for brand in brands:
        if name_key(brand.name) == key or brand.slug == slug:
            return None, brand, None
    brand = None
    for candidate in sorted(brands, key=lambda b: -len(b.name)):
        if key.startswith(name_key(candidate.name) + " "):
            brand = candidate
            break
    return None, brand, ((name, slug) if slug else None)


@transaction.atomic
def venue_close(*, venue: Venue) -> Venue:
    """The bar closed: its prices leave the rankings and the datasets (they are kept)."""
    venue.status = VenueStatus.CLOSED
    venue.save(update_fields=["status"])
    return venue


def standing_with_disputes(status: str, open_disputes: int) -> str:
    """The standing a price's open disputes give it (interface.md's machine): from
    `DISPUTED_AT` disputed, from `SUSPENDED_AT` out of the rankings until a moderator decides;
    fewer leave the status as it is."""
    if open_disputes >= SUSPENDED_AT:
        return DealStatus.SUSPENDED
    if open_disputes >= DISPUTED_AT and status == DealStatus.PUBLISHED:
        return DealStatus.DISPUTED
    return status


@transaction.atomic
def deal_set_standing(*, deal: Deal, status: str) -> Deal:
    """Close the disputes of a price: published again (disputes dismissed), or retired
    (disputes upheld: hidden from rankings and datasets)."""
    if status not in (DealStatus.PUBLISHED, DealStatus.RETIRED):
        raise ValueError(f"a reviewed price is published or retired, not {status}")
    deal.status = status
    deal.open_disputes = 0
    deal.save(update_fields=["status", "open_disputes"])
    return deal


def price_index_close_until(city: City, now: dt.datetime | None = None) -> str:
    """The last month ("YYYY-MM") of the city's index to close: the last one that has really
    ended in its zone, whatever `now` says (the export's `now` may be ahead in tests and
    scripts)."""
    return last_ended_month(city.tz, min(now or timezone.now(), timezone.now()))


def price_index_close_ended(
    city: City, now: dt.datetime | None = None, *, wait: bool = True, closed: str | None = None
) -> str:
    """Close the months that have ended in the city's zone and are not closed yet
    (price_index_close_months), in a transaction of its own with the batch settings (the whole
    index of a big city is not a 5-second live read); with nothing to close, no query (`closed`,
    the city's last closed month as just read, or as `city` was loaded, says so). `wait=False`
    (a live read): a city row another transaction holds (an import, a closing under way) is
    left as it is rather than waited for. Returns the city's last closed month ("YYYY-MM",
    "" for none) after it."""
    if closed is None:
        closed = city.price_index_closed_through
    if closed >= price_index_close_until(city, now):
        return closed
    from datasets.snapshot import batch_transaction  # the batch settings are the export's

    own = copy.copy(city)  # `city` may be the instance the live reads share (never changed)
    with batch_transaction():
        price_index_close_months(city=own, now=now, wait=wait)
    return max(closed, own.price_index_closed_through)  # as it was, when the row was held


@transaction.atomic
def price_index_close_months(
    *, city: City, now: dt.datetime | None = None, wait: bool = True
) -> int:
    """Keep the months of the city's price index that have ended in its zone as they are now
    (PriceIndexHistory) and call them `final`, so that a final month's figures never change:
    a price retired later, or a check entered later inside that month, leaves them as they
    were published.
    Closes every ended month not closed yet (all of them the first time; after that, one a
    month). A month closes only once it has really ended, whatever `now` says. Returns the
    number of cells kept. `wait=False`: a city row another transaction holds is skipped (0)."""
    last_ended = price_index_close_until(city, now)
    closed = (
        # One closing at a time per city; a city row an import holds is waited for (an export
        # that skipped it published the month `final` before it was kept).
        City.objects.select_for_update(skip_locked=not wait)
        .filter(pk=city.pk)
        .values_list("price_index_closed_through", flat=True)
        .first()
    )
    if closed is None or closed >= last_ended:
        return 0
    imported = set(
        PriceIndexHistory.objects.filter(city=city, month__gt=closed).values_list(
            "month", flat=True
        )
    )
    cells = [
        PriceIndexHistory(
            city=city,
            key=cell["key"] or "",
            **{name: cell[name] for name in ("month", "scope", *INDEX_FIGURES)},
        )
        for cell in price_index(city=city, closed=closed)
        if closed < cell["month"] <= last_ended and cell["month"] not in imported
    ]
    PriceIndexHistory.objects.bulk_create(cells, batch_size=2000)
    City.objects.filter(pk=city.pk).update(price_index_closed_through=last_ended)
    city.price_index_closed_through = last_ended
    answers_changed(city=city.slug)  # a cached price index said the month was not final yet
    return len(cells)
