"""The generated `Deal.price_per_litre` column, as the database computes and returns it.

It holds cents per litre, `price_cents * 1000 / (units * volume_ml)`, as a double. Both operands
are exact in a double, so one correctly rounded division gives exactly the float nearest to the
true fraction: the column must equal `float(Fraction(...))` bit for bit, on SQLite and PostgreSQL.
"""

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from beers.models import Deal

from .factories import DealFactory, FormatFactory, VenueFactory

pytestmark = pytest.mark.django_db

DB_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

prices = st.integers(min_value=1, max_value=1_000_000)
units = st.integers(min_value=1, max_value=50)
volumes = st.integers(min_value=1, max_value=20_000)
kinds = st.sampled_from(["regular", "happy_hour", "promo", "combo"])
deals = st.tuples(prices, units, volumes)


def exact(price_cents: int, units: int, volume_ml: int) -> Fraction:
    return Fraction(price_cents * 1000, units * volume_ml)


@pytest.fixture
def venue():
    return VenueFactory()


@pytest.fixture
def fmt():
    return FormatFactory()


def _stored(venue, fmt, price_cents, units, volume_ml, kind="regular") -> Deal:
    # The column reads the deal's own volume_ml; a format per volume would only slow this down.
    deal = DealFactory(
        venue=venue,
        format=fmt,
        volume_ml=volume_ml,
        units=units,
        price_cents=price_cents,
        kind=kind,
    )
    return Deal.objects.get(pk=deal.pk)


@DB_SETTINGS
@given(price_cents=prices, units=units, volume_ml=volumes, kind=kinds)
@example(price_cents=1290, units=1, volume_ml=600, kind="regular")  # 21.50 R$/L
@example(price_cents=3990, units=6, volume_ml=350, kind="regular")  # balde: 19.00 R$/L
@example(price_cents=1, units=50, volume_ml=20_000, kind="promo")  # smallest: 0.001 ¢/L
@example(price_cents=1_000_000, units=1, volume_ml=1, kind="combo")  # largest: 1e9 ¢/L
@example(price_cents=1000, units=3, volume_ml=1, kind="regular")  # repeating decimal
def test_price_per_litre_is_the_correctly_rounded_fraction(
    venue, fmt, price_cents, units, volume_ml, kind
):
    deal = _stored(venue, fmt, price_cents, units, volume_ml, kind)
    assert isinstance(deal.price_per_litre, float)
    assert deal.price_per_litre == float(exact(price_cents, units, volume_ml))


@DB_SETTINGS
@given(price_cents=prices, units=units, volume_ml=volumes)
def test_open_bar_has_no_price_per_litre(venue, fmt, price_cents, units, volume_ml):
    deal = _stored(venue, fmt, price_cents, units, volume_ml, kind="open_bar")
    assert deal.price_per_litre is None


@DB_SETTINGS
@given(before=deals, after=deals)
def test_price_per_litre_follows_updates(venue, fmt, before, after):
    deal = _stored(venue, fmt, *before)
    price_cents, units, volume_ml = after
    Deal.objects.filter(pk=deal.pk).update(
        price_cents=price_cents, units=units, volume_ml=volume_ml
    )
    deal.refresh_from_db()
    assert deal.price_per_litre == float(exact(price_cents, units, volume_ml))
    Deal.objects.filter(pk=deal.pk).update(kind="open_bar")
    deal.refresh_from_db()
    assert deal.price_per_litre is None


@DB_SETTINGS
@given(rows=st.lists(deals, min_size=2, max_size=12))
def test_database_order_agrees_with_exact_order(venue, fmt, rows):
    Deal.objects.filter(venue=venue).delete()  # examples share the test's transaction
    for row in rows:
        _stored(venue, fmt, *row)
    ranked = list(
        Deal.objects.filter(venue=venue)
        .order_by("price_per_litre", "id")
        .values_list("price_per_litre", "price_cents", "units", "volume_ml")
    )
    assert sorted(exact(*r[1:]) for r in ranked) == sorted(exact(*row) for row in rows)
    for (ppl_a, *a), (ppl_b, *b) in zip(ranked, ranked[1:], strict=False):
        # Rounding is monotonic: a dearer litre never ranks first. Two different fractions may
        # round to the same double (then the id decides), but never to an inverted pair.
        assert exact(*a) <= exact(*b) or ppl_a == ppl_b
        assert (ppl_a < ppl_b) <= (exact(*a) < exact(*b))


@DB_SETTINGS
@given(
    rows=st.lists(
        st.tuples(
            st.integers(100, 50_000),
            units,
            st.sampled_from([269, 300, 330, 350, 355, 473, 500, 600, 1000, 2500, 3000]),
        ),
        min_size=2,
        max_size=12,
    )
)
def test_menu_prices_rank_in_exact_order(venue, fmt, rows):
    """With real menu prices and format volumes, distinct fractions never tie as doubles."""
    Deal.objects.filter(venue=venue).delete()
    for row in rows:
        _stored(venue, fmt, *row)
    ranked = Deal.objects.filter(venue=venue).order_by("price_per_litre", "id")
    in_db_order = [exact(d.price_cents, d.units, d.volume_ml) for d in ranked]
    assert in_db_order == sorted(in_db_order)
    by_value = {}
    for d in ranked:
        by_value.setdefault(d.price_per_litre, set()).add(
            exact(d.price_cents, d.units, d.volume_ml)
        )
    assert all(len(fractions) == 1 for fractions in by_value.values())
