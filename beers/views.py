"""Site pages, server-rendered: home, a city's ranking, a bar. pt-BR at the root, en under /en.

Thin: each view calls a selector and renders its dicts (the same ones the JSON API returns).
The language comes from the address only, never from the browser's Accept-Language.
"""

import datetime as dt
import functools
import logging

from django.conf import settings
from django.http import HttpResponse, HttpResponsePermanentRedirect
from django.template.response import TemplateResponse
from django.utils import translation
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from beers import degraded, labels, outage
from beers.api.live import enforce_rate, read_limit
from beers.errors import ApplicationError
from beers.outage import DATABASE_ERRORS
from beers.selectors import cities, published, ranking, render
from beers.selectors.queries import MAX_DEALS, SearchQuery

logger = logging.getLogger(__name__)


RATE_GROUP = "pages"
PAGE_LIMIT = MAX_DEALS  # a city page lists what one search answer can hold


def _other(lang: str) -> str:
    """The site's other language."""
    return "pt-BR" if lang == "en" else "en"


def site_context(lang: str) -> dict:
    """What the base template needs: language, attribution and the open-data links."""
    return {
        "lang": lang,
        "site_name": settings.SITE_NAME,
        "attribution": settings.ATTRIBUTION,
        "home_path": render.lang_prefix(lang) or "/",
        "api_docs": "/api/v1/docs",
        "openapi": "/api/v1/openapi.json",
        "datasets": "/api/v1/index.json",
    }


def _path(url: str) -> str:
    """A page address of the selectors as a path, so links stay on the host that served the
    page (SITE_URL is the canonical host)."""
    return url.removeprefix(settings.SITE_URL) or "/"


def _money(reais: float | None, lang: str) -> str | None:
    return None if reais is None else labels.money(labels.cents_round(reais * 100), lang)


def _deal_rows(deals: list[dict], lang: str) -> list[dict]:
    """The selector's PublicDeal dicts plus what a page shows: path, labels, local money and
    the sender's nickname (interface.md: credited on the site when the price goes live)."""
    notes = published.page_notes([d["id"] for d in deals])
    rows = []
    for d in deals:
        credit, disputed = notes.get(d["id"], ("", False))
        rows.append(
            {
                **d,
                "credit": credit,
                "path": _path(d["url"]),
                "kind_label": labels.KIND_LABELS.get(d["kind"], d["kind"]),
                "price_text": _money(d["price_brl"], lang),
                "per_litre_text": _money(d.get("price_per_litre_brl"), lang),
                "couvert_text": _money(d["couvert_brl"], lang),
                "verified_date": dt.date.fromisoformat(d["verified_on"]),
                "confirmed_text": labels.confirmed_label(
                    d["confirmations"], lang, disputed=disputed
                ),
            }
        )
    return rows


DATE_FORMATS = {"pt-BR": "d/m/Y", "en": "M j, Y"}  # 06/11/2026, Nov 6, 2026 (as the `when` texts)


def _render(
    request, template: str, lang: str, context: dict, *, alternate: str, status: int = 200
) -> HttpResponse:
    """Render in the page's language; `alternate` is the same page's path in the other one."""
    other = _other(lang)
    with translation.override(labels.DJANGO_LANG[lang]):
        response = TemplateResponse(
            request,
            template,
            {
                **site_context(lang),
                **context,
                "alternate": alternate,
                "alternate_lang": other,
                # hreflang pairs, absolute (the canonical host), for pages that exist
                "alternates": {
                    lang: settings.SITE_URL + request.path,
                    other: settings.SITE_URL + alternate,
                }
                if status == 200
                else {},
                "date_format": DATE_FORMATS[lang],
            },
            status=status,
        )
        response.render()
    response["Content-Language"] = lang
    return response


def path_lang(path: str) -> str:
    """The language an address asks for: English under /en, else Brazilian Portuguese (the
    error pages and handlers, which run without a resolved view)."""
    return "en" if path == "/en" or path.startswith("/en/") else "pt-BR"


def _error_page(
    request, status: int, lang: str, cache_control: str, retry_after=None
) -> HttpResponse:
    """The site's page for an error status (templates/{status}.html), in `lang`; its other
    language is that language's home page (the same error may not stand there)."""
    response = _render(
        request,
        f"{status}.html",
        lang,
        {},
        alternate=site_context(_other(lang))["home_path"],
        status=status,
    )
    response["Cache-Control"] = cache_control
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def not_found_page(request, lang: str = "pt-BR") -> HttpResponse:
    """The HTML 404 of the site (unknown city or bar, unknown page), kept by caches a minute
    (a city activated since is seen within one)."""
    return _error_page(request, 404, lang, "public, max-age=60")


def unknown_page(request, **_parts) -> HttpResponse:
    """Any address no page has (beers.urls' last pattern): the site's 404 in its language, with
    DEBUG too (`make run`), where Django would show its own page listing every URL pattern."""
    return not_found_page(request, path_lang(request.path))


