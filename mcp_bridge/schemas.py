"""Output schemas of the tools: the shapes beers' selectors render (interface.md), described for
agents. They only describe and validate; the answers themselves come from beers.selectors.
"""

from typing import Annotated, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

Kind = Literal["regular", "happy_hour", "promo", "combo", "open_bar"]


def _d(text: str):
    return Field(description=text)


class PublicDeal(TypedDict):
    id: Annotated[int, _d("the price's id")]
    venue: Annotated[str, _d("bar name")]
    neighbourhood: Annotated[str | None, _d("bairro name")]
    url: Annotated[
        str, _d("the bar's page on Breja, to cite; its last part is the venue slug get_venue takes")
    ]
    beer: str
    brand: str | None
    serving: Annotated[str, _d("human label of what the price buys, e.g. a 600 ml bottle")]
    format: Annotated[str, _d("format code: type and volume in ml, e.g. garrafa_600")]
    price_brl: Annotated[float, _d("package price in BRL")]
    price_per_litre_brl: NotRequired[Annotated[float, _d("BRL per litre; absent for open bars")]]
    open_bar_minutes: Annotated[int | None, _d("minutes of an open bar")]
    price_label: str
    kind: Kind
    when: Annotated[str | None, _d("schedule text of happy hours and timed promos")]
    service_charge_pct: int | None
    couvert_brl: Annotated[float | None, _d("cover charge in BRL")]
    conditions: str | None
    verified_on: Annotated[str, _d("city-local date (YYYY-MM-DD) of the last check")]
    possibly_out_of_date: Annotated[bool, _d("last checked more than 90 days ago")]
    confirmations: int
    distance_m: NotRequired[Annotated[int, _d("metres from the given point (cheapest_now)")]]


class DealsAnswer(TypedDict):
    city: str
    city_url: str
    as_of: Annotated[str, _d("when the answer was computed, ISO 8601 with the city's offset")]
    count: int
    deals: list[PublicDeal]
    source: Annotated[str, _d("attribution to show with the data (ODbL 1.0)")]


class CheapestAnswer(DealsAnswer):
    local_time: Annotated[str, _d("the city's time the answer is for, ISO 8601")]


class PublicVenue(TypedDict):
    id: int
    slug: str
    name: str
    url: str | None
    kind: str
    drink_on_site: bool
    neighbourhood: str | None
    address: str | None
    lat: float
    lng: float
    instagram: str | None
    opening_hours: str | None
    attributes: list[str]
    status: str


class VenueAnswer(DealsAnswer):
    venue: PublicVenue


class PricePerLitreAnswer(TypedDict):
    price_per_litre_brl: Annotated[float, _d("BRL per litre, rounded half-up to cents")]
    litres: Annotated[float, _d("litres the price buys: units × volume_ml / 1000")]


class Neighbourhood(TypedDict):
    slug: Annotated[str, _d("bairro slug: the neighbourhood filter of search_deals")]
    name: str
    venues: Annotated[int, _d("bars with a price in the rankings")]
    deals: Annotated[int, _d("prices in the rankings")]
    cheapest_price_per_litre_brl: Annotated[float | None, _d("lowest BRL per litre")]


class NeighbourhoodsAnswer(TypedDict):
    city: str
    neighbourhoods: list[Neighbourhood]
    as_of: str
    source: str


class IndexCell(TypedDict):
    month: str
    final: bool
    scope: Literal["city", "format", "neighbourhood", "brand"]
    key: Annotated[str | None, _d("null for the city; else the format type, bairro or brand slug")]
    n: Annotated[int, _d("observations the cell rests on")]
    min_cents: Annotated[int, _d("integer cents of BRL per litre")]
    p25_cents: int
    median_cents: int
    p75_cents: int


class PriceIndexAnswer(TypedDict):
    updated_at: str
    license: str
    attribution: str
    city: Annotated[str, _d("the city's slug, as in {city}/price-index.json")]
    month: Annotated[str | None, _d("YYYY-MM; null when the city has no observations")]
    final: Annotated[
        bool | None,
        _d("true once the month has ended in the city and been closed: its figures never change"),
    ]
    items: list[IndexCell]
    as_of: str
    source: str


class CityEntry(TypedDict):
    slug: str
    name: str
    state: str
    timezone: str
    lat: float
    lng: float
    deal_count: int
    venue_count: int


class Brand(TypedDict):
    slug: str
    name: str


class Format(TypedDict):
    code: Annotated[str, _d("format code, e.g. garrafa_600")]
    type: Annotated[str, _d("format type: lata, long_neck, garrafa, litrao, chopp, torre, …")]
    volume_ml: int
    label_pt: str
    label_en: str


class CatalogAnswer(TypedDict):
    cities: list[CityEntry]
    brands: list[Brand]
    formats: list[Format]
    as_of: str
    source: str
