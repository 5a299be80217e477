"""The exported files follow datasets.md exactly."""

import datetime as dt
import zoneinfo
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import strategies as st

from beers import labels
from datasets import rows
from datasets.services import CITY_FILES, datasets_export

from .helpers import read_csv, read_json

pytestmark = pytest.mark.django_db

ENVELOPE = ["updated_at", "license", "attribution"]
DEAL_KEYS = [
    "id",
    "venue_id",
    "beer",
    "brand",
    "format_code",
    "units",
    "packaging",
    "kind",
    "price_cents",
    "price_per_litre_cents",
    "open_bar_minutes",
    "service_charge_pct",
    "couvert_cents",
    "conditions",
    "valid_from",
    "valid_until",
    "schedules",
    "verified_at",
    "created_at",
    "confirmations",
    "open_disputes",
    "status",
]
VENUE_KEYS = [
    "id",
    "slug",
    "name",
    "kind",
    "on_site",
    "neighbourhood",
    "address",
    "lat",
    "lng",
    "instagram",
    "opening_hours",
    "attributes",
    "status",
    "created_at",
]
DEALS_CSV = (
    "id, venue_id, venue, neighbourhood, beer, brand, format_code, serving, units, litres, "
    "packaging, kind, price_brl, price_per_litre_brl, when, valid_from, valid_until, "
    "service_charge_pct, couvert_brl, conditions, verified_on, confirmations, status"
).split(", ")
VENUES_CSV = (
    "id, slug, name, kind, on_site, neighbourhood, address, lat, lng, instagram, "
    "opening_hours, attributes, url"
).split(", ")


@pytest.fixture
def out(world, tmp_path):
    root = tmp_path / "tree"
    datasets_export(directory=root, progress=False)
    return root


def reais(cents):
    return "" if cents is None else str((Decimal(cents) / 100).quantize(Decimal("0.01")))


def test_layout_has_every_file_of_each_active_city_and_nothing_else(out):
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    expected = {"index.json", "cities.json", "catalog.json"}
    for city in ("sao-paulo", "manaus"):
        expected |= {f"{city}/{name}" for name in CITY_FILES}
    assert files == expected


def test_envelopes_and_index(out):
    index = read_json(out / "index.json")
    assert list(index) == [*ENVELOPE, "items", "files"]
    assert index["license"] == "ODbL-1.0"
    assert index["attribution"] == settings.ATTRIBUTION
    dt.datetime.fromisoformat(index["updated_at"])
    assert index["files"] == {
        "cities.json": "/api/v1/cities.json",
        "catalog.json": "/api/v1/catalog.json",
    }
    by_city = {item["city"]: item for item in index["items"]}
    assert set(by_city) == {"sao-paulo", "manaus"}
    sp = by_city["sao-paulo"]
    assert sp["counts"] == {"deals": 8, "venues": 3, "venues_all": 5, "neighbourhoods": 2}
    assert sp["files"] == {name: f"/api/v1/sao-paulo/{name}" for name in CITY_FILES}
    for name in ("deals", "venues", "venues-all"):
        data = read_json(out / "sao-paulo" / f"{name}.json")
        assert list(data) == [*ENVELOPE, "city", "items"]
        assert data["city"] == "sao-paulo"
        assert data["updated_at"] == index["updated_at"]
        assert len(data["items"]) == sp["counts"][name.replace("-", "_")]


def test_cities_counts_agree_with_the_city_files(out):
    cities = read_json(out / "cities.json")
    assert [c["slug"] for c in cities["items"]] == ["manaus", "sao-paulo"]
    for city in cities["items"]:
        assert list(city) == [
            "slug",
            "name",
            "state",
            "timezone",
            "lat",
            "lng",
            "deal_count",
            "venue_count",
        ]
        deals = read_json(out / city["slug"] / "deals.json")["items"]
        venues = read_json(out / city["slug"] / "venues.json")["items"]
        assert city["deal_count"] == len(deals)
        assert city["venue_count"] == len(venues) == len({d["venue_id"] for d in deals})


