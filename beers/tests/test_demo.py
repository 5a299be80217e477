"""The demo data set: deterministic, idempotent, and rich enough to exercise every door."""

import datetime as dt
import io
import itertools
import re
from collections import Counter

import pytest
from django.core.management import call_command
from django.utils import timezone
from shapely.geometry import shape

from beers.demo import DEMO_SEED, demo_load, demo_plan
from beers.geo import point_in_geometry
from beers.models import (
    INSTAGRAM_RE,
    VENUE_ATTRIBUTES,
    Beer,
    Brand,
    City,
    Deal,
    DealKind,
    DealStatus,
    Format,
    FormatType,
    Neighbourhood,
    Packaging,
    PriceCheck,
    Venue,
    VenueStatus,
)
from submissions.models import DealDispute, ReviewState

pytestmark = pytest.mark.django_db

MODELS = (City, Neighbourhood, Venue, Brand, Beer, Format, Deal, PriceCheck)
HHMM_RE = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


def row_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in MODELS}


def local_age_days(deal: Deal) -> int:
    """City-local today minus the city-local date of the last check, as the API counts it."""
    tz = deal.city.tz
    return (timezone.now().astimezone(tz).date() - deal.verified_at.astimezone(tz).date()).days


def local_today(city: City) -> dt.date:
    return timezone.now().astimezone(city.tz).date()


@pytest.fixture
def deals(demo_data) -> list[Deal]:
    return list(Deal.objects.select_related("city", "venue", "format", "beer"))


# --- Determinism and idempotency ---------------------------------------------------------------


def test_plan_is_a_pure_function_of_the_seed():
    assert demo_plan() == demo_plan(DEMO_SEED)
    assert demo_plan(DEMO_SEED + 1).deals != demo_plan(DEMO_SEED).deals


def test_plan_has_no_two_prices_with_the_same_natural_key():
    keys = [deal.key for deal in demo_plan().deals]
    assert len(keys) == len(set(keys))


def test_second_load_creates_nothing_and_changes_nothing(demo_data):
    before = row_counts()
    stamps = dict(Deal.objects.values_list("id", "verified_at"))

    created = demo_load()

    assert sum(created.values()) == 0
    assert row_counts() == before
    assert dict(Deal.objects.values_list("id", "verified_at")) == stamps


def test_first_load_counts_match_the_plan(demo_data):
    plan = demo_plan()
    assert demo_data["cities"] == len(plan.cities) == City.objects.count()
    assert demo_data["venues"] == len(plan.venues) == Venue.objects.count()
    assert demo_data["deals"] == len(plan.deals) == Deal.objects.count()
    assert demo_data["price_checks"] == PriceCheck.objects.count()


def test_if_empty_leaves_a_database_with_cities_alone(demo_data):
    before = row_counts()
    out = io.StringIO()
    call_command("load_demo", "--if-empty", stdout=out)
    assert "nothing loaded" in out.getvalue()
    assert row_counts() == before


def test_if_empty_loads_into_an_empty_database_and_a_rerun_adds_nothing(
    django_capture_on_commit_callbacks,
):
    import orjson

    from beers.answers import answer_cached
    from beers.selectors.overview import catalog_overview

    def cached_cities() -> list:  # as MCP's catalog tool answers, through the shared cache
        return orjson.loads(answer_cached(("catalog", None), catalog_overview).body)["cities"]

    # Other tests of this module share the loaded demo; empty it inside this test's savepoint.
    for model in reversed(MODELS):
        model.objects.all().delete()
    assert cached_cities() == []  # an answer now cached
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", "--if-empty", stdout=out)
    # the cached answers are stale: the loaded cities show at once
    assert len(cached_cities()) >= 4
    # and the served files follow (exported at once: no broker here)
    from datasets.generations import read_pointer
    from datasets.storage import datasets_storage

    pointer = read_pointer(datasets_storage())
    assert pointer is not None and "sao-paulo/deals.json" in pointer["files"]
    loaded = row_counts()
    assert loaded["Deal"] >= 400
    assert "created" in out.getvalue()

    call_command("load_demo", stdout=io.StringIO())
    assert row_counts() == loaded


# --- Cities and bairros -------------------------------------------------------------------------


