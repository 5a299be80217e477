"""The cities the site covers."""

from beers.models import City

from . import render


def cities_active(*, lang: str) -> list[dict]:
    """Active cities by name, each with its page address (one query)."""
    return [
        {"slug": c.slug, "name": c.name, "state": c.state, "url": render.city_url(c, lang)}
        for c in City.objects.filter(active=True).order_by("name", "slug")
    ]