def test_catalog_has_three_arrays_and_no_items(out):
    data = read_json(out / "catalog.json")
    assert list(data) == [*ENVELOPE, "brands", "beers", "formats"]
    assert {"slug": "cervejaria-x", "name": "Cervejaria X"} in data["brands"]
    assert {"slug": "artesanal-da-casa", "name": "Artesanal da Casa", "brand": None} in data[
        "beers"
    ]
    assert {
        "code": "garrafa_600",
        "type": "garrafa",
        "volume_ml": 600,
        "label_pt": "garrafa 600 ml",
        "label_en": "600 ml bottle",
    } in data["formats"]


def test_deals_json_holds_published_and_disputed_prices_of_open_bars(world, out):
    items = read_json(out / "sao-paulo" / "deals.json")["items"]
    d = world.deals
    assert [i["id"] for i in items] == sorted(
        x.id
        for x in (d.regular, d.balde, d.happy, d.open_bar, d.promo, d.half, d.no_beer, d.disputed)
    )
    for item in items:
        assert list(item) == DEAL_KEYS
        assert all(
            isinstance(item[k], int)
            for k in ("verified_at", "created_at", "price_cents", "confirmations")
        )
    by_id = {i["id"]: i for i in items}
    assert by_id[d.half.id]["price_per_litre_cents"] == 500  # 499.5 rounded half-up
    assert by_id[d.half.id]["beer"] is None and by_id[d.half.id]["brand"] == "brahma"
    assert by_id[d.open_bar.id]["price_per_litre_cents"] is None
    assert by_id[d.open_bar.id]["open_bar_minutes"] == 120
    assert by_id[d.regular.id]["conditions"] is None  # empty text is null
    assert by_id[d.promo.id]["valid_from"] == "2026-11-01"
    assert by_id[d.balde.id]["verified_at"] == 1793500215  # whole seconds
    assert by_id[d.disputed.id]["status"] == "disputed"
    assert by_id[d.happy.id]["schedules"][1] == {"days": [6], "start": "22:00", "end": "02:00"}


def test_deals_csv_rows_are_the_json_rows_in_reais_and_local_dates(world, out):
    tz = zoneinfo.ZoneInfo("America/Sao_Paulo")
    items = read_json(out / "sao-paulo" / "deals.json")["items"]
    header, csv_rows = read_csv(out / "sao-paulo" / "deals.csv")
    assert header == DEALS_CSV
    assert (out / "sao-paulo" / "deals.csv").read_bytes().count(b"\r\n") >= len(items) + 1
    assert len(csv_rows) == len(items)
    bars = {v["id"]: v for v in read_json(out / "sao-paulo" / "venues-all.json")["items"]}
    for item, row in zip(items, csv_rows, strict=True):
        assert row["id"] == str(item["id"]) and row["venue_id"] == str(item["venue_id"])
        # datasets use slugs (spec decisions.md): the item's, and its bar's, as venues-all.json
        assert row["beer"] == (item["beer"] or "") and row["brand"] == (item["brand"] or "")
        bar = bars[item["venue_id"]]
        assert row["venue"] == bar["slug"]
        assert row["neighbourhood"] == (bar["neighbourhood"] or "")
        assert row["price_brl"] == reais(item["price_cents"])
        assert row["couvert_brl"] == reais(item["couvert_cents"])
        assert row["price_per_litre_brl"] == reais(item["price_per_litre_cents"])
        local = dt.datetime.fromtimestamp(item["verified_at"], tz=dt.UTC).astimezone(tz)
        assert row["verified_on"] == local.date().isoformat()
        assert row["conditions"] == (item["conditions"] or "")
        assert row["valid_from"] == (item["valid_from"] or "")
        for key in ("format_code", "packaging", "kind", "status"):
            assert row[key] == item[key]
        assert row["service_charge_pct"] == (
            "" if item["service_charge_pct"] is None else str(item["service_charge_pct"])
        )
    by_id = {r["id"]: r for r in csv_rows}
    balde = by_id[str(world.deals.balde.id)]
    assert balde["litres"] == "4.2" and balde["verified_on"] == "2026-10-31"  # 23:30 in SP
    assert balde["serving"] == labels.serving_label(
        fmt=world.lata, units=12, packaging="balde", lang="pt-BR"
    )
    happy = by_id[str(world.deals.happy.id)]
    assert happy["when"] == labels.schedule_text(world.deals.happy.schedules, "pt-BR")
    assert happy["venue"] == "boteco-aspas-virgula" and happy["neighbourhood"] == "pinheiros"
    assert happy["beer"] == "brahma-chopp" and happy["brand"] == "brahma"
    assert by_id[str(world.deals.promo.id)]["conditions"] == (
        'Só no balcão, "gelada"\npague 2, leve 3'
    )
    assert by_id[str(world.deals.half.id)]["price_per_litre_brl"] == "5.00"