def test_at_least_four_active_cities_in_three_time_zones(demo_data):
    active = City.objects.filter(active=True)
    assert active.count() >= 4
    now = timezone.now()
    offsets = {now.astimezone(city.tz).utcoffset() for city in active}
    assert {dt.timedelta(hours=h) for h in (-2, -3, -4)} <= offsets


def test_bairros_are_polygons_that_do_not_overlap(demo_data):
    for city in City.objects.filter(active=True):
        shapes = {h.slug: shape(h.boundary) for h in city.neighbourhoods.all()}
        assert len(shapes) >= 2, city.slug
        for polygon in shapes.values():
            assert polygon.geom_type == "Polygon" and polygon.is_valid
            # lon/lat order: the bairro lies near its city's centre (within ~0.2 degree).
            assert abs(polygon.centroid.y - city.lat) < 0.2
            assert abs(polygon.centroid.x - city.lng) < 0.2
        for (a, pa), (b, pb) in itertools.combinations(shapes.items(), 2):
            assert not pa.intersects(pb), (city.slug, a, b)


# --- Bars ---------------------------------------------------------------------------------------


def test_bars_lie_inside_their_bairro(demo_data):
    venues = list(Venue.objects.select_related("neighbourhood"))
    assert len(venues) >= 80
    for venue in venues:
        assert venue.neighbourhood is not None, venue.slug
        assert venue.neighbourhood.city_id == venue.city_id
        assert point_in_geometry(venue.lat, venue.lng, venue.neighbourhood.boundary), venue.slug


def test_bars_have_plausible_details(demo_data):
    venues = list(Venue.objects.all())
    with_instagram = [v for v in venues if v.instagram]
    assert len(with_instagram) >= 20
    assert all(re.match(INSTAGRAM_RE, v.instagram) for v in with_instagram)
    assert all(v.opening_hours and v.address for v in venues)
    assert all(set(v.attributes) <= set(VENUE_ATTRIBUTES) for v in venues)
    assert set(itertools.chain.from_iterable(v.attributes for v in venues)) == set(VENUE_ATTRIBUTES)
    assert len({v.kind for v in venues}) >= 6
    assert any(not v.on_site for v in venues)
    closed = [v for v in venues if v.status == VenueStatus.CLOSED]
    assert 1 <= len(closed) <= 5


# --- Prices -------------------------------------------------------------------------------------


def test_prices_cover_every_kind_packaging_and_format(deals):
    assert len(deals) >= 400
    assert {d.kind for d in deals} == set(DealKind.values)
    assert {d.packaging for d in deals} == set(Packaging.values)
    assert {d.format.type for d in deals} == set(FormatType.values)
    assert {d.format.code for d in deals} == set(Format.objects.values_list("code", flat=True))
    assert all(d.units > 1 for d in deals if d.packaging in (Packaging.BALDE, Packaging.DOBRO))
    assert all(d.format.type == FormatType.TORRE for d in deals if d.packaging == "torre")
    assert any(d.beer_id is None for d in deals)  # "chopp da casa"
    assert all(d.brand_id == d.beer.brand_id for d in deals if d.beer_id)


def test_every_city_with_bars_has_prices(deals):
    per_city = Counter(d.city.slug for d in deals)
    assert set(per_city) == set(Venue.objects.values_list("city__slug", flat=True))
    assert all(n >= 20 for n in per_city.values())


def test_prices_keep_the_service_invariants(deals):
    for deal in deals:
        assert deal.city_id == deal.venue.city_id
        assert deal.volume_ml == deal.format.volume_ml


def test_every_price_has_import_checks_ending_at_its_last_check(deals):
    checks: dict[int, list[PriceCheck]] = {}
    for check in PriceCheck.objects.order_by("checked_at", "id"):
        checks.setdefault(check.deal_id, []).append(check)
    for deal in deals:
        history = checks[deal.id]
        assert {c.source for c in history} == {"import"}
        assert history[-1].checked_at == deal.verified_at
        assert history[-1].price_cents == deal.price_cents
        assert history[0].checked_at >= deal.created_at
    assert any(len(h) > 1 for h in checks.values())