def unavailable_page(request, lang: str, retry_after: int) -> HttpResponse:
    """503 while the live pages are paused (operator switch) or the database is not
    answering: the static datasets keep working."""
    return _error_page(request, 503, lang, "no-store", retry_after)


def too_many_page(request, lang: str, retry_after: str) -> HttpResponse:
    """429: this address asked for more pages than the read limit allows."""
    return _error_page(request, 429, lang, "no-store", retry_after)


def degradable(view):
    """Pages follow the live API: the read limit per address (group `pages`: one address
    asked a city page 3,087 times in 30 s), then degraded mode (503 instead of reading the
    database). They are read with GET or HEAD only: any other method is 405 with
    `Allow: GET, HEAD` (before the CSRF check, whose 403 page would answer a POST otherwise)."""

    @csrf_exempt
    @require_safe
    @functools.wraps(view)
    def wrapper(request, *args, lang: str = "pt-BR", **kwargs):
        try:
            enforce_rate(request, RATE_GROUP, read_limit())
        except ApplicationError as exc:
            return too_many_page(request, lang, exc.headers["Retry-After"])
        state = degraded.switch_state()
        if state is not None:
            return unavailable_page(request, lang, state["retry_after"])
        try:
            with outage.database_call():
                return view(request, *args, lang=lang, **kwargs)
        except outage.KnownDown:  # failed a moment ago: at once, as the live reads
            return unavailable_page(request, lang, degraded.DEFAULT_RETRY_AFTER)
        except DATABASE_ERRORS:
            logger.warning("page %s: database not answering", request.path, exc_info=True)
            return unavailable_page(request, lang, degraded.DEFAULT_RETRY_AFTER)

    return wrapper


def _cache(response: HttpResponse, fresh_until: dt.datetime) -> HttpResponse:
    seconds = int(
        min(settings.LIVE_CACHE_SECONDS, (fresh_until - dt.datetime.now(dt.UTC)).total_seconds())
    )
    response["Cache-Control"] = f"public, max-age={max(seconds, 0)}"
    return response


@degradable
def home(request, lang: str = "pt-BR") -> HttpResponse:
    rows = [{**c, "path": _path(c["url"])} for c in cities.cities_active(lang=lang)]
    response = _render(
        request,
        "beers/home.html",
        lang,
        # on the canonical host, like the city and bar pages' (their selectors' urls)
        {"cities": rows, "canonical": settings.SITE_URL + request.path},
        alternate=site_context(_other(lang))["home_path"],
    )
    response["Cache-Control"] = f"public, max-age={settings.LIVE_CACHE_SECONDS}"
    return response


@degradable
def city_page(request, city: str, lang: str = "pt-BR") -> HttpResponse:
    try:
        answer = ranking.search(SearchQuery(city=city, lang=lang, limit=PAGE_LIMIT))
    except ApplicationError as exc:
        if exc.status == 404:
            return not_found_page(request, lang)
        raise
    other = _other(lang)
    context = {
        "answer": answer.data,
        "city_slug": city,
        "deals": _deal_rows(answer.data["deals"], lang),
        "page_limit": PAGE_LIMIT,
        "cut": answer.data["count"] >= PAGE_LIMIT,
    }
    response = _render(
        request, "beers/city.html", lang, context, alternate=f"{render.lang_prefix(other)}/{city}"
    )
    return _cache(response, answer.fresh_until)


@degradable
def venue_page(request, city: str, venue: str, lang: str = "pt-BR") -> HttpResponse:
    try:
        answer = ranking.venue_by_slug(city_slug=city, venue_slug=venue, lang=lang)
    except ApplicationError as exc:
        if exc.status == 404:
            return not_found_page(request, lang)
        raise
    data = answer.data
    bar = data["venue"]
    other = _other(lang)
    context = {
        "answer": data,
        "venue": bar,
        "city_slug": city,
        "city_path": _path(data["city_url"]),
        "kind_label": labels.VENUE_KIND_LABELS.get(bar["kind"], bar["kind"]),
        "attribute_labels": [labels.ATTRIBUTE_LABELS.get(a, a) for a in bar["attributes"]],
        "deals": _deal_rows(data["deals"], lang),
    }
    response = _render(
        request,
        "beers/venue.html",
        lang,
        context,
        alternate=f"{render.lang_prefix(other)}/{city}/{venue}",
    )
    return _cache(response, answer.fresh_until)


ROBOTS = """User-agent: *
Disallow: /admin/
Disallow: /api/v1/search
Disallow: /api/v1/cheapest
Disallow: /api/v1/venues/
Disallow: /api/v1/optout/
Disallow: /mcp
"""


@require_safe
def robots(request) -> HttpResponse:
    """Crawlers read the pages and the open data, not the rate-limited live answers."""
    response = HttpResponse(ROBOTS, content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response


def without_slash(request, page: str, **_parts):
    """301 to the page's address without the trailing slash, keeping the query."""
    query = request.META.get("QUERY_STRING", "")
    response = HttpResponsePermanentRedirect(f"/{page}" + (f"?{query}" if query else ""))
    response["Cache-Control"] = f"public, max-age={settings.LIVE_CACHE_SECONDS}"
    return response