def test_venues_files(world, out):
    venues = read_json(out / "sao-paulo" / "venues.json")["items"]
    everyone = read_json(out / "sao-paulo" / "venues-all.json")["items"]
    assert [v["slug"] for v in venues] == ["bar-do-ze", "boteco-aspas-virgula", "deposito-longe"]
    assert {v["slug"]: v["status"] for v in everyone} == {
        "bar-do-ze": "open",
        "boteco-aspas-virgula": "open",
        "deposito-longe": "open",
        "bar-fechado": "closed",
        "so-suspenso": "open",
    }
    for v in everyone:
        assert list(v) == VENUE_KEYS
    ze = everyone[0]
    assert ze["neighbourhood"] == "vila-madalena"
    assert ze["attributes"] == ["musica_ao_vivo", "area_externa"]
    longe = next(v for v in everyone if v["slug"] == "deposito-longe")
    assert longe["neighbourhood"] is None and longe["address"] is None
    assert longe["instagram"] is None and longe["opening_hours"] is None
    header, csv_rows = read_csv(out / "sao-paulo" / "venues-all.csv")
    assert header == VENUES_CSV
    for item, row in zip(everyone, csv_rows, strict=True):
        assert row["id"] == str(item["id"]) and row["slug"] == item["slug"]
        assert row["url"] == f"{settings.SITE_URL}/sao-paulo/{item['slug']}"
        assert row["attributes"] == "|".join(item["attributes"])
        assert row["neighbourhood"] == (item["neighbourhood"] or "")  # a slug, as the item's
        assert row["on_site"] == ("true" if item["on_site"] else "false")
        assert float(row["lat"]) == item["lat"] and float(row["lng"]) == item["lng"]
    assert csv_rows[0]["neighbourhood"] == "vila-madalena"


