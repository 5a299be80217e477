"""Overview answers of a city and of the whole service: the bairros that have prices, the
monthly price index, the catalogue. The MCP tools render these; the queries live here.
"""

import datetime as dt
import math
from decimal import Decimal
from fractions import Fraction

from django.conf import settings
from django.db.models import Count, Min, Q
from django.utils import timezone

from beers import labels
from beers.answers import DATASETS_LICENSE
from beers.models import DealKind
from beers.services import price_index_close_ended

from . import catalog as catalog_selectors
from . import names, on_now, price_index
from .queries import CityQuery, PricePerLitreQuery
from .ranking import Answer, city_get, ranked_deals


def _as_of(now: dt.datetime, tz) -> str:
    return now.astimezone(tz).isoformat(timespec="seconds")


def neighbourhoods_covered(query: CityQuery, *, now: dt.datetime | None = None) -> Answer:
    """`{city, neighbourhoods: [{slug, name, venues, deals, cheapest_price_per_litre_brl}],
    as_of, source}`: the bairros with prices in the rankings (the set search answers from), the
    number of bars and prices of each and its cheapest price per litre (open bars counted as
    prices, never as a price per litre); most bars first, then most prices, then slug.
    Two queries (one when the names snapshot is warm)."""
    now = now or timezone.now()
    city = city_get(query.city)
    today = now.astimezone(city.tz).date()
    rows = list(
        ranked_deals(city=city, today=today)
        .filter(venue__neighbourhood__isnull=False)
        .values("venue__neighbourhood_id")
        .annotate(
            venues=Count("venue", distinct=True),
            deals=Count("id"),
            cheapest=Min("price_per_litre", filter=~Q(kind=DealKind.OPEN_BAR)),
        )
        .order_by()
    )
    snapshot = names.snapshot(rows)
    items = []
    for row in rows:
        slug, name = snapshot.neighbourhoods[row["venue__neighbourhood_id"]]
        cheapest = row["cheapest"]
        items.append(
            {
                "slug": slug,
                "name": name,
                "venues": row["venues"],
                "deals": row["deals"],
                "cheapest_price_per_litre_brl": (
                    None if cheapest is None else float(labels.reais(cheapest))
                ),
            }
        )
    items.sort(key=lambda i: (-i["venues"], -i["deals"], i["slug"]))
    data = {
        "city": city.name,
        "neighbourhoods": items,
        "as_of": _as_of(now, city.tz),
        "source": settings.ATTRIBUTION,
    }
    return Answer(data, on_now.next_local_midnight(now, city.tz))


def price_index_month(query: CityQuery, *, now: dt.datetime | None = None) -> Answer:
    """`{city}/price-index.json` for one month (the latest with observations when `query.month`
    is None): its envelope (`updated_at`, `license`, `attribution`, `city` slug) and `items`,
    plus `month`, `final`, `as_of` and `source`. `items` is empty and `month` null when the
    city has no observations yet."""
    now = now or timezone.now()
    city = city_get(query.city)
    # A month that has ended in the city is closed by its first reader, not minutes later by
    # the export that follows (interface.md: final once the month is closed): the answers
    # cached before expire at the local midnight that ends it. A closing under way elsewhere
    # is not waited for (that one tells the cache when it is done).
    closed = price_index_close_ended(city, now, wait=False, closed=price_index.closed_through(city))
    month = query.month or price_index.latest_month(city, closed=closed)
    items = price_index.price_index(city=city, month=month, closed=closed) if month else []
    data = {
        "updated_at": now.astimezone(dt.UTC).isoformat(timespec="seconds"),
        "license": DATASETS_LICENSE,
        "attribution": settings.ATTRIBUTION,
        "city": city.slug,
        "month": month,
        "final": month <= closed if month else None,
        "items": items,
        "as_of": _as_of(now, city.tz),
        "source": settings.ATTRIBUTION,
    }
    return Answer(data, on_now.next_local_midnight(now, city.tz))


def catalog_overview(*, now: dt.datetime | None = None) -> Answer:
    """`{cities, brands, formats, as_of, source}`: the covered cities with their counts and the
    brand and format slugs the other questions take (five queries)."""
    now = now or timezone.now()
    tz = timezone.get_default_timezone()
    catalogue = catalog_selectors.catalog()
    data = {
        "cities": catalog_selectors.cities_summary(),
        "brands": catalogue["brands"],
        "formats": catalogue["formats"],
        "as_of": _as_of(now, tz),
        "source": settings.ATTRIBUTION,
    }
    return Answer(data, on_now.next_local_midnight(now, tz))


def price_per_litre(query: PricePerLitreQuery) -> dict:
    """`{price_per_litre_brl, litres}` as the rankings compute them: litres = units × volume_ml
    / 1000, price per litre = price / litres rounded half-up to cents (no database)."""
    litres = Fraction(query.units * query.volume_ml, 1000)
    cents = math.floor(Fraction(query.price_brl) * 100 / litres + Fraction(1, 2))
    return {
        "price_per_litre_brl": float(Decimal(cents) / 100),
        "litres": float(litres),
    }
