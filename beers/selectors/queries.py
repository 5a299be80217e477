"""The questions the live API and the MCP tools answer, validated once.

Query strings (all text) and MCP arguments (JSON types) both go through these parsers; a bad
value raises ApplicationError 400 `invalid_request` with one issue per bad parameter.
"""

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any

from beers.errors import Issue, invalid
from beers.labels import LANGS
from beers.models import DealKind

from .price_index import MONTH_RE

CITY_SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
LOOSE_SLUG_RE = re.compile(r"^[a-z0-9-]+$")
MAX_DEALS = 50  # prices per live answer (interface.md, Limits)
FORMAT_RE = re.compile(r"^[a-z0-9_-]{2,40}$")
# ASCII digits only (`\d` also takes "٣"), no spaces around; leading zeros are fine.
_INTEGER_RE = re.compile(r"([+-]?)0*([0-9]+)")
_NUMBER_RE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
KINDS = tuple(DealKind.values)


@dataclass(frozen=True)
class SearchQuery:
    city: str
    neighbourhood: str | None = None
    brand: str | None = None
    format: str | None = None
    kind: str | None = None
    max_price_per_litre: Decimal | None = None
    limit: int = 20
    lang: str = "pt-BR"


@dataclass(frozen=True)
class CheapestQuery:
    city: str
    lat: float | None = None
    lng: float | None = None
    radius_m: int = 2000
    format: str | None = None
    limit: int = 10
    lang: str = "pt-BR"

    @property
    def has_point(self) -> bool:
        return self.lat is not None and self.lng is not None


@dataclass(frozen=True)
class VenueQuery:
    venue_id: int
    lang: str = "pt-BR"


class JsonArguments(dict):
    """Arguments that arrived as JSON (the MCP tools): a number must be a JSON number there,
    as the tools' input schemas say; a query string (REST) has only text, so there "5" is 5."""


class _Reader:
    """Reads typed values out of a mapping, collecting issues instead of stopping at one."""

    def __init__(self, params: Mapping[str, Any]):
        self.params = params
        self.issues: list[Issue] = []
        self.text_numbers = not isinstance(params, JsonArguments)

    def _raw(self, name: str):
        # A QueryDict gives the last of repeated parameters; a list (an MCP argument) is not
        # a value of any of our types, so each reader below refuses it.
        return self.params.get(name)

    def bad(self, name: str, message: str) -> None:
        self.issues.append(Issue(name, message))

    def text(self, name: str, pattern: re.Pattern, what: str, *, required: bool = False):
        value = self._raw(name)
        if value is None:
            if required:
                self.bad(name, "Required.")
            return None
        if not isinstance(value, str) or not pattern.fullmatch(value):
            self.bad(name, f"Must be {what}.")
            return None
        return value

    def choice(self, name: str, choices: tuple[str, ...], default: str | None = None):
        value = self._raw(name)
        if value is None:
            return default
        if value not in choices:
            self.bad(name, f"Must be one of: {', '.join(choices)}.")
            return default
        return value

    def integer(self, name: str, low: int, high: int | None, default: int | None = None):
        value = self._raw(name)
        if value is None:
            return default
        parsed = None
        if isinstance(value, bool):
            parsed = None
        elif isinstance(value, int):
            parsed = value
        elif isinstance(value, float) and value.is_integer():
            parsed = int(value)
        elif (
            isinstance(value, str) and self.text_numbers and (match := _INTEGER_RE.fullmatch(value))
        ):
            sign, digits = match.groups()
            # beyond any bound we check: no need to read a thousand digits exactly
            magnitude = int(digits) if len(digits) <= 30 else 10**30
            parsed = -magnitude if sign == "-" else magnitude
        if parsed is None or parsed < low or (high is not None and parsed > high):
            what = f"from {low} to {high}" if high is not None else f"of at least {low}"
            self.bad(name, f"Must be an integer {what}{self._not_text(value)}.")
            return default
        return parsed

    def number(
        self, name: str, low: float, high: float, *, low_open: bool = False, nullable: bool = False
    ):
        value = self._raw(name)
        if value is None or (
            nullable and self.text_numbers and isinstance(value, str) and value in ("", "null")
        ):
            return None
        parsed: Decimal | None = None
        if isinstance(value, bool):
            parsed = None
        elif isinstance(value, int | float):
            parsed = Decimal(repr(value)) if math.isfinite(value) else None
        elif isinstance(value, str) and self.text_numbers and _NUMBER_RE.fullmatch(value):
            try:
                parsed = Decimal(value)
            except InvalidOperation:
                parsed = None
        in_range = parsed is not None and (
            (parsed > Decimal(repr(low)) if low_open else parsed >= Decimal(repr(low)))
            and parsed <= Decimal(repr(high))
        )
        if not in_range:
            lower = f"greater than {low:g}" if low_open else f"from {low:g}"
            self.bad(name, f"Must be a number {lower} to {high:g}{self._not_text(value)}.")
            return None
        return parsed

    def _not_text(self, value) -> str:
        """A note for a number sent as a JSON string (the MCP tools take JSON numbers)."""
        return (
            " (a JSON number, not a string)"
            if isinstance(value, str) and not self.text_numbers
            else ""
        )

    def done(self) -> None:
        if self.issues:
            raise invalid(self.issues)