def test_geojson_features_have_counter_clockwise_outer_rings(out):
    data = read_json(out / "sao-paulo" / "neighbourhoods.geojson")
    assert data["type"] == "FeatureCollection"
    assert [f["properties"] for f in data["features"]] == [
        {"slug": "pinheiros", "name": "Pinheiros"},
        {"slug": "vila-madalena", "name": "Vila Madalena"},
    ]
    from datasets.services import ring_is_ccw

    for feature in data["features"]:
        geometry = feature["geometry"]
        polygons = (
            [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
        )
        for polygon in polygons:
            assert ring_is_ccw(polygon[0])


def test_a_stored_boundary_that_is_not_valid_geojson_is_left_out(world, tmp_path, caplog):
    """Written before boundaries were checked (or by hand in the database): the export goes
    on without it, and says so without the boundary itself."""
    from beers.models import Neighbourhood

    Neighbourhood.objects.filter(slug="pinheiros").update(
        boundary={"type": "Polygon", "coordinates": [[["x", "y"], [1, 0], [1, 1], ["x", "y"]]]}
    )
    datasets_export(directory=tmp_path / "tree", progress=False)
    data = read_json(tmp_path / "tree" / "sao-paulo" / "neighbourhoods.geojson")
    assert [f["properties"]["slug"] for f in data["features"]] == ["vila-madalena"]
    assert "sao-paulo/pinheiros has no usable boundary" in caplog.text


def test_price_index_csv_is_the_json_in_reais(out):
    items = read_json(out / "manaus" / "price-index.json")["items"]
    header, csv_rows = read_csv(out / "manaus" / "price-index.csv")
    assert header == [
        "month",
        "final",
        "scope",
        "key",
        "n",
        "min_brl",
        "p25_brl",
        "median_brl",
        "p75_brl",
    ]
    assert len(items) == len(csv_rows) > 0
    for item, row in zip(items, csv_rows, strict=True):
        assert list(item) == list(rows.PRICE_INDEX_KEYS)
        assert row["final"] == ("true" if item["final"] else "false")
        assert row["median_brl"] == reais(item["median_cents"])
        assert row["key"] == (item["key"] or "")


def test_money_and_rounding_helpers():
    assert rows.brl(1290) == "12.90" and rows.brl(5) == "0.05" and rows.brl(100000) == "1000.00"
    assert rows.price_per_litre_cents(999, 1, 2000, "regular") == 500
    assert rows.price_per_litre_cents(1, 3, 1000, "regular") == 0
    assert rows.price_per_litre_cents(590, 1, 300, "regular") == int(
        (Decimal(590) * 1000 / 300).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    )
    assert rows.litres(1, 1000) == "1" and rows.litres(12, 350) == "4.2"
    assert rows.litres(10, 1000) == "10"


@pytest.mark.django_db(transaction=True)
def test_export_outside_a_transaction_reads_one_snapshot(world, tmp_path):
    """The command's path: its own REPEATABLE READ, read-only transaction on PostgreSQL."""
    result = datasets_export(directory=tmp_path / "t", progress=False)
    assert result.counts["sao-paulo"]["deals"] == 8


def test_progress_bar_only_when_asked(world, tmp_path, capsys):
    datasets_export(directory=tmp_path / "quiet", progress=False)
    assert capsys.readouterr().err == ""
    datasets_export(directory=tmp_path / "bar", progress=True)
    assert "deals" in capsys.readouterr().err


@given(
    price=st.integers(1, 1_000_000),
    units=st.integers(1, 50),
    volume=st.integers(1, 20_000),
)
def test_price_per_litre_cents_is_half_up_of_the_exact_value(price, units, volume):
    exact = Decimal(price) * 1000 / Decimal(units * volume)
    expected = int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))
    # Decimal's 28 digits are plenty here, but check against integer arithmetic too.
    assert rows.price_per_litre_cents(price, units, volume, "regular") == expected
    assert rows.brl(price) == str((Decimal(price) / 100).quantize(Decimal("0.01")))
    # the live answers round the generated column's float (the same IEEE division on both
    # backends) to the same cents: the files and the API agree on every price per litre
    column = float(price) * 1000.0 / float(units * volume)
    assert labels.reais(column) == Decimal(expected) / 100


def test_instants_are_floored_to_the_second_on_every_backend(world, tmp_path):
    """23:59:59.9997 in São Paulo is still that day: whole seconds are floored, never rounded
    (SQLite's strftime rounds to the millisecond)."""
    from beers.models import Deal

    Deal.objects.filter(pk=world.deals.balde.pk).update(
        verified_at=dt.datetime(2026, 11, 24, 2, 59, 59, 999700, tzinfo=dt.UTC)
    )
    datasets_export(directory=tmp_path, progress=False)
    items = read_json(tmp_path / "sao-paulo" / "deals.json")["items"]
    _, csv_rows = read_csv(tmp_path / "sao-paulo" / "deals.csv")
    balde = world.deals.balde.id
    assert {i["id"]: i["verified_at"] for i in items}[balde] == 1795489199
    assert {r["id"]: r["verified_on"] for r in csv_rows}[str(balde)] == "2026-11-23"
