"""The seven tools. Each one parses its arguments in beers.selectors.queries and answers
through a selector; the three with a REST twin (search_deals, cheapest_now, get_venue) use the
REST API's parser, selector and answer cache and return the very JSON the API serves. Every
answer is structured content and, unchanged, text.

Arguments are declared loosely in Python (`Any`) and precisely in the published input schema:
validation happens once, in beers.selectors.queries, so a bad value gets the API's message
(the argument's name and what it accepts) as a tool error, not a pydantic dump.
"""

from collections.abc import Callable
from typing import Annotated, Any

import orjson
from django.conf import settings
from django.db import close_old_connections
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import WithJsonSchema

from beers.answers import DATASETS_INDEX, answer_cached, ensure_live
from beers.errors import ApplicationError, shown
from beers.selectors import cities, overview, queries, ranking
from beers.selectors.price_index import MONTH_RE
from beers.selectors.queries import KINDS, LANGS

from . import schemas

READ_ONLY = ToolAnnotations(
    read_only_hint=True, idempotent_hint=True, destructive_hint=False, open_world_hint=False
)

CITY_SLUG = queries.CITY_SLUG_RE.pattern


def _arg(schema: dict) -> WithJsonSchema:
    return WithJsonSchema(schema)


CityArg = Annotated[
    Any,
    _arg(
        {
            "type": "string",
            "pattern": CITY_SLUG,
            "description": "city slug, e.g. sao-paulo (the catalog tool lists them)",
        }
    ),
]
LangArg = Annotated[
    Any,
    _arg(
        {
            "type": ["string", "null"],
            "enum": [*LANGS, None],
            "default": "pt-BR",
            "description": "language of labels, schedules and page links",
        }
    ),
]
FormatArg = Annotated[
    Any,
    _arg(
        {
            "type": ["string", "null"],
            "pattern": queries.FORMAT_RE.pattern,
            "default": None,
            "description": "a format type (lata, long_neck, garrafa, litrao, chopp, torre) or a format "
            "code (type and volume in ml, e.g. garrafa_600); see catalog",
        }
    ),
]


# --- plumbing --------------------------------------------------------------------------------


def _json_result(body: bytes) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=body.decode())],
        structured_content=orjson.loads(body),
    )


def error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def shorten(value) -> str:
    """A value an agent sent, quoted for a message, cut (a 3 MB city name must not come back
    whole)."""
    return shown(repr(value))


def _error_message(exc: ApplicationError, params: dict) -> str:
    """A message an agent can act on: which argument was wrong and what it accepts."""
    if exc.code == "degraded":
        retry = exc.headers.get("Retry-After", "")
        return (
            f"{exc.message} Retry in {retry} seconds, or read the static datasets instead: "
            f"{settings.SITE_URL}{DATASETS_INDEX} lists every city's prices, bars and price "
            "index as JSON and CSV files."
        )
    if exc.code == "invalid_request":
        issues = "; ".join(f"{i.path}: {i.message}" for i in exc.issues)
        return f"Invalid arguments. {issues}"
    if exc.code == "not_found":
        covered = [c["slug"] for c in cities.cities_active(lang="en")]
        if params.get("city") not in covered:
            shown = ", ".join(covered[:30]) + (", …" if len(covered) > 30 else "")
            return (
                f"city: unknown city {shorten(params.get('city'))}. Cities covered: {shown} "
                "(the catalog tool lists them all)."
            )
        if "venue" in params:
            return (
                f"venue: no bar {shorten(params['venue'])} in {params['city']}. Use the venue slug "
                "from the last part of a deal's url (search_deals or cheapest_now)."
            )
    return exc.message or exc.code


def _run(
    key: str | None, params: dict, parse: Callable[[dict], Any], compute: Callable[[Any], Any]
) -> CallToolResult:
    """Degraded gate → parse → cached selector answer, with the connections of this worker
    thread closed before and after (MCP calls bypass Django's request signals). Without a
    cache key the answer is a pure computation: no gate, no cache, no database."""
    params = queries.JsonArguments(params)
    if key is None:
        try:
            return _json_result(orjson.dumps(compute(parse(params))))
        except ApplicationError as exc:
            return error(_error_message(exc, params))
    close_old_connections()
    try:
        ensure_live()
        query = parse(params)
        body = answer_cached((key, query), lambda: compute(query)).body
    except ApplicationError as exc:
        return error(_error_message(exc, params))
    finally:
        close_old_connections()
    return _json_result(body)


# --- tools -----------------------------------------------------------------------------------


