"""The monthly price index of a city (datasets.md, `{city}/price-index.json`).

A month is the city-local calendar month. Its observations are, for each `regular` price of
the published set (published or disputed, at an open bar: the prices of `deals.json`) but
those of a depósito where people cannot drink (not a bar, left out of the rankings too), the
last check of that price inside the month, as a price per litre
(`check.price_cents * 1000 / (units * volume_ml)`, cents per litre). Cells: the whole city
(key null), each format type, each bairro (bars without one are left out of that scope) and
each brand (the beer's brand, else the price's own; prices without one are left out of that
scope). Quartiles interpolate linearly between order statistics (numpy's default,
`statistics.quantiles(method="inclusive")`); every figure is computed exactly (fractions) and
rounded half-up to whole cents once, at the end. A month closed once it ended
(beers.services.price_index_close_months) or brought by an import is served as it was kept.
"""

import bisect
import datetime as dt
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from fractions import Fraction

from django.db import connection
from django.db.models import F, Max, QuerySet, Window
from django.db.models.functions import ExtractMonth, ExtractYear, RowNumber
from django.utils import timezone

from beers.dbcopy import copy_out
from beers.models import (
    Beer,
    Brand,
    City,
    DealKind,
    Format,
    Neighbourhood,
    PriceCheck,
    PriceIndexHistory,
)

from .published import NOT_A_BAR, price_brand, published_deals

SCOPES = ("city", "format", "neighbourhood", "brand")
# years 0001 to 9998: a month and the one after it must both be dates
MONTH_RE = re.compile(r"^(?!0000|9999)([0-9]{4})-(0[1-9]|1[0-2])$")
_HALF = Fraction(1, 2)


