"""Builds the benchmark database: 100 cities, 100k bars, 1M prices, generated inside PostgreSQL.

Deterministic (setseed), idempotent (skips when the counts are already there).
"""

import psycopg

CITIES = 100
VENUES_PER_CITY = 1000
DEALS_PER_VENUE = 10

FORMATS = [
    ("lata_350", "lata", 350),
    ("lata_473", "lata", 473),
    ("long_neck_355", "long_neck", 355),
    ("garrafa_600", "garrafa", 600),
    ("litrao_1000", "litrao", 1000),
    ("chopp_300", "chopp", 300),
    ("chopp_500", "chopp", 500),
    ("torre_2500", "torre", 2500),
]
ZONES = [
    "America/Sao_Paulo",
    "America/Manaus",
    "America/Recife",
    "America/Noronha",
    "America/Cuiaba",
    "America/Belem",
]


def build(dsn: str) -> dict:
    with psycopg.connect(dsn, autocommit=True) as conn:
        deals = conn.execute("SELECT count(*) FROM beers_deal").fetchone()[0]
        if deals >= CITIES * VENUES_PER_CITY * DEALS_PER_VENUE:
            return _counts(conn)
        conn.execute(
            "TRUNCATE beers_pricecheck, beers_deal, beers_venue, beers_neighbourhood, "
            "beers_beer, beers_brand, beers_format, beers_city RESTART IDENTITY CASCADE"
        )
        conn.execute("SELECT setseed(0.42)")
        with conn.cursor() as cur:
            for code, type_, volume in FORMATS:
                cur.execute(
                    "INSERT INTO beers_format (code, type, volume_ml, label_pt, label_en) "
                    "VALUES (%s, %s, %s, %s, %s)",
                    (code, type_, volume, code, code),
                )
            for i in range(20):
                cur.execute(
                    "INSERT INTO beers_brand (slug, name) VALUES (%s, %s)",
                    (f"brand-{i}", f"Brand {i}"),
                )
                cur.execute(
                    "INSERT INTO beers_beer (slug, name, brand_id) VALUES (%s, %s, %s)",
                    (f"beer-{i}", f"Beer {i}", i + 1),
                )
            for c in range(CITIES):
                cur.execute(
                    "INSERT INTO beers_city (slug, name, state, timezone, lat, lng, active) "
                    "VALUES (%s, %s, 'SP', %s, %s, %s, true)",
                    (
                        f"city-{c}",
                        f"City {c}",
                        ZONES[c % len(ZONES)],
                        -30 + (c % 10) * 2.5,
                        -60 + (c // 10) * 2.5,
                    ),
                )
                for b in range(10):
                    cur.execute(
                        "INSERT INTO beers_neighbourhood (city_id, slug, name) VALUES (%s, %s, %s)",
                        (c + 1, f"bairro-{b}", f"Bairro {b}"),
                    )
        # Bars scattered within ~10 km of their city's centre.
        conn.execute(f"""
            INSERT INTO beers_venue (city_id, slug, name, kind, on_site, neighbourhood_id,
                address, lat, lng, instagram, opening_hours, attributes, status, created_at)
            SELECT c.id, 'bar-' || v, 'Bar ' || v, 'bar', true,
                   (c.id - 1) * 10 + 1 + (v % 10), '', c.lat + (random() - 0.5) * 0.18,
                   c.lng + (random() - 0.5) * 0.18, '', '', '[]'::jsonb,
                   CASE WHEN random() < 0.02 THEN 'closed' ELSE 'open' END, now()
            FROM beers_city c, generate_series(1, {VENUES_PER_CITY}) v
        """)
        conn.execute(f"""
            INSERT INTO beers_deal (city_id, venue_id, beer_id, brand_id, format_id, volume_ml,
                units, packaging, kind, price_cents, open_bar_minutes, service_charge_pct,
                couvert_cents, conditions, valid_from, valid_until, schedules, verified_at,
                created_at, confirmations, open_disputes, status, credit)
            SELECT v.city_id, v.id, b.id, b.brand_id, f.id, f.volume_ml,
                   u.units, CASE WHEN u.units > 1 THEN 'balde' ELSE 'single' END,
                   k.kind, 300 + floor(random() * 3000)::int,
                   CASE WHEN k.kind = 'open_bar' THEN 120 END, NULL, NULL, '', NULL, NULL,
                   CASE WHEN k.kind = 'happy_hour'
                        THEN '[{{"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"}}]'::jsonb
                        ELSE '[]'::jsonb END,
                   now() - random() * interval '250 days', now() - interval '300 days',
                   floor(random() * 5)::int, 0,
                   CASE WHEN random() < 0.03 THEN 'disputed'
                        WHEN random() < 0.03 THEN 'retired' ELSE 'published' END,
                   ''
            FROM beers_venue v
            CROSS JOIN generate_series(1, {DEALS_PER_VENUE}) d
            CROSS JOIN LATERAL (SELECT 1 + floor(random() * 20)::int AS id, d AS g) bx
            JOIN beers_beer b ON b.id = bx.id
            JOIN beers_format f ON f.id = 1 + ((v.id * 7 + d) % {len(FORMATS)})
            CROSS JOIN LATERAL (SELECT CASE WHEN random() < 0.1 THEN 5 ELSE 1 END AS units,
                                       d AS g) u
            CROSS JOIN LATERAL (SELECT (ARRAY['regular','regular','regular','happy_hour',
                                              'promo','combo','open_bar'])[1 + (d % 7)] AS kind,
                                       d AS g) k
        """)
        conn.execute("""
            INSERT INTO beers_pricecheck (deal_id, price_cents, checked_at, source)
            SELECT id, price_cents, verified_at, 'import' FROM beers_deal
        """)
        conn.execute("VACUUM ANALYZE")
        return _counts(conn)


def _counts(conn) -> dict:
    return {
        table: conn.execute(f"SELECT count(*) FROM beers_{table}").fetchone()[0]
        for table in ("city", "venue", "deal")
    }
