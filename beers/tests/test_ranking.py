"""The ranking selectors against a plain reference implementation on generated data."""

import datetime as dt
import math
from decimal import Decimal
from fractions import Fraction

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beers.models import Beer, Brand, City, Format, Neighbourhood, Venue
from beers.selectors import ranking
from beers.selectors.queries import CheapestQuery, SearchQuery
from beers.services import deal_create

pytestmark = pytest.mark.django_db

ZONES = {
    "noronha": ("America/Noronha", -3.85, -32.42),  # UTC−2
    "sao-paulo": ("America/Sao_Paulo", -23.55, -46.63),  # UTC−3
    "manaus": ("America/Manaus", -3.10, -60.02),  # UTC−4
}
FORMATS = [
    ("lata_350", "lata", 350),
    ("garrafa_600", "garrafa", 600),
    ("chopp_300", "chopp", 300),
    ("torre_2500", "torre", 2500),
]
KINDS = ["regular", "happy_hour", "promo", "combo", "open_bar"]


class _Rollback(Exception):
    pass


def _catalog():
    formats = {
        code: Format.objects.get_or_create(
            code=code, defaults=dict(type=t, volume_ml=v, label_pt=code, label_en=code)
        )[0]
        for code, t, v in FORMATS
    }
    brands = [
        Brand.objects.get_or_create(slug=s, defaults={"name": s.title()})[0]
        for s in ("brahma", "skol")
    ]
    beer = Beer.objects.get_or_create(
        slug="brahma-chopp", defaults={"name": "Brahma Chopp", "brand": brands[0]}
    )[0]
    return formats, brands, beer


def _city(slug):
    tz, lat, lng = ZONES[slug]
    city = City.objects.create(
        slug=slug, name=slug.title(), state="SP", timezone=tz, lat=lat, lng=lng, active=True
    )
    hoods = [
        Neighbourhood.objects.create(city=city, slug=f"b{i}", name=f"Bairro {i}") for i in range(2)
    ]
    return city, hoods


deal_spec = st.fixed_dictionaries(
    {
        "venue": st.integers(0, 4),
        "format": st.sampled_from([c for c, _, _ in FORMATS]),
        "units": st.sampled_from([1, 1, 2, 5]),
        "price_cents": st.sampled_from([500, 990, 1000, 1290, 1500, 2990, 4990]),
        "kind": st.sampled_from(KINDS),
        "status": st.sampled_from(["published", "published", "disputed", "suspended", "retired"]),
        "age_days": st.sampled_from([0, 1, 90, 91, 180, 181, 250]),
        "age_minutes": st.sampled_from([0, 30, 600]),
        "brand": st.sampled_from([None, 0, 1, "beer"]),
        "valid_from": st.sampled_from([None, -10, 0, 1]),
        "valid_until": st.sampled_from([None, -1, 0, 10]),
        "schedule": st.sampled_from(
            [
                None,
                {"days": [0, 1, 2, 3, 4, 5, 6], "start": "17:00", "end": "20:00"},
                {"days": [0, 1, 2, 3, 4, 5, 6], "start": "22:00", "end": "02:00"},
                {"days": [1, 3, 5], "start": "00:00", "end": "24:00"},
            ]
        ),
    }
)
world = st.fixed_dictionaries(
    {
        "city": st.sampled_from(list(ZONES)),
        "venues_closed": st.lists(st.booleans(), min_size=5, max_size=5),
        "offsets": st.lists(
            st.tuples(st.integers(-3000, 3000), st.integers(-3000, 3000)), min_size=5, max_size=5
        ),
        "deals": st.lists(deal_spec, min_size=1, max_size=25),
        "local_hour": st.sampled_from([0, 1, 12, 17, 19, 23]),
    }
)


def _build(w):
    formats, brands, beer = _catalog()
    city, hoods = _city(w["city"])
    now_local = dt.datetime(2026, 11, 23, w["local_hour"], 30, tzinfo=city.tz)
    today = now_local.date()
    venues = []
    for i, (closed, (dn, de)) in enumerate(zip(w["venues_closed"], w["offsets"], strict=True)):
        lat = city.lat + dn / 111_195
        lng = city.lng + de / (111_195 * math.cos(math.radians(city.lat)))
        venues.append(
            Venue.objects.create(
                city=city,
                slug=f"bar-{i}",
                name=f"Bar {i}",
                kind=("bar", "deposito")[i % 2],
                on_site=i != 3,
                lat=lat,
                lng=lng,
                neighbourhood=hoods[i % 2],
                status="closed" if closed else "open",
            )
        )
    rows = []
    for spec in w["deals"]:
        brand_choice = spec["brand"]
        deal = deal_create(
            venue=venues[spec["venue"]],
            format=formats[spec["format"]],
            price_cents=spec["price_cents"],
            units=spec["units"],
            kind=spec["kind"],
            beer=beer if brand_choice == "beer" else None,
            brand=brands[brand_choice] if isinstance(brand_choice, int) else None,
            open_bar_minutes=120 if spec["kind"] == "open_bar" else None,
            valid_from=None
            if spec["valid_from"] is None
            else today + dt.timedelta(days=spec["valid_from"]),
            valid_until=None
            if spec["valid_until"] is None
            else today
            + dt.timedelta(
                days=max(
                    spec["valid_until"], -30 if spec["valid_from"] is None else spec["valid_from"]
                )
            ),
            schedules=[spec["schedule"]] if spec["schedule"] else [],
            verified_at=now_local
            - dt.timedelta(days=spec["age_days"], minutes=spec["age_minutes"]),
            status=spec["status"],
        )
        rows.append(deal)
    return city, venues, rows, now_local


