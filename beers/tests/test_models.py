"""The database itself refuses bad rows: every CheckConstraint and unique constraint."""

import datetime as dt
import re

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, IntegrityError, transaction

from beers.models import RESERVED_CITY_SLUGS, SLUG_RE, Neighbourhood, Venue

from .factories import (
    BeerFactory,
    BrandFactory,
    CityFactory,
    DealFactory,
    FormatFactory,
    NeighbourhoodFactory,
    PriceCheckFactory,
    VenueFactory,
)

pytestmark = pytest.mark.django_db

TYPE_OR_CODE = "format_type_valid|format_volume_in_code"

# (factory, bad values, name of the constraint that refuses them)
REFUSED = [
    (CityFactory, {"slug": "São Paulo"}, "city_slug_format"),
    (CityFactory, {"slug": "sao--paulo"}, "city_slug_format"),
    (CityFactory, {"state": "XX"}, "city_state_uf"),
    (CityFactory, {"lat": -90.5}, "city_lat_range"),
    (CityFactory, {"lat": 91}, "city_lat_range"),
    (CityFactory, {"lng": -181}, "city_lng_range"),
    (CityFactory, {"lng": 180.01}, "city_lng_range"),
    (CityFactory, {"timezone": ""}, "city_timezone_set"),
    (NeighbourhoodFactory, {"slug": "Vila_Madalena"}, "neighbourhood_slug_format"),
    (VenueFactory, {"slug": "bar-"}, "venue_slug_format"),
    (VenueFactory, {"kind": "boate"}, "venue_kind_valid"),
    (VenueFactory, {"status": "gone"}, "venue_status_valid"),
    (VenueFactory, {"lat": 90.1}, "venue_lat_range"),
    (VenueFactory, {"lng": -180.1}, "venue_lng_range"),
    (VenueFactory, {"instagram": "Bar.Do.Ze"}, "venue_instagram_format"),
    (VenueFactory, {"instagram": "@bardoze"}, "venue_instagram_format"),
    (BrandFactory, {"slug": "Brahma"}, "brand_slug_format"),
    (BeerFactory, {"slug": "brahma chopp"}, "beer_slug_format"),
    (FormatFactory, {"code": "600ml"}, "format_code_pattern"),
    (FormatFactory, {"code": "Garrafa_600"}, "format_code_pattern"),
    # A type no code could follow breaks the code's rule too: PostgreSQL names the first
    # constraint by name, SQLite the last it checked.
    (FormatFactory, {"type": "Barril", "code": "barril_5000"}, TYPE_OR_CODE),
    (FormatFactory, {"type": "barril-chopp", "code": "barril_5000"}, TYPE_OR_CODE),
    # `format=x` is refused (2 to 40 characters): a type of one letter could not be asked
    (FormatFactory, {"type": "x", "code": "x_500", "volume_ml": 500}, "format_type_valid"),
    (FormatFactory, {"volume_ml": 20001, "code": "garrafa_20001"}, "format_volume_range"),
    (FormatFactory, {"volume_ml": 0, "code": "garrafa_0"}, "format_volume_range"),
    (FormatFactory, {"code": "garrafa_601"}, "format_volume_in_code"),
    (FormatFactory, {"type": "lata", "code": "garrafa_600"}, "format_volume_in_code"),
    (DealFactory, {"price_cents": 0}, "deal_price_range"),
    (DealFactory, {"price_cents": 1_000_001}, "deal_price_range"),
    (DealFactory, {"units": 51}, "deal_units_range"),
    (DealFactory, {"packaging": "caixa"}, "deal_packaging_valid"),
    (DealFactory, {"kind": "rodizio"}, "deal_kind_valid"),
    (DealFactory, {"status": "draft"}, "deal_status_valid"),
    (DealFactory, {"open_bar_minutes": 0}, "deal_open_bar_minutes_range"),
    (DealFactory, {"open_bar_minutes": 1441}, "deal_open_bar_minutes_range"),
    (DealFactory, {"service_charge_pct": 31}, "deal_service_charge_range"),
    (DealFactory, {"couvert_cents": 100_001}, "deal_couvert_range"),
    (
        DealFactory,
        {"valid_from": dt.date(2026, 5, 2), "valid_until": dt.date(2026, 5, 1)},
        "deal_validity_order",
    ),
    (PriceCheckFactory, {"price_cents": 0}, "pricecheck_price_range"),
    (PriceCheckFactory, {"price_cents": 1_000_001}, "pricecheck_price_range"),
    (PriceCheckFactory, {"source": "rumour"}, "pricecheck_source_valid"),
]

# The same bounds, at their edges: accepted.
ACCEPTED = [
    (CityFactory, {"slug": "sao-paulo-2", "lat": -90, "lng": 180, "state": "TO"}),
    (VenueFactory, {"lat": 90, "lng": -180, "instagram": "bar.do_ze.2"}),
    (VenueFactory, {"instagram": "a" * 30}),
    (FormatFactory, {"type": "long_neck", "volume_ml": 20000}),
    (FormatFactory, {"type": "caneca", "code": "caneca_500", "volume_ml": 500}),
    (DealFactory, {"price_cents": 1, "units": 50, "service_charge_pct": 30}),
    (
        DealFactory,
        {
            "price_cents": 1_000_000,
            "couvert_cents": 100_000,
            "open_bar_minutes": 1440,
            "kind": "open_bar",
        },
    ),
    (DealFactory, {"service_charge_pct": 0, "couvert_cents": 0}),
    (DealFactory, {"valid_from": dt.date(2026, 5, 1), "valid_until": dt.date(2026, 5, 1)}),
    (DealFactory, {"valid_from": dt.date(2026, 5, 1), "valid_until": None}),
    (PriceCheckFactory, {"price_cents": 1_000_000, "source": "import"}),
]


