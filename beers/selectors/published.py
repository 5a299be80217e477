"""The published set: the prices the open datasets carry, and the base of the rankings and the
price index."""

import statistics
from collections import defaultdict
from collections.abc import Iterable

from django.db.models import BigIntegerField, Func, Q, QuerySet
from django.db.models.functions import Coalesce

from beers.models import (
    RANKED_STATUSES,
    City,
    Deal,
    DealKind,
    DealStatus,
    VenueKind,
    VenueStatus,
)

# A depósito where people cannot drink is not a bar (interface.md: "a deposito only counts when
# true"): its prices stay out of the rankings and the price index; the datasets list them.
NOT_A_BAR = Q(venue__kind=VenueKind.DEPOSITO, venue__on_site=False)


def published_deals(*, city: City | None = None) -> QuerySet[Deal]:
    """Every published or disputed price of an open bar, whatever its age or validity dates.

    This is the set of `{city}/deals.json`; live rankings narrow it further (age, dates).
    """
    qs = Deal.objects.filter(status__in=RANKED_STATUSES, venue__status=VenueStatus.OPEN)
    if city is not None:
        qs = qs.filter(city=city)
    return qs


def median_per_litre_by_format(*, pairs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """The median price per litre (cents) of the published set of each (city id, format id)
    pair: what a moderator compares a new price with. Open bars have no price per litre and
    are left out. One query for all the pairs."""
    wanted = set(pairs)
    if not wanted:
        return {}
    by_city: dict[int, set[int]] = defaultdict(set)
    for city_id, format_id in wanted:
        by_city[city_id].add(format_id)
    match = Q()
    for city_id, format_ids in by_city.items():
        match |= Q(city_id=city_id, format_id__in=format_ids)
    values: dict[tuple[int, int], list[float]] = defaultdict(list)
    rows = (
        published_deals()
        .filter(match)
        .exclude(kind=DealKind.OPEN_BAR)
        .values_list("city_id", "format_id", "price_per_litre")
    )
    for city_id, format_id, per_litre in rows.iterator(chunk_size=5000):
        values[(city_id, format_id)].append(per_litre)
    return {key: statistics.median(found) for key, found in values.items()}


def page_notes(deal_ids: list[int]) -> dict[int, tuple[str, bool]]:
    """What a page says of these prices beyond their PublicDeal, by price id: the nickname
    each credits (its sender's, "" when none) and whether it is disputed."""
    if not deal_ids:
        return {}
    return {
        pk: (credit, status == DealStatus.DISPUTED)
        for pk, credit, status in Deal.objects.filter(pk__in=deal_ids).values_list(
            "pk", "credit", "status"
        )
    }


def price_brand(field: str, *, via: str = "") -> Coalesce:
    """The brand of a price, as datasets.md defines it: its beer's brand, else its own. `field`
    is the brand's column ("slug", "name"); `via` the path to the price ("deal__" from a
    check)."""
    return Coalesce(f"{via}beer__brand__{field}", f"{via}brand__{field}")


class UnixSeconds(Func):
    """Whole seconds since the epoch of a datetime column, computed by the database (parsing
    aware datetimes in Python is the slow part of a large export)."""

    output_field = BigIntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(
            compiler,
            connection,
            template="FLOOR(EXTRACT(EPOCH FROM %(expressions)s))::bigint",
            **extra,
        )

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(
            compiler,
            connection,
            # the stored text without its fraction: strftime rounds to the millisecond, and
            # .9997 s would become the next second (and, at 23:59:59, the next day)
            template="CAST(strftime('%%%%s', substr(%(expressions)s, 1, 19)) AS INTEGER)",
            **extra,
        )
