"""The one mapping from models to the public JSON shapes (PublicDeal, PublicVenue, envelopes).

The API, the MCP tools and the pages all render these dicts; nothing else builds them.
"""

import datetime as dt

from django.conf import settings

from beers import labels
from beers.models import City, DealKind, DealStatus, Venue

from .names import Snapshot

OUT_OF_DATE_DAYS = 90
MAX_AGE_DAYS = 180


def lang_prefix(lang: str) -> str:
    return "/en" if lang == "en" else ""


def city_url(city: City, lang: str) -> str:
    return f"{settings.SITE_URL}{lang_prefix(lang)}/{city.slug}"


def venue_url(city: City, venue: Venue, lang: str) -> str:
    return f"{settings.SITE_URL}{lang_prefix(lang)}/{city.slug}/{venue.slug}"


# The deal columns (plus its bar's) that an answer reads: one join, no model instances.
DEAL_COLUMNS = (
    "id",
    "venue_id",
    "beer_id",
    "brand_id",
    "format_id",
    "units",
    "volume_ml",
    "packaging",
    "kind",
    "price_cents",
    "price_per_litre",
    "open_bar_minutes",
    "service_charge_pct",
    "couvert_cents",
    "conditions",
    "valid_from",
    "valid_until",
    "schedules",
    "verified_at",
    "confirmations",
    "status",
    "venue__name",
    "venue__slug",
    "venue__lat",
    "venue__lng",
    "venue__neighbourhood_id",
)


def local_date(instant: dt.datetime, city: City) -> dt.date:
    return instant.astimezone(city.tz).date()


def _money(cents: int | float | None) -> float | None:
    return None if cents is None else float(labels.reais(cents))


def public_deal(
    row: dict,
    *,
    city: City,
    names: Snapshot,
    lang: str,
    today: dt.date,
    distance: int | None = None,
) -> dict:
    """PublicDeal from a row of DEAL_COLUMNS."""
    checked = local_date(row["verified_at"], city)
    is_open_bar = row["kind"] == DealKind.OPEN_BAR
    fmt = names.formats[row["format_id"]]
    brand = names.brands.get(row["brand_id"]) if row["brand_id"] else None
    beer = names.beers.get(row["beer_id"]) if row["beer_id"] else None
    hood = names.neighbourhoods.get(row["venue__neighbourhood_id"])
    prefix = lang_prefix(lang)
    item = {
        "id": row["id"],
        "venue": row["venue__name"],
        "neighbourhood": hood[1] if hood else None,
        "url": f"{settings.SITE_URL}{prefix}/{city.slug}/{row['venue__slug']}",
        "beer": beer or brand or labels.unknown_beer(lang),
        "brand": brand,
        "serving": labels.serving_label(
            fmt=fmt, units=row["units"], packaging=row["packaging"], lang=lang
        ),
        "format": fmt.code,
        "price_brl": _money(row["price_cents"]),
    }
    if not is_open_bar:
        item["price_per_litre_brl"] = _money(row["price_per_litre"])
    item.update(
        {
            "open_bar_minutes": row["open_bar_minutes"],
            "price_label": labels.price_label(
                price_cents=row["price_cents"],
                price_per_litre=None if is_open_bar else row["price_per_litre"],
                open_bar_minutes=row["open_bar_minutes"],
                confirmations=row["confirmations"],
                lang=lang,
                disputed=row["status"] == DealStatus.DISPUTED,
            ),
            "kind": row["kind"],
            "when": labels.schedule_text(
                row["schedules"], lang, row["valid_from"], row["valid_until"]
            ),
            "service_charge_pct": row["service_charge_pct"],
            "couvert_brl": _money(row["couvert_cents"]),
            "conditions": row["conditions"] or None,
            "verified_on": checked.isoformat(),
            "possibly_out_of_date": (today - checked).days > OUT_OF_DATE_DAYS,
            "confirmations": row["confirmations"],
        }
    )
    if distance is not None:
        item["distance_m"] = distance
    return item


def public_venue(venue: Venue, *, city: City, lang: str, has_price: bool) -> dict:
    """PublicVenue (`venue` with its neighbourhood loaded). `url` once the bar has a price."""
    return {
        "id": venue.id,
        "slug": venue.slug,
        "name": venue.name,
        "url": venue_url(city, venue, lang) if has_price else None,
        "kind": venue.kind,
        "drink_on_site": venue.on_site,
        "neighbourhood": venue.neighbourhood.name if venue.neighbourhood else None,
        "address": venue.address or None,
        "lat": venue.lat,
        "lng": venue.lng,
        "instagram": venue.instagram or None,
        "opening_hours": venue.opening_hours or None,
        "attributes": list(venue.attributes or []),
        "status": venue.status,
    }


def deals_envelope(*, city: City, lang: str, now: dt.datetime, deals: list[dict]) -> dict:
    """DealsResponse without `local_time` (cheapest adds it)."""
    return {
        "city": city.name,
        "city_url": city_url(city, lang),
        "as_of": now.astimezone(city.tz).isoformat(timespec="seconds"),
        "count": len(deals),
        "deals": deals,
        "source": settings.ATTRIBUTION,
    }