def _case_id(case) -> str:
    return f"{case[2]}-{'-'.join(f'{k}={v}' for k, v in case[1].items())}"


@pytest.mark.parametrize(
    ("factory", "bad", "constraint"), REFUSED, ids=[_case_id(c) for c in REFUSED]
)
def test_create_refused_by_constraint(factory, bad, constraint):
    with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
        factory(**bad)


@pytest.mark.parametrize(
    ("factory", "bad", "constraint"), REFUSED, ids=[_case_id(c) for c in REFUSED]
)
def test_update_refused_by_constraint(factory, bad, constraint):
    row = factory()
    with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
        type(row).objects.filter(pk=row.pk).update(**bad)


@pytest.mark.parametrize(("factory", "values"), ACCEPTED)
def test_values_at_the_edge_are_accepted(factory, values):
    row = factory(**values)
    row.refresh_from_db()
    for name, value in values.items():
        assert getattr(row, name) == value


@pytest.mark.parametrize("field", ["units", "volume_ml"])
def test_deal_with_zero_litres_is_refused(field):
    # PostgreSQL computes the generated price_per_litre first and fails on the division by zero
    # (DataError); SQLite yields NULL there and the CHECK constraint refuses the row.
    with pytest.raises(DatabaseError), transaction.atomic():
        DealFactory(**{field: 0})


def test_venue_slug_is_unique_per_city():
    venue = VenueFactory(slug="bar-do-ze")
    with pytest.raises(IntegrityError), transaction.atomic():
        Venue.objects.create(
            city=venue.city, slug="bar-do-ze", name="Outro", kind="bar", lat=0, lng=0
        )


def test_same_venue_slug_in_another_city_is_fine():
    venue = VenueFactory(slug="bar-do-ze")
    other = VenueFactory(slug="bar-do-ze")
    assert other.city_id != venue.city_id


def test_neighbourhood_slug_is_unique_per_city():
    hood = NeighbourhoodFactory(slug="centro")
    with pytest.raises(IntegrityError), transaction.atomic():
        Neighbourhood.objects.create(city=hood.city, slug="centro", name="Centro")
    assert NeighbourhoodFactory(slug="centro").city_id != hood.city_id


@pytest.mark.parametrize(
    ("factory", "field"),
    [(CityFactory, "slug"), (BrandFactory, "slug"), (BeerFactory, "slug")],
)
def test_global_slugs_are_unique(factory, field):
    row = factory()
    with pytest.raises(IntegrityError), transaction.atomic():
        factory(**{field: getattr(row, field)})


def test_format_code_is_unique():
    fmt = FormatFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        type(fmt).objects.create(
            code=fmt.code, type="garrafa", volume_ml=600, label_pt="x", label_en="x"
        )


@pytest.mark.parametrize("slug", sorted(RESERVED_CITY_SLUGS))
def test_a_city_cannot_take_a_path_of_the_site(slug):
    city = CityFactory.build(slug=slug)
    with pytest.raises(ValidationError, match="endereço do próprio site"):
        city.full_clean()


def test_the_reserved_slugs_are_the_routes_a_city_would_fall_under():
    """Every first segment of the site's routes, and of the API's (a city's files are
    /api/v1/{city}/…), that a city slug could spell: reserved exactly when a city of that slug
    would not get its pages or its files (an audit's city `optout` got the opt-out page for
    each of its files, `venues` a 400)."""
    from django.urls import Resolver404, get_resolver, resolve

    def routes(patterns, prefix=""):
        for pattern in patterns:
            text = prefix + str(pattern.pattern)
            if hasattr(pattern, "url_patterns"):
                yield from routes(pattern.url_patterns, text)
            else:
                yield text

    segments = set()
    for route in routes(get_resolver().url_patterns):
        head = re.split(r"[/^(<\\$]", route.removeprefix("api/v1/").lstrip("^"), maxsplit=1)[0]
        if re.fullmatch(SLUG_RE, head):
            segments.add(head)
    segments |= {"mcp", "static"}  # the ASGI app's and the static files' own prefixes
    assert {"admin", "api", "en", "optout", "venues", "search", "status"} <= segments

    def lands(path: str, name: str) -> bool:
        try:
            return resolve(path).url_name == name
        except Resolver404:
            return False

    taken = {
        slug
        for slug in segments
        if slug in {"mcp", "static"}
        or not lands(f"/{slug}", "city")
        or not lands(f"/en/{slug}", "city-en")
        or not lands(f"/api/v1/{slug}/deals.json", "dataset-city-file")
    }
    assert taken == RESERVED_CITY_SLUGS


@pytest.mark.parametrize("zone", ["localtime", "Factory", "posixrules", "America/Nowhere"])
def test_a_city_zone_is_the_zone_of_a_place(zone):
    """`localtime` passed, and the city's times then followed the server's clock."""
    with pytest.raises(ValidationError, match="IANA"):
        CityFactory.build(timezone=zone).full_clean(exclude=["slug"])
    CityFactory.build(timezone="America/Noronha").full_clean(exclude=["slug"])