def parse_search(params: Mapping[str, Any]) -> SearchQuery:
    r = _Reader(params)
    city = r.text(
        "city",
        CITY_SLUG_RE,
        "a city slug (lowercase letters and digits, groups joined by single hyphens)",
        required=True,
    )
    query = dict(
        neighbourhood=r.text(
            "neighbourhood", LOOSE_SLUG_RE, "a bairro slug (lowercase letters, digits, hyphens)"
        ),
        brand=r.text("brand", LOOSE_SLUG_RE, "a brand slug (lowercase letters, digits, hyphens)"),
        format=r.text(
            "format", FORMAT_RE, "a format type or code: 2 to 40 of a-z, 0-9, '_' and '-'"
        ),
        kind=r.choice("kind", KINDS),
        max_price_per_litre=_whole_cents(r.number("max_price_per_litre", 0, 1000, low_open=True)),
        limit=r.integer("limit", 1, MAX_DEALS, default=20),
        lang=r.choice("lang", LANGS, default="pt-BR"),
    )
    r.done()
    return SearchQuery(city=city, **query)


def _whole_cents(value: Decimal | None) -> Decimal | None:
    """The maximum as the filter reads it (prices shown at most that many whole cents per
    litre): `5`, `5.0` and `5.009` are one query, and one cached answer, not three."""
    if value is None:
        return None
    return (value * 100).to_integral_value(rounding=ROUND_FLOOR) / 100


def parse_cheapest(params: Mapping[str, Any]) -> CheapestQuery:
    r = _Reader(params)
    city = r.text(
        "city",
        CITY_SLUG_RE,
        "a city slug (lowercase letters and digits, groups joined by single hyphens)",
        required=True,
    )
    lat = r.number("lat", -90, 90, nullable=True)
    lng = r.number("lng", -180, 180, nullable=True)
    query = dict(
        radius_m=r.integer("radius_m", 100, 10000, default=2000),
        format=r.text(
            "format", FORMAT_RE, "a format type or code: 2 to 40 of a-z, 0-9, '_' and '-'"
        ),
        limit=r.integer("limit", 1, MAX_DEALS, default=10),
        lang=r.choice("lang", LANGS, default="pt-BR"),
    )
    r.done()
    return CheapestQuery(
        city=city,
        lat=float(lat) if lat is not None else None,
        lng=float(lng) if lng is not None else None,
        **query,
    )


# A path's id (interface.md: integer > 0): digits only, as in /venues/12 and /deals/12/confirm
# ("+12" or " 12" are not ids; leading zeros are).
PATH_ID_RE = re.compile(r"[0-9]+")


def parse_venue(venue_id: Any, params: Mapping[str, Any]) -> VenueQuery:
    r = _Reader({**{k: params[k] for k in params}, "id": venue_id})
    if isinstance(venue_id, str) and not PATH_ID_RE.fullmatch(venue_id):
        r.bad("id", "Must be an integer of at least 1.")
        parsed_id = None
    else:
        parsed_id = r.integer("id", 1, None)
    lang = r.choice("lang", LANGS, default="pt-BR")
    r.done()
    return VenueQuery(venue_id=parsed_id, lang=lang)


@dataclass(frozen=True)
class VenueSlugQuery:
    city: str
    venue: str
    lang: str = "pt-BR"


@dataclass(frozen=True)
class CityQuery:
    city: str
    month: str | None = None


CITY_SLUG_TEXT = "a city slug (lowercase letters and digits, groups joined by single hyphens)"
VENUE_SLUG_RE = CITY_SLUG_RE


def parse_venue_slug(params: Mapping[str, Any]) -> VenueSlugQuery:
    """A bar named by its city and its slug (the last part of a PublicDeal `url`)."""
    r = _Reader(params)
    city = r.text("city", CITY_SLUG_RE, CITY_SLUG_TEXT, required=True)
    venue = r.text(
        "venue",
        VENUE_SLUG_RE,
        "a bar slug (lowercase letters and digits, groups "
        "joined by single hyphens), the last part of a deal's url",
        required=True,
    )
    lang = r.choice("lang", LANGS, default="pt-BR")
    r.done()
    return VenueSlugQuery(city=city, venue=venue, lang=lang)


def parse_city(params: Mapping[str, Any], *, with_month: bool = False) -> CityQuery:
    """A city, and for the price index an optional month (YYYY-MM)."""
    r = _Reader(params)
    city = r.text("city", CITY_SLUG_RE, CITY_SLUG_TEXT, required=True)
    month = r.text("month", MONTH_RE, "a month as YYYY-MM (e.g. 2026-11)") if with_month else None
    r.done()
    return CityQuery(city=city, month=month)


@dataclass(frozen=True)
class PricePerLitreQuery:
    price_brl: Decimal
    volume_ml: int
    units: int = 1


def parse_price_per_litre(params: Mapping[str, Any]) -> PricePerLitreQuery:
    """A price paid (BRL), the volume of one unit (ml) and how many units the price buys."""
    r = _Reader(params)
    for name in ("price_brl", "volume_ml"):
        if r._raw(name) is None:
            r.bad(name, "Required.")
    price = r.number("price_brl", 0, 10000, low_open=True)
    volume = r.integer("volume_ml", 1, 20000)
    units = r.integer("units", 1, 50, default=1)
    r.done()
    return PricePerLitreQuery(price_brl=price, volume_ml=volume, units=units)
