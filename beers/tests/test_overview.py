"""The overview selectors (bairros covered, one month's price index, catalogue, the converter):
their figures against the rankings and the datasets' index, and their query counts."""

from decimal import Decimal

import pytest

from beers.errors import ApplicationError
from beers.models import City
from beers.selectors import names, overview, price_index, queries, ranking
from beers.selectors.queries import CityQuery, PricePerLitreQuery, SearchQuery

pytestmark = pytest.mark.django_db


def test_neighbourhoods_covered_agree_with_search(demo_data, django_assert_num_queries):
    names.snapshot()  # warm, as in a running server
    with django_assert_num_queries(2):  # the city, the aggregate
        hoods = overview.neighbourhoods_covered(CityQuery("rio-de-janeiro")).data["neighbourhoods"]
    assert hoods
    for hood in hoods:
        deals = []
        for kind in (None, "open_bar"):
            query = SearchQuery(
                city="rio-de-janeiro", neighbourhood=hood["slug"], kind=kind, limit=50
            )
            deals += ranking.search(query).data["deals"]
        priced = [d["price_per_litre_brl"] for d in deals if "price_per_litre_brl" in d]
        assert hood["deals"] == len(deals)
        assert hood["venues"] == len({d["url"] for d in deals})
        assert hood["cheapest_price_per_litre_brl"] == (min(priced) if priced else None)


def test_price_index_month_is_the_datasets_cells_of_the_latest_month(
    demo_data, django_assert_num_queries
):
    city = City.objects.get(slug="recife")
    overview.price_index_month(CityQuery("recife"))  # the first reader closes ended months
    # (the city is known from then on) its last closed month; the newest check and kept
    # month; the kept cells, the observations
    with django_assert_num_queries(5):
        answer = overview.price_index_month(CityQuery("recife")).data
    month = price_index.latest_month(city)
    every_month = price_index.price_index(city=city)
    assert answer["month"] == month == max(c["month"] for c in every_month)
    assert answer["items"] == [c for c in every_month if c["month"] == month]
    assert answer["final"] is (month <= price_index.closed_through(city))  # closed
    # the envelope of {city}/price-index.json (datasets.md), the city as its slug
    assert answer["city"] == "recife" and answer["license"] == "ODbL-1.0"
    assert answer["attribution"] and answer["updated_at"].endswith("+00:00")


def test_a_cached_price_index_turns_final_when_its_month_closes(
    demo_data, django_capture_on_commit_callbacks, monkeypatch
):
    """`final` is true once the month is closed: a cached answer computed before (final
    false) is computed again when a closing (an export's) ends, not kept until the next local
    midnight."""
    import datetime as dt

    from django.utils import timezone

    from beers.answers import answer_cached, answers_changed
    from beers.services import price_index_close_months

    with django_capture_on_commit_callbacks(execute=True):
        answers_changed(city="recife")  # nothing cached by an earlier run answers here
    city = City.objects.get(slug="recife")
    query = CityQuery("recife", month=price_index.latest_month(city))

    def ask():
        return answer_cached(("price-index", query), lambda: overview.price_index_month(query))

    month_end = price_index.month_bounds(query.month, city.tz)[1]
    monkeypatch.setattr(timezone, "now", lambda: month_end - dt.timedelta(minutes=1))
    before = ask().body
    assert b'"final":false' in before
    monkeypatch.setattr(timezone, "now", lambda: month_end + dt.timedelta(minutes=1))
    with django_capture_on_commit_callbacks(execute=True):
        price_index_close_months(city=city)
    after = ask().body
    assert b'"final":true' in after and after != before


def test_catalog_overview_counts_and_slugs(demo_data, django_assert_num_queries):
    with django_assert_num_queries(5):
        answer = overview.catalog_overview().data
    assert [c["slug"] for c in answer["cities"]] == sorted(c["slug"] for c in answer["cities"])
    assert all(
        set(f) == {"code", "type", "volume_ml", "label_pt", "label_en"} for f in answer["formats"]
    )
    assert answer["brands"] and answer["as_of"]


@pytest.mark.parametrize(
    "price, volume, units, expected, litres",
    [
        ("12.90", 600, 1, 21.5, 0.6),
        ("29.90", 355, 5, 16.85, 1.775),  # 16.845… rounds half up
        ("0.01", 20000, 1, 0.0, 20.0),  # 0.05 cents per litre
        ("0.03", 2000, 1, 0.02, 2.0),  # 1.5 cents per litre: half up
        ("9.99", 1000, 1, 9.99, 1.0),
    ],
)
def test_price_per_litre_rounds_half_up_to_cents(price, volume, units, expected, litres):
    answer = overview.price_per_litre(PricePerLitreQuery(Decimal(price), volume, units))
    assert answer == {"price_per_litre_brl": expected, "litres": litres}


@pytest.mark.parametrize(
    "params, path",
    [
        ({"volume_ml": 600}, "price_brl"),
        ({"price_brl": 5}, "volume_ml"),
        ({"price_brl": 5, "volume_ml": 600, "units": 0}, "units"),
        ({"price_brl": True, "volume_ml": 600}, "price_brl"),
    ],
)
def test_price_per_litre_arguments_are_validated(params, path):
    with pytest.raises(ApplicationError) as caught:
        queries.parse_price_per_litre(params)
    assert [i.path for i in caught.value.issues] == [path]