def price_per_litre(
    price_brl: Annotated[
        Any,
        _arg(
            {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 10000,
                "description": "price paid, in BRL (e.g. 12.90)",
            }
        ),
    ] = None,
    volume_ml: Annotated[
        Any,
        _arg(
            {
                "type": "integer",
                "minimum": 1,
                "maximum": 20000,
                "description": "volume of one unit in millilitres (350 can, 600 bottle, 1000 litrão)",
            }
        ),
    ] = None,
    units: Annotated[
        Any,
        _arg(
            {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": 50,
                "default": 1,
                "description": "how many units the price buys (e.g. 5 for a bucket of five)",
            }
        ),
    ] = 1,
) -> Annotated[CallToolResult, schemas.PricePerLitreAnswer]:
    """Convert a price into BRL per litre, the way Breja ranks prices.

    Use it to compare a price the user saw with Breja's rankings (price_per_litre_brl in
    search_deals and cheapest_now). litres = units × volume_ml / 1000; the price per litre is
    price_brl / litres, rounded half-up to cents. Needs no city and reads no data."""
    params = {"price_brl": price_brl, "volume_ml": volume_ml, "units": units}
    return _run(None, params, queries.parse_price_per_litre, overview.price_per_litre)


def search_deals(
    city: CityArg = None,
    neighbourhood: Annotated[
        Any,
        _arg(
            {
                "type": ["string", "null"],
                "pattern": queries.LOOSE_SLUG_RE.pattern,
                "default": None,
                "description": "bairro slug (list_neighbourhoods gives them), e.g. vila-madalena",
            }
        ),
    ] = None,
    brand: Annotated[
        Any,
        _arg(
            {
                "type": ["string", "null"],
                "pattern": queries.LOOSE_SLUG_RE.pattern,
                "default": None,
                "description": "brand slug (catalog gives them), e.g. heineken",
            }
        ),
    ] = None,
    format: FormatArg = None,  # noqa: A002 - the interface's parameter name
    kind: Annotated[
        Any,
        _arg(
            {
                "type": ["string", "null"],
                "enum": [*KINDS, None],
                "default": None,
                "description": "only this kind of price; open bars appear only with open_bar",
            }
        ),
    ] = None,
    max_price_per_litre: Annotated[
        Any,
        _arg(
            {
                "type": ["number", "null"],
                "exclusiveMinimum": 0,
                "maximum": 1000,
                "default": None,
                "description": "keep prices of at most this many BRL per litre",
            }
        ),
    ] = None,
    limit: Annotated[
        Any,
        _arg(
            {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": queries.MAX_DEALS,
                "default": 20,
                "description": "how many prices to return",
            }
        ),
    ] = 20,
    lang: LangArg = "pt-BR",
) -> Annotated[CallToolResult, schemas.DealsAnswer]:
    """A city's beer prices, cheapest per litre first (BRL per litre, then package price).

    Use it for "where is beer cheapest in <city>", optionally in one bairro, of one brand, in
    one format (e.g. garrafa for 600 ml bottles) or kind (happy_hour, promo, …), or under a
    maximum BRL per litre. Each price names the bar, the serving (volume in ml), the price in
    BRL, when it applies (happy-hour schedule) and the date it was last checked; prices checked
    more than 180 days ago are left out. Open bars appear only with kind=open_bar, ranked by
    package price. Ignores the time of day: for what is on right now use cheapest_now.
    Chain: catalog (city, brand and format slugs) → search_deals → get_venue with the slug
    at the end of a deal's url. Cite the deal's url and the answer's source."""
    params = {
        "city": city,
        "neighbourhood": neighbourhood,
        "brand": brand,
        "format": format,
        "kind": kind,
        "max_price_per_litre": max_price_per_litre,
        "limit": limit,
        "lang": lang,
    }
    return _run("search", params, queries.parse_search, ranking.search)


def cheapest_now(
    city: CityArg = None,
    lat: Annotated[
        Any,
        _arg(
            {
                "type": ["number", "null"],
                "minimum": -90,
                "maximum": 90,
                "default": None,
                "description": "latitude of the user's point (decimal degrees)",
            }
        ),
    ] = None,
    lng: Annotated[
        Any,
        _arg(
            {
                "type": ["number", "null"],
                "minimum": -180,
                "maximum": 180,
                "default": None,
                "description": "longitude of the user's point (decimal degrees)",
            }
        ),
    ] = None,
    radius_m: Annotated[
        Any,
        _arg(
            {
                "type": ["integer", "null"],
                "minimum": 100,
                "maximum": 10000,
                "default": 2000,
                "description": "with lat and lng: keep bars within this many metres",
            }
        ),
    ] = 2000,
    format: FormatArg = None,  # noqa: A002 - the interface's parameter name
    limit: Annotated[
        Any,
        _arg(
            {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": queries.MAX_DEALS,
                "default": 10,
                "description": "how many prices to return",
            }
        ),
    ] = 10,
    lang: LangArg = "pt-BR",
) -> Annotated[CallToolResult, schemas.CheapestAnswer]:
    """The cheapest beer prices on right now in the city's own time zone, cheapest per litre
    (BRL) first: regular prices plus happy hours and timed promos whose window is open now.

    Use it for "where can I drink cheap now (near me)". With lat and lng it keeps bars within
    radius_m metres of the point (default 2000) and gives each price its distance_m in metres;
    the order stays by price per litre. local_time tells the city time the answer is for.
    Then get_venue (city + the slug at the end of a deal's url) shows the bar."""
    params = {
        "city": city,
        "lat": lat,
        "lng": lng,
        "radius_m": radius_m,
        "format": format,
        "limit": limit,
        "lang": lang,
    }
    return _run("cheapest", params, queries.parse_cheapest, ranking.cheapest)