def _in_rankings(d, today, tz):
    verified_on = d.verified_at.astimezone(tz).date()
    return (
        d.status in ("published", "disputed")
        and d.venue.status == "open"
        and (d.venue.kind != "deposito" or d.venue.on_site)
        and (today - verified_on).days <= 180
        and (d.valid_from is None or d.valid_from <= today)
        and (d.valid_until is None or d.valid_until >= today)
    )


def _ref_order(deals, open_bar=False):
    if open_bar:
        return sorted(deals, key=lambda d: (d.price_cents, -d.verified_at.timestamp(), d.id))
    return sorted(
        deals,
        key=lambda d: (
            Fraction(d.price_cents * 1000, d.units * d.volume_ml),
            d.price_cents,
            -d.verified_at.timestamp(),
            d.id,
        ),
    )


def _half_up(value: Fraction) -> int:
    return math.floor(value + Fraction(1, 2))


def _run(w, check):
    try:
        with transaction.atomic():
            check(*_build(w))
            raise _Rollback
    except _Rollback:
        pass


SETTINGS = dict(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@settings(**SETTINGS)
@given(
    w=world,
    kind=st.sampled_from([None, *KINDS]),
    limit=st.sampled_from([1, 3, 50]),
    fmt=st.sampled_from([None, "lata", "garrafa_600", "torre", "litrao"]),
    hood=st.sampled_from([None, "b0", "b1", "nope"]),
    brand=st.sampled_from([None, "brahma", "skol"]),
    max_ppl=st.sampled_from([None, Decimal("5"), Decimal("16.5"), Decimal("33.33")]),
)
def test_search_matches_reference(w, kind, limit, fmt, hood, brand, max_ppl):
    def check(city, venues, rows, now_local):
        today = now_local.date()
        query = SearchQuery(
            city=city.slug,
            kind=kind,
            limit=limit,
            format=fmt,
            neighbourhood=hood,
            brand=brand,
            max_price_per_litre=max_ppl,
        )
        got = ranking.search(query, now=now_local).data
        expected = [d for d in rows if _in_rankings(d, today, city.tz)]
        expected = [d for d in expected if (d.kind == "open_bar") == (kind == "open_bar")]
        if kind and kind != "open_bar":
            expected = [d for d in expected if d.kind == kind]
        if fmt:
            expected = [d for d in expected if d.format.code == fmt or d.format.type == fmt]
        if hood:
            expected = [d for d in expected if d.venue.neighbourhood.slug == hood]
        if brand:
            expected = [d for d in expected if d.brand and d.brand.slug == brand]
        if max_ppl is not None:
            expected = [
                d
                for d in expected
                if d.kind != "open_bar"
                and _half_up(Fraction(d.price_cents * 1000, d.units * d.volume_ml))
                <= math.floor(max_ppl * 100)
            ]
        expected = _ref_order(expected, open_bar=kind == "open_bar")[:limit]
        assert [d["id"] for d in got["deals"]] == [d.id for d in expected]
        assert got["count"] == len(expected)
        for item, deal in zip(got["deals"], expected, strict=True):
            assert item["verified_on"] == deal.verified_at.astimezone(city.tz).date().isoformat()
            age = (today - deal.verified_at.astimezone(city.tz).date()).days
            assert item["possibly_out_of_date"] == (age > 90)
            assert ("price_per_litre_brl" in item) == (deal.kind != "open_bar")
            assert "distance_m" not in item

    _run(w, check)


@settings(**SETTINGS)
@given(
    w=world,
    radius=st.sampled_from([100, 1000, 2000, 10000]),
    point=st.booleans(),
    limit=st.sampled_from([2, 10, 50]),
)
def test_cheapest_matches_reference(w, radius, point, limit):
    from beers.selectors.on_now import is_on

    def check(city, venues, rows, now_local):
        today = now_local.date()
        query = CheapestQuery(
            city=city.slug,
            lat=city.lat if point else None,
            lng=city.lng if point else None,
            radius_m=radius,
            limit=limit,
        )
        got = ranking.cheapest(query, now=now_local).data
        expected = [
            d
            for d in rows
            if _in_rankings(d, today, city.tz)
            and d.kind != "open_bar"
            and is_on(d.schedules, now_local)
        ]
        if point:
            expected = [
                d
                for d in expected
                if _ref_distance(city.lat, city.lng, d.venue.lat, d.venue.lng) <= radius
            ]
        expected = _ref_order(expected)[:limit]
        assert [d["id"] for d in got["deals"]] == [d.id for d in expected]
        assert got["local_time"] == now_local.isoformat()
        assert all(("distance_m" in d) == point for d in got["deals"])

    _run(w, check)


def _ref_distance(lat1, lng1, lat2, lng2) -> int:
    r = 6_371_008.8
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    )
    return math.floor(2 * r * math.asin(math.sqrt(a)) + 0.5)


