"""The catalogue (brands, beers, formats) and the covered cities, as the datasets and MCP show them."""

from django.db.models import Count

from beers.models import Beer, Brand, City, Format

from .published import published_deals


def catalog() -> dict:
    """`{brands: [{slug, name}], beers: [{slug, name, brand}], formats: [{code, type, volume_ml,
    label_pt, label_en}]}`, each list ordered by slug (formats by code). Three queries."""
    return {
        "brands": list(Brand.objects.order_by("slug").values("slug", "name")),
        "beers": [
            {"slug": slug, "name": name, "brand": brand}
            for slug, name, brand in Beer.objects.order_by("slug").values_list(
                "slug", "name", "brand__slug"
            )
        ],
        "formats": list(
            Format.objects.order_by("code").values(
                "code", "type", "volume_ml", "label_pt", "label_en"
            )
        ),
    }


def cities_summary(*, counts: dict[str, tuple[int, int]] | None = None) -> list[dict]:
    """Active cities ordered by slug, with `deal_count` / `venue_count` counted over the
    published set (the items of `{city}/deals.json` and `{city}/venues.json`). Two queries;
    one when the caller counted already (`counts`: slug -> (deals, venues), as the export
    does while it writes those files)."""
    if counts is None:
        by_id = {
            row["city"]: (row["deal_count"], row["venue_count"])
            for row in published_deals()
            .filter(city__active=True)
            .values("city")
            .annotate(deal_count=Count("id"), venue_count=Count("venue", distinct=True))
            .order_by()
        }
    out = []
    for city in (
        City.objects.filter(active=True)
        .order_by("slug")
        .values("id", "slug", "name", "state", "timezone", "lat", "lng")
    ):
        city_id = city.pop("id")
        found = counts.get(city["slug"]) if counts is not None else by_id.get(city_id)
        city["deal_count"], city["venue_count"] = found or (0, 0)
        out.append(city)
    return out