def _venue(query: queries.VenueSlugQuery):
    return ranking.venue_by_slug(city_slug=query.city, venue_slug=query.venue, lang=query.lang)


def get_venue(
    city: CityArg = None,
    venue: Annotated[
        Any,
        _arg(
            {
                "type": "string",
                "pattern": CITY_SLUG,
                "description": "the bar's slug: the last part of a deal's url from search_deals or "
                "cheapest_now (…/sao-paulo/bar-do-ze → bar-do-ze)",
            }
        ),
    ] = None,
    lang: LangArg = "pt-BR",
) -> Annotated[CallToolResult, schemas.VenueAnswer]:
    """One bar: its kind, bairro, address, location (lat/lng), Instagram, opening hours and
    attributes, and every price it has in the rankings, cheapest per litre (BRL) first.

    Use it after search_deals or cheapest_now to tell the user more about a bar; the venue slug
    is the last part of the deal's url."""
    params = {"city": city, "venue": venue, "lang": lang}
    return _run("venue-slug", params, queries.parse_venue_slug, _venue)


def list_neighbourhoods(
    city: CityArg = None,
) -> Annotated[CallToolResult, schemas.NeighbourhoodsAnswer]:
    """The bairros (neighbourhoods) of a city that have prices: for each, its slug and name,
    the number of bars and of prices, and the cheapest price per litre in BRL; most covered
    first.

    Use it to answer "which bairro is cheapest" or to find the slug that search_deals takes as
    its neighbourhood filter."""
    return _run(
        "neighbourhoods", {"city": city}, queries.parse_city, overview.neighbourhoods_covered
    )


def _parse_index(params: dict) -> queries.CityQuery:
    return queries.parse_city(params, with_month=True)


def price_index(
    city: CityArg = None,
    month: Annotated[
        Any,
        _arg(
            {
                "type": ["string", "null"],
                "pattern": MONTH_RE.pattern,
                "default": None,
                "description": "YYYY-MM, city-local calendar month; the latest month by default",
            }
        ),
    ] = None,
) -> Annotated[CallToolResult, schemas.PriceIndexAnswer]:
    """The monthly beer price index of a city: minimum, first quartile, median and third
    quartile of the price per litre, for the whole city and by format type, bairro and brand,
    each cell with n, the number of observations it rests on. Values are integer cents of BRL
    per litre (divide by 100 for BRL). Only regular prices count, each at its last check in
    the month. final is true once the month has ended in the city (it is then closed); a final
    month's figures never change.

    Use it for "how much does beer cost in <city>" or to compare months and bairros; the same
    figures are in the open dataset {city}/price-index.json."""
    return _run(
        "price-index", {"city": city, "month": month}, _parse_index, overview.price_index_month
    )


def _no_arguments(params: dict) -> None:
    return None


def catalog() -> Annotated[CallToolResult, schemas.CatalogAnswer]:
    """What Breja covers: the cities (slug, name, state, time zone, number of prices and bars),
    the beer brands and the serving formats (code, type, volume in ml, labels).
    A city's deal_count counts every price of its open data (deals.json), old ones included:
    search_deals leaves out prices checked more than 180 days ago or outside their dates, and
    those of drinks shops where people cannot drink.

    Call it first: its slugs are what the other tools take (city everywhere, brand and format
    in search_deals, format in cheapest_now)."""
    return _run("catalog", {}, _no_arguments, lambda _query: overview.catalog_overview())


# Required in the published schema, though None in Python: a missing one reaches the parser,
# whose message ("city: Required.") is the one every other bad argument gets.
REQUIRED = {
    "price_per_litre": ["price_brl", "volume_ml"],
    "search_deals": ["city"],
    "cheapest_now": ["city"],
    "get_venue": ["city", "venue"],
    "list_neighbourhoods": ["city"],
    "price_index": ["city"],
    "catalog": [],
}

TOOLS = (
    price_per_litre,
    search_deals,
    cheapest_now,
    get_venue,
    list_neighbourhoods,
    price_index,
    catalog,
)