def test_schedules_are_well_formed(deals):
    for deal in deals:
        for schedule in deal.schedules:
            assert set(schedule) == {"days", "start", "end"}
            assert 1 <= len(schedule["days"]) <= 7
            assert all(0 <= day <= 6 for day in schedule["days"])
            assert HHMM_RE.match(schedule["start"])
            assert HHMM_RE.match(schedule["end"]) or schedule["end"] == "24:00"
    happy_hours = [d for d in deals if d.kind == DealKind.HAPPY_HOUR]
    assert happy_hours and all(d.schedules for d in happy_hours)
    windows = [s for d in deals for s in d.schedules]
    assert {"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"} in windows
    assert any(s["end"] != "24:00" and s["end"] < s["start"] for s in windows)  # past midnight
    assert any(s["end"] == "24:00" for s in windows)
    assert any(len(d.schedules) > 1 for d in deals)


def test_prices_are_fresh_out_of_date_and_too_old(deals):
    ages = [local_age_days(d) for d in deals]
    assert max(ages) <= 250
    assert sum(age > 90 for age in ages) >= 20
    assert sum(age > 180 for age in ages) >= 10
    assert sum(age <= 90 for age in ages) > 0.7 * len(ages)
    assert any(age == 0 for age in ages)


def test_promos_are_running_expired_and_future(deals):
    promos = [d for d in deals if d.kind == DealKind.PROMO]
    assert all(d.valid_from or d.valid_until for d in promos)
    today = {d.id: local_today(d.city) for d in promos}
    assert any(d.valid_until and d.valid_until < today[d.id] for d in promos)
    assert any(d.valid_from and d.valid_from > today[d.id] for d in promos)
    assert any(
        d.valid_from <= today[d.id] and (d.valid_until is None or today[d.id] <= d.valid_until)
        for d in promos
    )
    assert any(d.valid_until is None for d in promos)


def test_open_bars_have_minutes_and_no_price_per_litre(deals):
    open_bars = [d for d in deals if d.kind == DealKind.OPEN_BAR]
    assert len(open_bars) >= 3
    assert all(d.open_bar_minutes and d.price_per_litre is None for d in open_bars)
    assert all(d.open_bar_minutes is None for d in deals if d.kind != DealKind.OPEN_BAR)
    assert all(d.price_per_litre > 0 for d in deals if d.kind != DealKind.OPEN_BAR)


def test_standing_of_prices(deals):
    by_status = Counter(d.status for d in deals)
    assert by_status[DealStatus.PUBLISHED] > 0.8 * len(deals)
    assert by_status[DealStatus.DISPUTED] >= 3
    assert by_status[DealStatus.SUSPENDED] >= 1
    assert all(d.open_disputes == 2 for d in deals if d.status == DealStatus.DISPUTED)
    assert all(d.open_disputes == 3 for d in deals if d.status == DealStatus.SUSPENDED)
    assert all(d.open_disputes == 0 for d in deals if d.status == DealStatus.PUBLISHED)
    # each open dispute waits in the moderators' queue, from an address of its own
    pending = Counter(
        DealDispute.objects.filter(state=ReviewState.PENDING).values_list("deal_id", flat=True)
    )
    assert pending == Counter({d.pk: d.open_disputes for d in deals if d.open_disputes})
    assert DealDispute.objects.values("deal_id", "address_hash").distinct().count() == sum(
        pending.values()
    )
    assert {d.confirmations for d in deals} == set(range(7))
    assert any(d.venue.status == VenueStatus.CLOSED for d in deals)


def test_extras_are_present_and_in_bounds(deals):
    assert any(d.service_charge_pct == 10 for d in deals)
    assert any(d.couvert_cents for d in deals)
    assert any(d.conditions for d in deals)
    assert all(d.service_charge_pct in (None, 10) for d in deals)
    assert all(100 <= d.price_cents <= 100_000 for d in deals)


def test_realistic_prices_per_litre(deals):
    """Mainstream 600 ml bottles at botecos in the big cities cost R$ 12–45 a litre."""
    bottles = [
        d.price_per_litre / 100
        for d in deals
        if d.format.code == "garrafa_600"
        and d.kind == DealKind.REGULAR
        and d.beer_id
        and d.beer.slug in ("brahma-chopp", "skol-pilsen", "antarctica-pilsen", "itaipava-pilsen")
        and d.city.slug != "fernando-de-noronha"
    ]
    assert bottles
    assert all(12 <= ppl <= 45 for ppl in bottles), sorted(bottles)
