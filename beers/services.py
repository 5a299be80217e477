"""Writes to the ground floor: venues placed in their bairro, deals with a check."""

import datetime as dt

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from .geo import point_in_geometry
from .models import (
    Beer,
    Brand,
    CheckSource,
    City,
    Deal,
    Format,
    Neighbourhood,
    PriceCheck,
    Venue,
)


def neighbourhood_for_point(*, city: City, lat: float, lng: float) -> Neighbourhood | None:
    """The bairro whose boundary holds the point, if any."""
    for hood in Neighbourhood.objects.filter(city=city).exclude(boundary=None):
        if point_in_geometry(lat, lng, hood.boundary):
            return hood
    return None


def venue_slug_free(*, city: City, name: str) -> str:
    """A slug from the name, unique inside the city (suffix -2, -3, … when taken)."""
    base = slugify(name)[:120].strip("-") or "bar"
    slug, n = base, 2
    while Venue.objects.filter(city=city, slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


@transaction.atomic
def venue_create(*, city: City, name: str, lat: float, lng: float, kind: str, on_site: bool,
                 address: str = "", instagram: str = "", opening_hours: str = "",
                 attributes: list[str] | None = None, slug: str | None = None) -> Venue:
    """Create a bar, placed in the bairro that holds its point."""
    venue = Venue(
        city=city, name=name, lat=lat, lng=lng, kind=kind, on_site=on_site, address=address,
        instagram=instagram, opening_hours=opening_hours, attributes=attributes or [],
        slug=slug or venue_slug_free(city=city, name=name),
        neighbourhood=neighbourhood_for_point(city=city, lat=lat, lng=lng),
    )
    venue.full_clean(exclude=["neighbourhood"])
    venue.save()
    return venue


@transaction.atomic
def deal_create(*, venue: Venue, format: Format, price_cents: int, beer: Beer | None = None,
                brand: Brand | None = None, units: int = 1, packaging: str = "single",
                kind: str = "regular", open_bar_minutes: int | None = None,
                service_charge_pct: int | None = None, couvert_cents: int | None = None,
                conditions: str = "", valid_from: dt.date | None = None,
                valid_until: dt.date | None = None, schedules: list[dict] | None = None,
                verified_at: dt.datetime | None = None, status: str = "published",
                source: str = CheckSource.SUBMISSION) -> Deal:
    """Create a price and its first check."""
    verified_at = verified_at or timezone.now()
    if beer is not None and brand is None:
        brand = beer.brand
    deal = Deal.objects.create(
        city_id=venue.city_id, venue=venue, beer=beer, brand=brand, format=format,
        volume_ml=format.volume_ml, units=units, packaging=packaging, kind=kind,
        price_cents=price_cents, open_bar_minutes=open_bar_minutes,
        service_charge_pct=service_charge_pct, couvert_cents=couvert_cents,
        conditions=conditions, valid_from=valid_from, valid_until=valid_until,
        schedules=schedules or [], verified_at=verified_at, created_at=verified_at,
        status=status,
    )
    PriceCheck.objects.create(
        deal=deal, price_cents=price_cents, checked_at=verified_at, source=source
    )
    return deal


@transaction.atomic
def deal_record_check(*, deal: Deal, source: str, price_cents: int | None = None,
                      at: dt.datetime | None = None) -> Deal:
    """A new check of a price: it is verified now (at its price, or a corrected one)."""
    at = at or timezone.now()
    if price_cents is not None:
        deal.price_cents = price_cents
    deal.verified_at = at
    deal.save(update_fields=["price_cents", "verified_at"])
    PriceCheck.objects.create(deal=deal, price_cents=deal.price_cents, checked_at=at,
                              source=source)
    deal.refresh_from_db(fields=["price_per_litre"])
    return deal
