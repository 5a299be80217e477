"""Export of many prices: `datasets_export` (streamed .values().iterator() + orjson + csv) vs a
bare PostgreSQL COPY of the same rows, with wall time and peak memory.

    DATABASE_URL=postgres://... DEBUG=1 python -m bench.export_bench --rows 200000

Seeds a throw-away active city `bench-city` with SQL (generate_series), runs both, prints a
small table, then deletes the city again (unless --keep). PostgreSQL only.
"""

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import django  # noqa: E402

django.setup()

from django.db import connection, transaction  # noqa: E402

from beers.models import City, Deal, PriceCheck, Venue  # noqa: E402
from datasets.importer import datasets_import  # noqa: E402
from datasets.services import datasets_export  # noqa: E402

SLUG = "bench-city"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def seed(rows: int) -> City:
    drop()
    city = City.objects.create(
        slug=SLUG,
        name="Bench City",
        state="SP",
        timezone="America/Sao_Paulo",
        lat=-23.5,
        lng=-46.6,
        active=True,
    )
    venues = max(1, rows // 10)
    with connection.cursor() as c:
        c.execute("SET LOCAL statement_timeout = 0") if connection.in_atomic_block else None
        c.execute("""
            INSERT INTO beers_format (code, type, volume_ml, label_pt, label_en)
            VALUES ('garrafa_600', 'garrafa', 600, 'garrafa 600 ml', '600 ml bottle')
            ON CONFLICT (code) DO NOTHING""")
        c.execute("SELECT id FROM beers_format WHERE code = 'garrafa_600'")
        fmt = c.fetchone()[0]
        c.execute(
            """
            INSERT INTO beers_venue (city_id, slug, name, kind, on_site, address, lat, lng,
                                     instagram, opening_hours, attributes, status, created_at)
            SELECT %s, 'bar-' || g, 'Bar ' || g, 'bar', true, 'Rua ' || g || ', 1',
                   -23.5 + g * 1e-6, -46.6, '', '', '[]'::jsonb, 'open', now()
            FROM generate_series(1, %s) g""",
            [city.id, venues],
        )
        c.execute("SELECT min(id) FROM beers_venue WHERE city_id = %s", [city.id])
        first_venue = c.fetchone()[0]  # the venues above got consecutive ids
        c.execute(
            """
            INSERT INTO beers_deal (city_id, venue_id, format_id, volume_ml, units, packaging,
                                    kind, price_cents, conditions, schedules, verified_at,
                                    created_at, confirmations, open_disputes, status)
            SELECT %s, %s + (g %% %s), %s, 600, 1, 'single', 'regular', 500 + (g %% 3000), '',
                   '[]'::jsonb, now() - (g %% 200) * interval '1 day', now(), 0, 0, 'published'
            FROM generate_series(0, %s - 1) g""",
            [city.id, first_venue, venues, fmt, rows],
        )
        c.execute(
            """
            INSERT INTO beers_pricecheck (deal_id, price_cents, checked_at, source)
            SELECT id, price_cents, verified_at, 'submission' FROM beers_deal
            WHERE city_id = %s""",
            [city.id],
        )
        c.execute("ANALYZE beers_deal; ANALYZE beers_venue; ANALYZE beers_pricecheck")
    return city


def drop() -> None:
    city = City.objects.filter(slug=SLUG).first()
    if city:
        PriceCheck.objects.filter(deal__city=city).delete()
        Deal.objects.filter(city=city).delete()
        Venue.objects.filter(city=city).delete()
        city.delete()


def copy_deals(city: City, path: Path) -> None:
    sql = (
        "COPY (SELECT d.id, d.venue_id, d.format_id, d.units, d.packaging, d.kind, "
        "d.price_cents, d.verified_at, d.created_at, d.status, v.name "
        "FROM beers_deal d JOIN beers_venue v ON v.id = d.venue_id "
        f"WHERE d.city_id = {int(city.id)} ORDER BY d.id) TO STDOUT WITH CSV HEADER"
    )
    with transaction.atomic(), connection.cursor() as c, open(path, "wb") as fh:
        with c.cursor.copy(sql) as copy:
            for chunk in copy:
                fh.write(chunk)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        print("PostgreSQL only (set DATABASE_URL)", file=sys.stderr)
        return 2
    t = time.perf_counter()
    with transaction.atomic():
        city = seed(args.rows)
    print(f"seeded {args.rows} prices in {time.perf_counter() - t:.1f}s")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            base = peak_rss_mb()
            t = time.perf_counter()
            copy_deals(city, Path(tmp) / "copy.csv")
            copy_s = time.perf_counter() - t
            copy_mb = (Path(tmp) / "copy.csv").stat().st_size / 1e6
            t = time.perf_counter()
            result = datasets_export(directory=Path(tmp) / "tree", progress=False)
            export_s = time.perf_counter() - t
            peak = peak_rss_mb()
            t = time.perf_counter()
            imported = datasets_import(Path(tmp) / "tree", progress=False)
            import_s = time.perf_counter() - t
            import_peak = peak_rss_mb()
            sizes = {
                name: (Path(tmp) / "tree" / SLUG / name).stat().st_size / 1e6
                for name in ("deals.json", "deals.csv", "price-index.json")
            }
        print(f"COPY of deals (CSV, 11 columns): {copy_s:.2f}s, {copy_mb:.1f} MB")
        print(
            f"datasets_export, whole tree:     {export_s:.2f}s "
            f"({result.counts[SLUG]['deals']} prices; deals.json {sizes['deals.json']:.1f} MB,"
            f" deals.csv {sizes['deals.csv']:.1f} MB)"
        )
        print(
            f"peak RSS: {base:.0f} MB before, {peak:.0f} MB after the export "
            f"(+{peak - base:.0f} MB)"
        )
        print(
            f"import_datasets of that tree (upsert, {imported.deals} prices): "
            f"{import_s:.2f}s, peak RSS {import_peak:.0f} MB"
        )
    finally:
        if not args.keep:
            with transaction.atomic():
                drop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