@pytest.mark.parametrize("radius", [100, 1000])
def test_radius_edge_is_inclusive_on_rounded_metres(radius):
    """A bar just under radius + 0.5 m shows `distance_m` = radius and is inside (the box that
    pre-filters bars must not cut it off); the next step rounds to radius + 1 and is out."""
    formats, _, _ = _catalog()
    city, _ = _city("sao-paulo")
    now = dt.datetime(2026, 11, 23, 12, 0, tzinfo=city.tz)
    # Walk north in 1 cm steps: the last point that rounds to the radius, then the next one.
    inside = outside = None
    for step in range((radius - 1) * 100, (radius + 2) * 100):
        lat = city.lat + step / 100 / 111_195
        d = _ref_distance(city.lat, city.lng, lat, city.lng)
        if d == radius:
            inside = lat
        if d == radius + 1:
            outside = lat
            break
    for name, lat in (("in", inside), ("out", outside)):
        venue = Venue.objects.create(
            city=city, slug=name, name=name, kind="bar", lat=lat, lng=city.lng
        )
        deal_create(venue=venue, format=formats["lata_350"], price_cents=500, verified_at=now)
    got = ranking.cheapest(
        CheapestQuery(city=city.slug, lat=city.lat, lng=city.lng, radius_m=radius), now=now
    ).data
    assert [d["venue"] for d in got["deals"]] == ["in"]
    assert got["deals"][0]["distance_m"] == radius


def test_age_rules_use_city_local_dates():
    """A check at 23:30 local, 180 days before today, is 180 days old (kept) even though in
    UTC it already fell on the next day; 181 days is left out; 91 is flagged."""
    formats, _, _ = _catalog()
    city, _ = _city("manaus")
    now = dt.datetime(2026, 11, 23, 0, 10, tzinfo=city.tz)
    venue = Venue.objects.create(
        city=city, slug="v", name="V", kind="bar", lat=city.lat, lng=city.lng
    )
    day = dt.date(2026, 11, 23)
    made = {}
    for age in (90, 91, 180, 181):
        checked = dt.datetime.combine(day - dt.timedelta(days=age), dt.time(23, 30), tzinfo=city.tz)
        made[age] = deal_create(
            venue=venue, format=formats["lata_350"], price_cents=500 + age, verified_at=checked
        ).id
    got = ranking.search(SearchQuery(city=city.slug), now=now).data
    by_id = {d["id"]: d for d in got["deals"]}
    assert set(by_id) == {made[90], made[91], made[180]}
    assert by_id[made[90]]["possibly_out_of_date"] is False
    assert by_id[made[91]]["possibly_out_of_date"] is True
    assert by_id[made[180]]["verified_on"] == "2026-05-27"


@pytest.mark.parametrize("brand", [None, "brahma"], ids=["city", "city and brand"])
def test_the_ranking_order_is_read_from_an_index_not_sorted(brand):
    """PRICE_ORDER and the indexes that spell it (beers.models) must agree, or PostgreSQL sorts
    every ranked price of the city on each search: with sorting and sequential scans priced out,
    the plan still has a Sort node only when no index gives the order."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's planner")
    formats, brands, _beer = _catalog()
    city, _hoods = _city("sao-paulo")
    venue = Venue.objects.create(city=city, slug="v", name="V", kind="bar", lat=-23.5, lng=-46.6)
    for cents in (500, 990, 1290):
        deal_create(venue=venue, format=formats["lata_350"], price_cents=cents, brand=brands[0])
    today = city.local_now().date()
    given = ranking._as_known(city) | ({"brand": brand} if brand else {})
    shape = (False, None, 20, today, ranking.oldest_check(city, today))
    qs = ranking._search_queryset(shape, city_id=city.pk, **given)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = qs.explain()
    assert "Sort" not in plan, plan
    assert [row["price_cents"] for row in qs] == [500, 990, 1290]