def month_bounds(month: str, tz) -> tuple[dt.datetime, dt.datetime]:
    """The city-local start of `month` ("YYYY-MM") and of the month after, as aware datetimes."""
    match = MONTH_RE.fullmatch(month or "")
    if not match:
        raise ValueError(f"month must be YYYY-MM, got {month!r}")
    year, mon = int(match.group(1)), int(match.group(2))
    start = dt.datetime(year, mon, 1, tzinfo=tz)
    end = dt.datetime(year + mon // 12, mon % 12 + 1, 1, tzinfo=tz)
    return start, end


def month_ends_after(tz, now: dt.datetime) -> dt.datetime:
    """The end, in the zone `tz`, of the month that holds `now`: when that month turns final."""
    local = now.astimezone(tz)
    return month_bounds(f"{local.year:04d}-{local.month:02d}", tz)[1]


def last_ended_month(tz, now: dt.datetime) -> str:
    """The month ("YYYY-MM") before the one that holds `now` in the zone `tz`: the last one
    that has ended there."""
    month_start = now.astimezone(tz).replace(day=1)
    return f"{(month_start - dt.timedelta(days=1)):%Y-%m}"


def month_is_final(month: str, tz, now: dt.datetime) -> bool:
    """Whether `month` has ended in the zone `tz` at the instant `now`."""
    return now >= month_bounds(month, tz)[1]


def round_half_up(value: Fraction) -> int:
    return math.floor(value + _HALF)


def _exact_sorted(values: Iterable[tuple[tuple[int, int], int]]) -> list:
    """((numerator, denominator), count) items in exact ascending order of their quotients.

    Correctly rounded division is monotonic, so sorting by the float quotient is exact except
    among equal floats; only those runs are re-sorted as fractions.
    """
    data = sorted(values, key=lambda v: v[0][0] / v[0][1])
    i, n = 0, len(data)
    while i < n:
        j = i + 1
        quotient = data[i][0][0] / data[i][0][1]
        while j < n and data[j][0][0] / data[j][0][1] == quotient:
            j += 1
        (first_num, first_den), _ = data[i]
        if j - i > 1 and any(
            num * first_den != first_num * den for (num, den), _ in data[i + 1 : j]
        ):
            data[i:j] = sorted(data[i:j], key=lambda v: Fraction(*v[0]))
        i = j
    return data


def quartiles(data) -> tuple[Fraction, Fraction, Fraction]:
    """Exactly `statistics.quantiles(data, n=4, method="inclusive")` (numpy's "linear") on
    sorted `data`, and the middle one equals `statistics.median`; one sort instead of three."""
    if len(data) == 1:
        return data[0], data[0], data[0]
    m = len(data) - 1
    out = []
    for i in (1, 2, 3):
        j, delta = divmod(i * m, 4)
        upper = data[j + 1] if delta else data[j]
        out.append((data[j] * (4 - delta) + upper * delta) / 4)
    return out[0], out[1], out[2]


class _Counted:
    """Sorted ((numerator, denominator), count) items seen as the sorted list of every
    observation, as Fractions: item i is read through the running counts (bisect)."""

    def __init__(self, items: list[tuple[tuple[int, int], int]]):
        self.values = [pair for pair, _ in items]
        self.ends = list(itertools.accumulate(count for _, count in items))

    def __len__(self) -> int:
        return self.ends[-1] if self.ends else 0

    def __getitem__(self, i: int) -> Fraction:
        if not 0 <= i < len(self):
            raise IndexError(i)
        return Fraction(*self.values[bisect.bisect_right(self.ends, i)])


def cell_figures(values: Iterable[tuple[tuple[int, int], int]]) -> dict:
    """n, min and quartiles (cents per litre, rounded half-up) of one cell's observations,
    given as ((price_cents * 1000, units * volume_ml), how many observations) items."""
    data = _Counted(_exact_sorted(values))
    p25, median, p75 = quartiles(data)
    return {
        "n": len(data),
        "min_cents": round_half_up(data[0]),
        "p25_cents": round_half_up(p25),
        "median_cents": round_half_up(median),
        "p75_cents": round_half_up(p75),
    }


def index_deals(city: City) -> QuerySet:
    """The prices the index rests on: the city's `regular` published prices, at bars (not a
    depósito where people cannot drink, as in the rankings)."""
    return published_deals(city=city).filter(kind=DealKind.REGULAR).exclude(NOT_A_BAR)


def observation_checks(city: City) -> QuerySet[PriceCheck]:
    """Every check of the prices the index rests on: what it is computed from."""
    return PriceCheck.objects.filter(deal__in=index_deals(city))


def closed_through(city: City) -> str:
    """The city's last closed month ("YYYY-MM", "" for none), read now: the City objects the
    live reads share are up to a second old, and an answer computed in that second would be
    cached as not final until the next local midnight (one query)."""
    found = City.objects.filter(pk=city.pk).values_list("price_index_closed_through", flat=True)
    return found.first() or ""


def latest_month(city: City, *, closed: str | None = None) -> str | None:
    """The newest month ("YYYY-MM", city-local) with cells: of the newest observation, unless
    it falls in a closed month (up to `closed`, else read), or the newest kept month; None
    without either (two queries)."""
    newest = observation_checks(city).aggregate(newest=Max("checked_at"))["newest"]
    kept = PriceIndexHistory.objects.filter(city=city).aggregate(m=Max("month"))["m"]
    if newest is None:
        return kept
    local = newest.astimezone(city.tz)
    observed = f"{local.year:04d}-{local.month:02d}"
    if observed <= (closed_through(city) if closed is None else closed):
        return kept  # a closed month is served as kept
    return max(observed, kept or "")


def _cell_counts(city: City, start: dt.datetime | None, end: dt.datetime | None):
    """(year, month, scope, key, numerator, denominator, count) rows ordered by month: how many
    observations of each cell have the value numerator / denominator (price_cents * 1000,
    units * volume_ml), of the checks from `start` and before `end` where given. Prices
    repeat, so these rows are far fewer than the observations."""
    if connection.vendor == "postgresql":
        return _cell_counts_postgresql(city, start, end)
    return _cell_counts_portable(city, start, end)


def _observations_portable(city: City, start: dt.datetime | None, end: dt.datetime | None):
    """(year, month, price_cents, units, volume_ml, format type, bairro, brand) for the last
    check of each price inside each city-local month, ordered by month."""
    tz = city.tz
    checks = observation_checks(city)
    if start is not None:
        checks = checks.filter(checked_at__gte=start)
    if end is not None:
        checks = checks.filter(checked_at__lt=end)
    year = ExtractYear("checked_at", tzinfo=tz)
    month = ExtractMonth("checked_at", tzinfo=tz)
    return (
        checks.annotate(
            brand_slug=price_brand("slug", via="deal__"),
            local_year=year,
            local_month=month,
            newest_first=Window(
                RowNumber(),
                partition_by=[F("deal_id"), year, month],
                order_by=[F("checked_at").desc(), F("id").desc()],
            ),
        )
        .filter(newest_first=1)
        .order_by("local_year", "local_month")
        .values_list(
            "local_year",
            "local_month",
            "price_cents",
            "deal__units",
            "deal__volume_ml",
            "deal__format__type",
            "deal__venue__neighbourhood__slug",
            "brand_slug",
        )
        .iterator(chunk_size=5000)
    )


def _cell_counts_portable(city: City, start: dt.datetime | None, end: dt.datetime | None):
    """The counts of the observations above, one month at a time in memory."""
    for (year, mon), observations in itertools.groupby(
        _observations_portable(city, start, end), key=lambda row: row[:2]
    ):
        counts: Counter = Counter()
        for _, _, price_cents, units, volume_ml, fmt_type, hood, brand in observations:
            value = (price_cents * 1000, units * volume_ml)
            for scope, key in zip(SCOPES, (None, fmt_type, hood, brand), strict=True):
                if scope == "city" or key is not None:
                    counts[(scope, key, value)] += 1
        for (scope, key, (num, den)), n in counts.items():
            yield year, mon, scope, key, num, den, n


def _local_months(tz, start: dt.datetime | None, end: dt.datetime | None) -> tuple[list, list]:
    """Thresholds for width_bucket: the instants the city-local months begin (their
    `month_bounds`), from 2000 to a year from now, or only the asked month's bounds; and each
    month's local start, as date_trunc writes it (a naive timestamp)."""
    if end is not None:
        return [start, end], [start.replace(tzinfo=None)]
    last = timezone.now().year + 1
    months = [f"{year:04d}-{mon:02d}" for year in range(2000, last + 1) for mon in range(1, 13)]
    starts = [month_bounds(month, tz)[0] for month in months]
    return starts, [instant.replace(tzinfo=None) for instant in starts[:-1]]


def _cell_counts_postgresql(city: City, start: dt.datetime | None, end: dt.datetime | None):
    """The same rows, counted by PostgreSQL: DISTINCT ON picks each price's last check of a
    month on narrow rows; one GROUP BY counts the (serving, price, format, bairro, beer,
    brand) combinations, whose names are joined only then (a few thousand rows, not 1M), and
    a second GROUP BY spreads them over the four scopes. Only the counts reach Python (on 1M
    checks, 6000 rows instead of 1M: 1.8 s in all, against 7 s when Python received each
    observation). A check's local month comes from a binary search of the months' first
    instants (width_bucket), not from a time zone conversion per check (0.57 s against
    0.09 s per 1M checks, one core); checks outside those months are converted."""
    deals = (
        index_deals(city)
        .order_by()
        .values(
            x_id=F("id"),
            x_units=F("units"),
            x_volume=F("volume_ml"),
            x_format=F("format_id"),
            x_hood=F("venue__neighbourhood_id"),
            x_beer=F("beer_id"),
            x_brand=F("brand_id"),
        )
    )
    deals_sql, deals_params = deals.query.sql_with_params()
    window, window_params = "", []
    if start is not None:
        window, window_params = " AND pc.checked_at >= %s", [start]
    if end is not None:
        window, window_params = f"{window} AND pc.checked_at < %s", [*window_params, end]
    thresholds, local_starts = _local_months(city.tz, start, end)
    month = (
        "COALESCE((%s::timestamp[])[width_bucket(pc.checked_at, %s::timestamptz[])], "
        "date_trunc('month', pc.checked_at AT TIME ZONE %s))"
    )
    sql = f"""
        SELECT extract(year FROM g.m)::int, extract(month FROM g.m)::int, s.scope, s.key,
               g.num, g.den, sum(g.n)::bigint
        FROM (
            SELECT o.m, o.num, o.den, f.type AS x_type, h.slug AS x_hood,
                   COALESCE(bb.slug, br.slug) AS x_brand, o.n
            FROM (
                SELECT o.m, o.num, o.den, o.x_format, o.x_hood, o.x_beer, o.x_brand,
                       count(*) AS n
                FROM (
                    SELECT DISTINCT ON (pc.deal_id, m) {month} AS m,
                           pc.price_cents::bigint * 1000 AS num, d.x_units * d.x_volume AS den,
                           d.x_format, d.x_hood, d.x_beer, d.x_brand
                    FROM {PriceCheck._meta.db_table} pc
                    JOIN ({deals_sql}) d ON d.x_id = pc.deal_id
                    WHERE TRUE{window}
                    ORDER BY pc.deal_id, m, pc.checked_at DESC, pc.id DESC
                ) o
                GROUP BY 1, 2, 3, 4, 5, 6, 7
            ) o
            JOIN {Format._meta.db_table} f ON f.id = o.x_format
            LEFT JOIN {Neighbourhood._meta.db_table} h ON h.id = o.x_hood
            LEFT JOIN {Beer._meta.db_table} b ON b.id = o.x_beer
            LEFT JOIN {Brand._meta.db_table} bb ON bb.id = b.brand_id
            LEFT JOIN {Brand._meta.db_table} br ON br.id = o.x_brand
        ) g
        CROSS JOIN LATERAL (
            VALUES ('city', NULL), ('format', g.x_type), ('neighbourhood', g.x_hood),
                   ('brand', g.x_brand)
        ) AS s(scope, key)
        WHERE s.scope = 'city' OR s.key IS NOT NULL
        GROUP BY g.m, s.scope, s.key, g.num, g.den
        ORDER BY g.m
    """
    params = [local_starts, thresholds, city.timezone, *deals_params, *window_params]
    # COPY streams like a server-side cursor, and unlike one may use a parallel plan
    # (1M checks: 1.8 s against 2.3 s).
    with connection.cursor() as cursor:
        with copy_out(cursor, f"COPY ({sql}) TO STDOUT", params) as copy:
            copy.set_types(["int4", "int4", "text", "text", "int8", "int8", "int8"])
            yield from copy.rows()


def _months(rows: Iterable[tuple]) -> Iterable[tuple[str, dict]]:
    """("YYYY-MM", {(scope, key): [((numerator, denominator), count), ...]}) month by month."""
    for (year, mon), month_rows in itertools.groupby(rows, key=lambda row: row[:2]):
        cells = defaultdict(list)
        for _, _, scope, key, num, den, count in month_rows:
            cells[(scope, key)].append(((num, den), count))
        yield f"{year:04d}-{mon:02d}", cells


def price_index(*, city: City, month: str | None = None, closed: str | None = None) -> list[dict]:
    """Cells `{month, final, scope, key, n, min_cents, p25_cents, median_cents, p75_cents}` for
    every month with observations (or only `month`, "YYYY-MM"), ordered by month, then scope
    (city, format, neighbourhood, brand), then key. The months a city closed (up to
    `City.price_index_closed_through`) and those an import brought come as they were kept
    (PriceIndexHistory), the others from the checks; `final` is true for a closed month
    (a month closes with the first export after it ended in the city, within a beat:
    beers.services.price_index_close_months), so its figures never change after. Three
    queries (the last closed month unless given as `closed`, the kept months, then the counts;
    none for a kept month). Raises ValueError on a bad month.
    """
    through = closed_through(city) if closed is None else closed
    if month is not None:
        start, end = month_bounds(month, city.tz)
    elif through:  # the closed months come as kept: only the checks after them are read
        start, end = month_bounds(through, city.tz)[1], None
    else:
        start, end = None, None
    months = _closed_months(city, month)
    if month is not None and month <= through:
        return _cells(months, through)
    for mon, cells in _months(_cell_counts(city, start, end)):
        if mon not in months and mon > through:
            months[mon] = {key: cell_figures(values) for key, values in cells.items()}
    return _cells(months, through)


def _cells(months: dict[str, dict], closed_through: str) -> list[dict]:
    """The cells of {"YYYY-MM": {(scope, key): figures}} in the index's order; `final` for
    the months closed."""
    out = []
    for mon in sorted(months):
        final = mon <= closed_through
        cells = months[mon]
        for scope, key in sorted(cells, key=lambda k: (SCOPES.index(k[0]), k[1] or "")):
            out.append(
                {"month": mon, "final": final, "scope": scope, "key": key, **cells[(scope, key)]}
            )
    return out


FIGURES = ("n", "min_cents", "p25_cents", "median_cents", "p75_cents")


def _closed_months(city: City, month: str | None) -> dict[str, dict]:
    """{"YYYY-MM": {(scope, key): figures}} of the months kept as they closed or as an import
    brought them (PriceIndexHistory), or only `month`'s."""
    rows = PriceIndexHistory.objects.filter(city=city)
    if month is not None:
        rows = rows.filter(month=month)
    months: dict[str, dict] = defaultdict(dict)
    for mon, scope, key, *figures in rows.values_list("month", "scope", "key", *FIGURES):
        months[mon][(scope, key or None)] = dict(zip(FIGURES, figures, strict=True))
    return months
