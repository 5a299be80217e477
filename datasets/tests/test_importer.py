"""import_datasets: round trip, idempotence, refusals that change nothing."""

import datetime as dt
import json
import shutil
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from beers.models import City, Deal, PriceCheck, PriceIndexHistory, Venue
from beers.selectors.price_index import last_ended_month
from beers.tests.factories import CityFactory
from datasets.importer import ImportRefused, datasets_import
from datasets.services import datasets_export

from .conftest import at
from .helpers import (
    assert_same_trees,
    read_csv,
    read_json,
    rewrite_csv,
    set_cells,
    tree,
    wipe_database,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def exported(world, tmp_path):
    root = tmp_path / "a"
    datasets_export(directory=root, progress=False)
    return root


def test_round_trip_into_an_empty_database_gives_the_same_files(exported, tmp_path):
    wipe_database()
    result = datasets_import(exported, progress=False)
    assert (result.cities, result.deals, result.venues) == (2, 9, 6)
    assert result.checks_created == 9
    again = tmp_path / "b"
    datasets_export(directory=again, progress=False)
    assert_same_trees(exported, again)


def test_round_trip_keeps_the_price_index_of_months_whose_checks_the_files_lack(world, tmp_path):
    """deals.json carries each price's last check only: the closed months of the index rest
    on older checks, and come back from price-index.json (PriceIndexHistory)."""
    regular = world.deals.regular
    for day, cents in ((5, 900), (20, 950)):  # two checks in August, an older price
        world.record_check(
            deal=regular, source="submission", price_cents=cents, at=at(2026, 8, day, 15)
        )
    world.record_check(deal=regular, source="submission", price_cents=990, at=at(2026, 9, 3, 15))
    first = tmp_path / "first"
    datasets_export(directory=first, progress=False)
    months = {c["month"] for c in read_json(first / "sao-paulo" / "price-index.json")["items"]}
    assert {"2026-08", "2026-09"} <= months
    wipe_database()
    result = datasets_import(first, progress=False)
    assert result.index_cells > 0
    assert PriceIndexHistory.objects.filter(month="2026-08").exists()
    second = tmp_path / "second"
    datasets_export(directory=second, progress=False)
    assert_same_trees(first, second)
    # the mirror, like its source, keeps a closed month as it closed: a price retired on both
    # sides leaves the final months of both alike (the source's once lost it, the mirror's not)
    closed = City.objects.get(slug="sao-paulo").price_index_closed_through
    assert closed >= "2026-09"
    Deal.objects.filter(pk=regular.pk).update(status="retired")
    third = tmp_path / "third"
    datasets_export(directory=third, progress=False)

    def final(tree):
        items = read_json(tree / "sao-paulo" / "price-index.json")["items"]
        return [item for item in items if item["final"] and item["month"] <= closed]

    assert final(third) == final(first) and any(i["month"] == "2026-08" for i in final(first))


def test_an_import_upserts_final_months_and_keeps_the_ones_closed_here(
    world, tmp_path, monkeypatch
):
    """The tree's final months replace this database's copies of those months; months it
    closed itself and the tree lacks stay, and it stays closed through them."""

    monkeypatch.setattr(timezone, "now", lambda: at(2026, 11, 20, 12))
    world.record_check(
        deal=world.deals.regular, source="submission", price_cents=900, at=at(2026, 8, 5, 15)
    )
    root = tmp_path / "t"
    datasets_export(directory=root, progress=False)
    sp = City.objects.get(slug="sao-paulo")
    assert sp.price_index_closed_through == "2026-10"
    assert PriceIndexHistory.objects.filter(city=sp, month="2026-08").exists()
    path = root / "sao-paulo" / "price-index.json"
    data = read_json(path)
    data["items"] = [item for item in data["items"] if item["month"] != "2026-08"]
    october = next(i for i in data["items"] if (i["month"], i["scope"]) == ("2026-10", "city"))
    october["n"] = 7  # the tree's figures win for its months
    path.write_text(json.dumps(data))
    table = root / "sao-paulo" / "price-index.csv"
    set_cells(table, {"month": "2026-10", "scope": "city"}, n="7")
    lines = table.read_bytes().split(b"\r\n")
    table.write_bytes(b"\r\n".join(line for line in lines if not line.startswith(b"2026-08,")))
    datasets_import(root, progress=False)
    sp.refresh_from_db()
    assert sp.price_index_closed_through == "2026-10"
    assert PriceIndexHistory.objects.filter(city=sp, month="2026-08").exists()
    assert PriceIndexHistory.objects.get(city=sp, month="2026-10", scope="city").n == 7
    # a mirror takes its source's closed months whole: August, closed here, is gone from there
    datasets_import(root, progress=False, mirror=True)
    assert not PriceIndexHistory.objects.filter(city=sp, month="2026-08").exists()
    assert PriceIndexHistory.objects.get(city=sp, month="2026-10", scope="city").n == 7


def test_a_mirror_is_closed_through_the_months_ended_when_the_tree_was_written(
    world, tmp_path, monkeypatch
):
    """Manaus's only observation is in September: written on 5 December, the tree's final
    cells stop there, yet its source had closed October and November too (empty). The
    mirror closes them as well: a check it gets inside them later does not open them."""

    monkeypatch.setattr(timezone, "now", lambda: at(2026, 12, 5, 12))
    root = tmp_path / "t"
    datasets_export(directory=root, progress=False)
    finals = {i["month"] for i in read_json(root / "manaus" / "price-index.json")["items"]}
    assert finals == {"2026-09"}
    wipe_database()
    datasets_import(root, progress=False)
    manaus = City.objects.get(slug="manaus")
    assert manaus.price_index_closed_through == "2026-11"


def test_a_city_without_price_index_cells_is_closed_through_a_month(world, tmp_path):
    """A city with no prices has a price-index.json without items: its closed months were
    read from no cells at all (max() of one month's text gave '6'), and every export after
    the import failed on that month."""
    CityFactory(slug="palmas", name="Palmas", state="TO", timezone="America/Araguaina")
    first = tmp_path / "first"
    datasets_export(directory=first, progress=False)
    assert read_json(first / "palmas" / "price-index.json")["items"] == []
    wipe_database()
    datasets_import(first, progress=False)
    palmas = City.objects.get(slug="palmas")
    assert palmas.price_index_closed_through == last_ended_month(palmas.tz, timezone.now())
    again = tmp_path / "again"
    datasets_export(directory=again, progress=False)
    assert_same_trees(first, again)
    # imported again over a city closed through a later month: it stays so
    datasets_import(first, progress=False)
    palmas.refresh_from_db()
    assert palmas.price_index_closed_through == last_ended_month(palmas.tz, timezone.now())


def test_a_month_that_ended_while_the_tree_was_written_stays_open(world, tmp_path, monkeypatch):
    """November's cells, written open a few seconds after it ended in São Paulo, are accepted
    (the minute's leeway): the month must stay open here, to be closed from this database's
    own checks, not closed with none of its cells kept."""
    monkeypatch.setattr(timezone, "now", lambda: at(2026, 11, 30, 20))
    root = tmp_path / "t"
    datasets_export(directory=root, progress=False)
    cells = read_json(root / "sao-paulo" / "price-index.json")["items"]
    assert any(cell["month"] == "2026-11" and not cell["final"] for cell in cells)
    written = "2026-12-01T03:00:30+00:00"  # November ended in São Paulo 30 s before
    for path in root.rglob("*.json"):
        data = read_json(path)
        data["updated_at"] = written
        path.write_text(json.dumps(data))
    monkeypatch.setattr(timezone, "now", lambda: at(2026, 12, 1, 3, 5))
    wipe_database()
    datasets_import(root, progress=False)
    sp = City.objects.get(slug="sao-paulo")
    assert sp.price_index_closed_through == "2026-10"
    after = tmp_path / "after"
    datasets_export(directory=after, progress=False)
    november = [
        cell
        for cell in read_json(after / "sao-paulo" / "price-index.json")["items"]
        if cell["month"] == "2026-11"
    ]
    assert november and all(cell["final"] for cell in november)


def test_import_keeps_ids_and_next_ids_follow_them(exported):
    ids = set(
        Deal.objects.filter(
            status__in=["published", "disputed"], venue__status="open", city__active=True
        ).values_list("id", flat=True)
    )
    wipe_database()
    datasets_import(exported, progress=False)
    assert set(Deal.objects.values_list("id", flat=True)) == ids
    city = City.objects.get(slug="manaus")
    venue = Venue.objects.create(
        city=city, slug="novo", name="Novo", kind="bar", lat=-3.1, lng=-60.0
    )
    assert venue.id > max(Venue.objects.exclude(id=venue.id).values_list("id", flat=True))


def test_importing_twice_changes_nothing_and_adds_no_checks(exported, tmp_path):
    datasets_import(exported, progress=False)
    checks = PriceCheck.objects.count()
    result = datasets_import(exported, progress=False)
    assert result.checks_created == 0
    assert PriceCheck.objects.count() == checks
    again = tmp_path / "c"
    datasets_export(directory=again, progress=False)
    assert tree(exported) == tree(again)


def test_a_mirror_follows_what_its_source_withdrew(world, exported, tmp_path):
    """T1, then at the source: a price retired, a bar deleted, a city put off; T2. A database
    loaded from T1 gives T2's files after `--mirror` T2; a plain import (upsert) keeps all."""
    Deal.objects.filter(pk=world.deals.regular.pk).update(status="retired")
    Venue.objects.filter(pk=world.aspas.pk).delete()
    City.objects.filter(slug="manaus").update(active=False)
    t2 = tmp_path / "t2"
    datasets_export(directory=t2, progress=False)
    wipe_database()
    datasets_import(exported, progress=False)

    datasets_import(t2, progress=False)
    plain = tmp_path / "plain"
    datasets_export(directory=plain, progress=False)
    assert (plain / "manaus").is_dir()
    assert Deal.objects.get(pk=world.deals.regular.pk).status == "published"

    copy = tmp_path / "copy"
    shutil.copytree(t2, copy)
    call_command("import_datasets", str(copy), "--mirror")
    assert Deal.objects.get(pk=world.deals.regular.pk).status == "retired"
    assert not Venue.objects.filter(pk=world.aspas.pk).exists()
    assert not City.objects.get(slug="manaus").active
    mirrored = tmp_path / "mirrored"
    datasets_export(directory=mirrored, progress=False)
    assert_same_trees(t2, mirrored)
    # what the source lists again is published again
    datasets_import(exported, progress=False)
    assert Deal.objects.get(pk=world.deals.regular.pk).status == "published"


def test_a_mirror_follows_its_source_withdrawing_catalogue_entries_and_bairros(
    world, exported, tmp_path, capsys
):
    """T1, then at the source a brand, a beer, a format and a bairro with its boundary are
    added (T2) and withdrawn again (T1's files): a mirror of T2 gives T1's files after
    `--mirror` T1, but keeps a format a price it holds still names, and says so."""
    from beers.models import Beer, Brand, Format, Neighbourhood

    xingu = Brand.objects.create(slug="xingu", name="Xingu")
    Beer.objects.create(slug="xingu-black", name="Xingu Black", brand=xingu)
    Format.objects.create(
        code="lata_999", type="lata", volume_ml=999, label_pt="lata 999 ml", label_en="999 ml can"
    )
    Format.objects.create(
        code="lata_998", type="lata", volume_ml=998, label_pt="lata 998 ml", label_en="998 ml can"
    )
    with_boundary = Neighbourhood.objects.exclude(boundary=None).first()
    Neighbourhood.objects.create(
        city=with_boundary.city, slug="aaa-novo", name="Novo", boundary=with_boundary.boundary
    )
    t2 = tmp_path / "t2"
    datasets_export(directory=t2, progress=False)
    assert "xingu" in (t2 / "catalog.json").read_text()
    wipe_database()
    datasets_import(t2, progress=False)
    # a price of the mirror's own that names a format T1 does not list (retired here)
    retired = Deal.objects.order_by("id").first()
    retired.pk, retired.id, retired.status = None, None, "retired"
    retired.format = Format.objects.get(code="lata_998")
    retired.save()

    call_command("import_datasets", str(exported), "--mirror", verbosity=2)
    out, err = capsys.readouterr()
    assert "1 bairros, 3 brands, beers or formats" in out
    assert "kept 1 brands, beers or formats" in err
    assert not Brand.objects.filter(slug="xingu").exists()
    assert not Neighbourhood.objects.filter(slug="aaa-novo").exists()
    assert Format.objects.filter(code="lata_998").exists()
    Deal.objects.filter(pk=retired.pk).delete()
    Format.objects.filter(code="lata_998").delete()
    mirrored = tmp_path / "mirrored"
    datasets_export(directory=mirrored, progress=False)
    assert_same_trees(exported, mirrored)


def test_a_mirror_drops_the_boundary_its_source_no_longer_has(world, exported, tmp_path):
    """A bairro its source keeps for a bar, without a boundary now: no feature here either."""
    from beers.models import Neighbourhood

    hood = Neighbourhood.objects.exclude(boundary=None).filter(venues__isnull=False).first()
    source = tmp_path / "source"
    shutil.copytree(exported, source)
    path = source / hood.city.slug / "neighbourhoods.geojson"
    data = read_json(path)
    data["features"] = [f for f in data["features"] if f["properties"]["slug"] != hood.slug]
    path.write_text(json.dumps(data))
    datasets_import(source, progress=False, mirror=True)
    hood.refresh_from_db()
    assert hood.boundary is None and hood.venues.exists()
    mirrored = tmp_path / "mirrored"
    datasets_export(directory=mirrored, progress=False)
    assert read_json(mirrored / hood.city.slug / "neighbourhoods.geojson") == data


def test_a_city_folder_that_cities_json_does_not_list_is_refused(world, exported):
    before = _snapshot()
    shutil.copytree(exported / "manaus", exported / "belem")
    with pytest.raises(ImportRefused, match=r"^belem/: holds a city's files, yet cities\.json"):
        datasets_import(exported, progress=False)
    assert _snapshot() == before
    (exported / "notes").mkdir()  # a folder of other things is no city
    (exported / "notes" / "readme.txt").write_text("mine")
    shutil.rmtree(exported / "belem")
    datasets_import(exported, progress=False)


def test_a_tree_written_over_an_older_one_drops_the_files_of_cities_it_no_longer_has(
    world, exported, tmp_path
):
    City.objects.filter(slug="manaus").update(active=False)
    (exported / "manaus" / "mine.txt").write_text("not the export's")
    shutil.copytree(exported / "sao-paulo", exported / "gone")
    datasets_export(directory=exported, progress=False)
    assert not (exported / "gone").exists()
    assert sorted(p.name for p in (exported / "manaus").iterdir()) == ["mine.txt"]
    datasets_import(exported, progress=False)  # no city folder cities.json lacks


@pytest.mark.parametrize("where", ["index.json", "missing/../index.json/x"])
def test_export_into_a_path_that_cannot_be_a_folder_says_why(exported, where):
    with pytest.raises(CommandError, match="cannot be made a folder"):
        call_command("export_datasets", "--dir", str(exported / where))


def test_a_mirror_keeps_the_prices_of_a_bar_its_source_closed(world, exported, tmp_path):
    """A closed bar's prices are in no deals.json, yet its source keeps them published (they
    come back if it reopens): the mirror does not retire them either."""
    bar = world.deals.regular.venue_id
    kept = set(Deal.objects.filter(venue_id=bar, status="published").values_list("pk", flat=True))
    assert kept
    Venue.objects.filter(pk=bar).update(status="closed")
    closed = tmp_path / "closed"
    datasets_export(directory=closed, progress=False)
    wipe_database()
    datasets_import(exported, progress=False)
    datasets_import(closed, progress=False, mirror=True)
    assert Venue.objects.get(pk=bar).status == "closed"
    statuses = Deal.objects.filter(pk__in=kept).values_list("status", flat=True)
    assert set(statuses) == {"published"}
    mirrored = tmp_path / "mirrored"
    datasets_export(directory=mirrored, progress=False)
    assert_same_trees(closed, mirrored)


def test_an_import_leaves_the_planner_fresh_statistics(exported):
    """PostgreSQL: the imported tables are analyzed (autovacuum may never come, and a plan
    for the old sizes made a 10 km cheapest 12 times slower)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's statistics")
    wipe_database()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE beers_deal, beers_venue")  # empty: 0 rows known
    datasets_import(exported, progress=False)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reltuples FROM pg_class WHERE relname IN ('beers_deal', 'beers_venue')"
        )
        known = dict(cursor.fetchall())
    assert known == {"beers_deal": Deal.objects.count(), "beers_venue": Venue.objects.count()}
    assert known["beers_deal"] > 0


def test_import_updates_existing_rows(world, exported):
    path = exported / "sao-paulo" / "deals.json"
    data = read_json(path)
    item = next(i for i in data["items"] if i["id"] == world.deals.regular.id)
    item["price_cents"], item["price_per_litre_cents"] = 1500, 2500
    path.write_text(json.dumps(data))
    set_cells(
        exported / "sao-paulo" / "deals.csv",
        {"id": item["id"]},
        price_brl="15.00",
        price_per_litre_brl="25.00",
    )
    second = dt.datetime.fromtimestamp(item["verified_at"], tz=dt.UTC)
    at_that_second = PriceCheck.objects.filter(
        deal_id=item["id"], checked_at__gte=second, checked_at__lt=second + dt.timedelta(seconds=1)
    )
    assert [c.price_cents for c in at_that_second.all()] == [1290]  # the check exported
    datasets_import(exported, progress=False)
    deal = Deal.objects.get(id=world.deals.regular.id)
    assert deal.price_cents == 1500 and round(deal.price_per_litre) == 2500
    # The file's check, at the same moment: the price index of that month reads 15.00 too.
    assert [c.price_cents for c in at_that_second.all()] == [1500]


def _snapshot():
    return (
        list(Deal.objects.order_by("id").values_list("id", "price_cents", "status")),
        list(Venue.objects.order_by("id").values_list("id", "name", "status")),
        PriceCheck.objects.count(),
        list(City.objects.order_by("id").values_list("slug", "name", "active")),
    )


def _written(data: dict) -> int:
    """A file's updated_at in unix seconds."""
    return int(dt.datetime.fromisoformat(data["updated_at"]).timestamp())


def _break(root, rel, mutate):
    path = root / rel
    data = read_json(path)
    mutate(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("rel", "mutate", "expected"),
    [
        (
            "sao-paulo/deals.json",
            lambda d: d["items"][2].update(price_cents="5,90"),
            ["sao-paulo/deals.json", "item 2 (id {})", 'field "price_cents"'],
        ),
        (
            "sao-paulo/deals.json",
            lambda d: d["items"][0].pop("status"),
            ["sao-paulo/deals.json", "item 0 (id {})", 'field "status"'],
        ),
        (
            "sao-paulo/deals.json",
            lambda d: d["items"][1].update(format_code="copo_200"),
            ["item 1 (id {})", 'field "format_code"'],
        ),
        (
            "sao-paulo/deals.json",
            lambda d: d["items"][1].update(venue_id=999),
            ["item 1 (id {})", 'field "venue_id"'],
        ),
        (
            "sao-paulo/deals.json",
            lambda d: d["items"][2]["schedules"][0].update(start="25:00"),
            ["item 2 (id {})", 'field "schedules"'],
        ),
        (
            "sao-paulo/venues-all.json",
            lambda d: d["items"][1].update(lat=123.0),
            ["sao-paulo/venues-all.json", "item 1 (id {})", 'field "lat"'],
        ),
        (
            "sao-paulo/venues-all.json",
            lambda d: d["items"][1].update(slug="bar-do-ze"),
            ["sao-paulo/venues-all.json", "item 1 (id {})", 'field "slug"'],
        ),
        (
            "catalog.json",
            lambda d: d["beers"][0].update(brand="nao-existe"),
            ["catalog.json", "item 0 (id artesanal-da-casa)", 'field "brand"'],
        ),
        (
            "cities.json",
            lambda d: d["items"][0].update(timezone="Mars/Olympus"),
            ["cities.json", "item 0 (id manaus)", 'field "timezone"'],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"][0].update(geometry={"type": "Point", "coordinates": [0, 0]}),
            ["manaus/neighbourhoods.geojson", "item 0 (id centro)", 'field "geometry"'],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"][0]["geometry"]["coordinates"][0][1].__setitem__(0, "x"),
            [
                "manaus/neighbourhoods.geojson",
                "item 0 (id centro)",
                'field "geometry"',
                "numbers only",
            ],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"][0]["geometry"]["coordinates"][0][1].__setitem__(0, 200.0),
            ["manaus/neighbourhoods.geojson", "item 0 (id centro)", 'field "geometry"', "WGS 84"],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"][0]["geometry"]["coordinates"][0].pop(),
            ["manaus/neighbourhoods.geojson", "item 0 (id centro)", 'field "geometry"', "closed"],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"][0]["geometry"].update(coordinates=[[[0, 0], [1, 0], [0, 0]]]),
            [
                "manaus/neighbourhoods.geojson",
                "item 0 (id centro)",
                'field "geometry"',
                "4 positions",
            ],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"][0]["geometry"].update(coordinates=[]),
            [
                "manaus/neighbourhoods.geojson",
                "item 0 (id centro)",
                'field "geometry"',
                "list of rings",
            ],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"][0]["geometry"].update(
                type="MultiPolygon",
                coordinates=[
                    [[[0, 0], [1, 0], [1, 1], [0, 0]]],
                    [[[0, 0], [1, True], [1, 1], [0, 0]]],
                ],
            ),
            [
                "manaus/neighbourhoods.geojson",
                "item 0 (id centro)",
                'field "geometry"',
                "polygon 1: ring 0",
            ],
        ),
        (  # decisions.md: codes are {type}_{volume_ml}
            "catalog.json",
            lambda d: d["formats"][0].update(volume_ml=d["formats"][0]["volume_ml"] + 1),
            ["catalog.json", "item 0", 'field "volume_ml"', "type_volume"],
        ),
        (  # beyond any integer column: a message, not a database overflow
            "sao-paulo/deals.json",
            lambda d: d["items"][0].update(confirmations=2**63),
            ["item 0 (id {})", 'field "confirmations"'],
        ),
        (
            "sao-paulo/venues-all.json",
            lambda d: d["items"][0].update(id=2**63),
            ["sao-paulo/venues-all.json", "item 0", 'field "id"'],
        ),
        (
            "catalog.json",
            lambda d: d["brands"][0].update(slug="b" * 81),
            ["catalog.json", "item 0", 'field "slug"', "at most 80"],
        ),
        (  # datasets.md: brand is the beer's brand
            "sao-paulo/deals.json",
            lambda d: d["items"][0].update(beer="brahma-chopp", brand="heineken"),
            ["item 0 (id {})", 'field "brand"', "brahma"],
        ),
        (  # ... none for a known beer without one
            "sao-paulo/deals.json",
            lambda d: d["items"][0].update(beer="artesanal-da-casa", brand="heineken"),
            ["item 0 (id {})", 'field "brand"', "must be null"],
        ),
        (
            "cities.json",
            lambda d: d["items"].append(dict(d["items"][0])),
            ["cities.json", "item 2 (id manaus)", 'field "slug"', "repeated"],
        ),
        (
            "sao-paulo/price-index.json",
            lambda d: d["items"][0].update(key="lata"),
            ["sao-paulo/price-index.json", "item 0", 'field "key"'],
        ),
        (
            "sao-paulo/price-index.json",
            lambda d: d["items"][0].update(month="2999-01", final=True),
            ["sao-paulo/price-index.json", "item 0 (id 2999-01)", 'field "final"'],
        ),
        (  # a month that had ended when the file was written is final
            "sao-paulo/price-index.json",
            lambda d: d["items"][0].update(month="2020-01", final=False),
            ["sao-paulo/price-index.json", "item 0 (id 2020-01)", 'field "final"', "is false"],
        ),
        (  # checked after the file was written: an hour after its updated_at
            "sao-paulo/deals.json",
            lambda d: d["items"][1].update(verified_at=_written(d) + 3600),
            ["sao-paulo/deals.json", "item 1 (id {})", 'field "verified_at"', "after the file"],
        ),
        (
            "sao-paulo/deals.json",
            lambda d: d["items"][0].update(created_at=_written(d) + 61),
            ["sao-paulo/deals.json", "item 0 (id {})", 'field "created_at"', "after the file"],
        ),
        (
            "sao-paulo/price-index.json",
            lambda d: d["items"][0].update(p25_cents=d["items"][0]["min_cents"] - 1),
            ["sao-paulo/price-index.json", "item 0", 'field "p25_cents"'],
        ),
        (
            "sao-paulo/venues.json",
            lambda d: d["items"][0].update(id=987654),
            ["sao-paulo/venues.json", "item 0 (id 987654)", 'field "id"'],
        ),
        (  # the files the import does not load must say what the loaded ones say
            "sao-paulo/venues.json",
            lambda d: d["items"][0].update(name="Outro nome"),
            ["sao-paulo/venues.json", "item 0 (id {})", 'field "name"', "venues-all.json"],
        ),
        (
            "manaus/neighbourhoods.geojson",
            lambda d: d["features"].append(d["features"][0]),
            ["manaus/neighbourhoods.geojson", "item 1 (id centro)", 'field "slug"', "repeated"],
        ),
        (
            "cities.json",
            lambda d: d["items"][0].pop("deal_count"),
            ["cities.json", "item 0 (id manaus)", 'field "deal_count"'],
        ),
        (
            "index.json",
            lambda d: d["items"][0].pop("files"),
            ["index.json", "item 0 (id manaus)", 'field "files"'],
        ),
        (
            "index.json",
            lambda d: d.pop("files"),
            ["index.json", 'field "files"'],
        ),
        (  # a check whose month the price index cannot name (year 9999)
            "sao-paulo/deals.json",
            lambda d: d["items"][0].update(verified_at=253402127999),
            ["sao-paulo/deals.json", "item 0 (id {})", 'field "verified_at"'],
        ),
        (
            "catalog.json",
            lambda d: d.update(updated_at="yesterday"),
            ["catalog.json", 'field "updated_at"', "ISO 8601"],
        ),
        (  # a moment no zone can name the month before (it crashed the closing of months)
            "sao-paulo/price-index.json",
            lambda d: d.update(updated_at="0001-01-01T00:00:00+00:00"),
            ["sao-paulo/price-index.json", 'field "updated_at"', "1970"],
        ),
        (  # PostgreSQL's text cannot hold U+0000 (it crashed the import)
            "sao-paulo/venues-all.json",
            lambda d: d["items"][1].update(name="Bar\u0000do"),
            ["sao-paulo/venues-all.json", "item 1 (id {})", 'field "name"', "NUL"],
        ),
        (
            "sao-paulo/deals.json",
            lambda d: d["items"][0].update(conditions="\u0000"),
            ["sao-paulo/deals.json", "item 0 (id {})", 'field "conditions"', "NUL"],
        ),
        (
            "index.json",
            lambda d: d["items"][0].update(city=[]),
            ["index.json", "item 0", 'field "city"', "slug"],
        ),
        (  # datasets.md: a format type for the format scope
            "sao-paulo/price-index.json",
            lambda d: next(i for i in d["items"] if i["scope"] == "format").update(key="Lata!"),
            ["sao-paulo/price-index.json", 'field "key"', "must be a format type"],
        ),
        (
            "sao-paulo/price-index.json",
            lambda d: next(i for i in d["items"] if i["scope"] == "neighbourhood").update(
                key="Not a slug"
            ),
            ["sao-paulo/price-index.json", 'field "key"', "neighbourhood's slug"],
        ),
        (  # no "between 0 and None"
            "cities.json",
            lambda d: d["items"][0].update(deal_count=-1),
            ["cities.json", "item 0 (id manaus)", 'field "deal_count"', "must be at least 0"],
        ),
        (  # the values it may take, not a length
            "sao-paulo/venues-all.json",
            lambda d: d["items"][0].update(status="temporarily_closed"),
            ["sao-paulo/venues-all.json", 'field "status"', "must be one of closed, open"],
        ),
        (  # its pages and files would answer as the site's own (the opt-out page)
            "cities.json",
            lambda d: d["items"][0].update(slug="optout"),
            ["cities.json", "item 0 (id optout)", 'field "slug"', "path of the site"],
        ),
        (  # the server's own clock, not a place's zone
            "cities.json",
            lambda d: d["items"][0].update(timezone="localtime"),
            ["cities.json", "item 0 (id manaus)", 'field "timezone"', "IANA"],
        ),
        (  # past half of JSON's safe integers: the rows created after go on from it
            "sao-paulo/deals.json",
            lambda d: d["items"][0].update(id=2**52 + 1),
            ["sao-paulo/deals.json", "item 0 (id 4503599627370497)", 'field "id"'],
        ),
    ],
)
def test_a_malformed_file_is_refused_naming_file_item_and_field_and_nothing_changes(
    exported, rel, mutate, expected
):
    # Change the database first, so that "unchanged" means something.
    Deal.objects.filter(id=Deal.objects.order_by("id").first().id).update(price_cents=1111)
    before = _snapshot()
    items = read_json(exported / rel).get("items", [])
    _break(exported, rel, mutate)
    with pytest.raises(ImportRefused) as err:
        datasets_import(exported, progress=False)
    for part in expected:
        if "(id {})" in part:  # ids differ between database backends
            index = int(part.split()[1])
            part = part.format(items[index]["id"])
        assert part in str(err.value)
    assert _snapshot() == before


def test_a_tree_that_reads_the_format_its_own_way_is_loaded(exported, tmp_path):
    """What datasets.md leaves open is not refused: CSV columns added or in another order,
    price-index.csv columns named otherwise, counts and prices per litre derived another
    way. What the import loads comes back as the export writes it."""
    original = tmp_path / "original"
    shutil.copytree(exported, original)
    for name in ("deals.csv", "venues-all.csv"):  # a column added, the columns reversed
        rewrite_csv(
            exported / "sao-paulo" / name,
            lambda t: [list(reversed(row + ["x" if i else "added"])) for i, row in enumerate(t)],
        )
    rewrite_csv(
        exported / "sao-paulo" / "price-index.csv",
        lambda t: [[c.replace("_brl", "") for c in t[0]], *t[1:]],
    )
    _break(
        exported, "sao-paulo/deals.json", lambda d: d["items"][0].update(price_per_litre_cents=1)
    )
    first = read_json(exported / "sao-paulo" / "deals.json")["items"][0]["id"]
    set_cells(exported / "sao-paulo" / "deals.csv", {"id": first}, price_per_litre_brl="0.01")
    _break(exported, "cities.json", lambda d: d["items"][0].update(deal_count=0, venue_count=0))
    _break(
        exported,
        "index.json",
        lambda d: d["items"][0].update(
            counts={}, files={k: "https://mirror.example" + v for k, v in d["files"].items()}
        ),
    )
    wipe_database()
    datasets_import(exported, progress=False)
    datasets_export(directory=tmp_path / "again", progress=False)
    assert_same_trees(original, tmp_path / "again")


def test_a_format_of_a_type_of_its_own_is_loaded_and_searched(exported, client):
    """decisions.md's codes end with "…": a tree's catalogue may name another type (a
    `caneca`), and `format` finds its prices by that type or by the code."""
    from django.core.cache import cache

    def add_format(d):
        d["formats"].append(
            {
                "code": "caneca_500",
                "type": "caneca",
                "volume_ml": 500,
                "label_pt": "caneca 500 ml",
                "label_en": "500 ml mug",
            }
        )

    _break(exported, "catalog.json", add_format)
    item = read_json(exported / "sao-paulo" / "deals.json")["items"][0]
    _break(
        exported, "sao-paulo/deals.json", lambda d: d["items"][0].update(format_code="caneca_500")
    )
    set_cells(
        exported / "sao-paulo" / "deals.csv",
        {"id": item["id"]},
        format_code="caneca_500",
        litres=str(item["units"] * 500 / 1000),
    )
    datasets_import(exported, progress=False)
    for value in ("caneca", "caneca_500"):
        cache.clear()
        answer = client.get("/api/v1/search", {"city": "sao-paulo", "format": value}).json()
        assert [d["id"] for d in answer["deals"]] == [item["id"]], value
        assert answer["deals"][0]["format"] == "caneca_500"


def test_items_one_per_line_with_the_envelope_after_them_are_loaded(exported, tmp_path):
    """A file laid out one item per line whose envelope keys come after the array is read
    whole (the first line alone lacks them), not refused for a missing licence."""
    original = tmp_path / "original"
    shutil.copytree(exported, original)
    path = exported / "sao-paulo" / "deals.json"
    data = read_json(path)
    items = data.pop("items")
    city = data.pop("city")
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    lines = ",\n".join(json.dumps(item, **compact) for item in items)
    rest = json.dumps(data, **compact)[1:]
    path.write_text(f'{{"city":"{city}","items":[\n{lines}\n],{rest}', encoding="utf-8")
    wipe_database()
    datasets_import(exported, progress=False)
    datasets_export(directory=tmp_path / "again", progress=False)
    assert_same_trees(original, tmp_path / "again")


def test_twin_venue_files_may_differ_in_added_fields_and_number_spelling(exported, tmp_path):
    """venues.json and venues-all.json agree on datasets.md's fields, as values: a field one
    of them adds, or -23 written for -23.0, is no disagreement."""
    listed = read_json(exported / "sao-paulo" / "venues.json")["items"][0]["id"]

    def add_and_respell(d):
        for item in d["items"]:
            item["closed_since"] = None
            if item["id"] == listed:
                item["lat"] = float(round(item["lat"]))

    def respell(d):
        for item in d["items"]:
            if item["id"] == listed:
                item["lat"] = int(round(item["lat"]))

    _break(exported, "sao-paulo/venues-all.json", add_and_respell)
    _break(exported, "sao-paulo/venues.json", respell)
    lat = round(Venue.objects.get(pk=listed).lat)  # in the CSVs, spelled two ways too
    set_cells(exported / "sao-paulo" / "venues-all.csv", {"id": listed}, lat=f"{lat}.0")
    set_cells(exported / "sao-paulo" / "venues.csv", {"id": listed}, lat=f"{lat}")
    datasets_import(exported, progress=False)
    assert Venue.objects.get(pk=listed).lat == round(Venue.objects.get(pk=listed).lat)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: [[c for c in row if c != "price_brl"] for row in t], "lacks: price_brl"),
        (lambda t: [t[0], *(row[:-1] for row in t[1:])], "cells, not"),
        (lambda t: [], "no header"),
    ],
)
def test_a_csv_that_lacks_a_named_column_or_a_cell_is_refused(exported, change, message):
    before = _snapshot()
    rewrite_csv(exported / "sao-paulo" / "deals.csv", change)
    with pytest.raises(ImportRefused, match=message):
        datasets_import(exported, progress=False)
    assert _snapshot() == before


@pytest.mark.parametrize(
    ("name", "column", "value"),
    [
        ("deals.csv", "price_brl", "999.99"),
        ("deals.csv", "price_brl", "abc"),
        ("deals.csv", "id", "987654"),
        ("deals.csv", "venue", "Outro bar"),
        ("deals.csv", "neighbourhood", "Outro bairro"),
        ("deals.csv", "verified_on", "1999-01-01"),
        ("deals.csv", "conditions", "só hoje"),
        ("venues-all.csv", "lat", "0"),
        ("venues-all.csv", "url", "http://127.0.0.1:8000/manaus/outro-bar"),
        ("venues.csv", "name", "Outro nome"),
        ("price-index.csv", "median_brl", "0.01"),
    ],
)
def test_a_csv_row_unlike_its_json_row_is_refused(exported, name, column, value):
    """datasets.md: a CSV holds the same rows as its JSON twin, in reais and local dates."""
    before = _snapshot()
    path = exported / "sao-paulo" / name
    _header, table = read_csv(path)
    key = "month" if name == "price-index.csv" else "id"
    set_cells(path, table[0], **{column: value})  # the first row (every cell of it matches)
    with pytest.raises(ImportRefused) as err:
        datasets_import(exported, progress=False)
    message = str(err.value)
    assert message.startswith(f"sao-paulo/{name}, item 0 (id {table[0][key]}), field ")
    assert f'field "{column}": is {value!r}, yet its JSON twin says' in message
    assert _snapshot() == before


def test_csv_numbers_are_compared_by_value(exported):
    """A spreadsheet writes 12.9 for 12.90 and -23.5 for -23.50: the same values."""

    def respell(table):
        at = {name: i for i, name in enumerate(table[0])}
        for row in table[1:]:
            for column in ("price_brl", "couvert_brl", "lat", "lng"):
                if column in at and row[at[column]]:
                    row[at[column]] = str(Decimal(row[at[column]]).normalize())
                    row[at[column]] += "0" if "." in row[at[column]] else ""
        return table

    for name in ("deals.csv", "venues-all.csv"):
        rewrite_csv(exported / "sao-paulo" / name, respell)
    datasets_import(exported, progress=False)


def test_a_csv_cell_over_the_readers_bound_is_refused_naming_its_line(exported):
    """An added column may hold anything; a cell past the CSV reader's 128 KiB bound is
    refused naming the line it is on (the message named no row)."""

    def added(table):
        table[0].append("note")
        for n, row in enumerate(table[1:]):
            row.append("x" * 200_000 if n == 1 else "")
        return table

    rewrite_csv(exported / "sao-paulo" / "deals.csv", added)
    with pytest.raises(ImportRefused) as err:
        datasets_import(exported, progress=False)
    assert "sao-paulo/deals.csv" in str(err.value) and "at line 3" in str(err.value)


def test_a_spreadsheets_spelling_is_the_same_cell(world, tmp_path):
    """Booleans in capitals, coordinates to 15 significant digits (they agree to 1e-9
    degrees), a line break in a cell after dos2unix: what people's tools write. A coordinate
    a metre off is still refused."""
    Deal.objects.filter(pk=world.deals.regular.pk).update(conditions="Só hoje,\r\nno balcão")
    root = tmp_path / "t"
    datasets_export(directory=root, progress=False)
    original = {name: (root / "sao-paulo" / name).read_bytes() for name in ("venues-all.csv",)}

    def respell(table):
        at = {name: i for i, name in enumerate(table[0])}
        for row in table[1:]:
            if "on_site" in at:
                row[at["on_site"]] = row[at["on_site"]].upper()
            if "lat" in at:
                row[at["lat"]] = repr(float(row[at["lat"]]) + 4e-13)
            if "conditions" in at:
                row[at["conditions"]] = row[at["conditions"]].replace("\r\n", "\n")
        return table

    for name in ("deals.csv", "venues-all.csv", "venues.csv"):
        rewrite_csv(root / "sao-paulo" / name, respell)
    assert "no balcão" in (root / "sao-paulo" / "deals.csv").read_text(encoding="utf-8")
    datasets_import(root, progress=False)
    (root / "sao-paulo" / "venues-all.csv").write_bytes(original["venues-all.csv"])
    rewrite_csv(
        root / "sao-paulo" / "venues-all.csv",
        lambda t: [t[0], [*t[1][:7], repr(float(t[1][7]) + 1e-5), *t[1][8:]], *t[2:]],
    )
    with pytest.raises(ImportRefused, match=r'venues-all\.csv, item 0 \(id \d+\), field "lat"'):
        datasets_import(root, progress=False)


def test_venues_json_lists_exactly_the_bars_of_the_prices(exported):
    """datasets.md: venues.json holds the bars with at least one price in deals.json, once."""
    rel = "sao-paulo/venues.json"
    listed = read_json(exported / rel)["items"]
    every = read_json(exported / "sao-paulo" / "venues-all.json")["items"]
    without_price = next(i for i in every if i["id"] not in {v["id"] for v in listed})
    original = (exported / rel).read_bytes()
    for mutate, message in (
        (
            lambda d: d["items"].append(without_price),
            f'item {len(listed)} (id {without_price["id"]}), field "id": a bar with no price',
        ),
        (lambda d: d["items"].append(d["items"][0]), f"item {len(listed)} (id {listed[0]['id']})"),
        (lambda d: d["items"].pop(0), f"lacks bar {listed[0]['id']}, which has prices"),
    ):
        (exported / rel).write_bytes(original)
        _break(exported, rel, mutate)
        with pytest.raises(ImportRefused) as err:
            datasets_import(exported, progress=False)
        assert message in str(err.value)


def test_a_file_of_broken_utf8_is_refused_where_it_breaks(exported):
    path = exported / "sao-paulo" / "venues-all.json"
    text = path.read_bytes()
    at = text.index(b'"name"', 200)
    path.write_bytes(text[:at] + b"\xff" + text[at:])
    line = text[:at].count(b"\n") + 1
    with pytest.raises(ImportRefused, match=rf"not valid UTF-8 at byte {at} \(line {line},"):
        datasets_import(exported, progress=False)


def test_blank_lines_at_the_end_of_a_csv_are_allowed_not_between_rows(exported, tmp_path):
    """An editor's trailing blank lines are no rows; a blank line between rows is refused,
    naming the row before which it stands."""
    path = exported / "sao-paulo" / "deals.csv"
    text = path.read_bytes()
    path.write_bytes(text + b"\r\n\r\n")
    datasets_import(exported, progress=False)
    head, first, rest = text.split(b"\r\n", 2)
    path.write_bytes(b"\r\n".join([head, first, b"", rest]))
    before = _snapshot()
    with pytest.raises(ImportRefused, match="blank line between rows") as refused:
        datasets_import(exported, progress=False)
    assert refused.value.file == "sao-paulo/deals.csv" and refused.value.item == 1
    assert _snapshot() == before


def test_a_price_with_three_open_disputes_is_loaded_out_of_the_rankings(exported, tmp_path):
    """interface.md: 3 open disputes take a price out of the rankings, 2 make it disputed,
    whatever the tree calls it."""
    items = read_json(exported / "sao-paulo" / "deals.json")["items"]
    out, kept, called_published, one = (item["id"] for item in items[:4])

    def dispute(d):
        d["items"][0].update(status="disputed", open_disputes=3)
        d["items"][1].update(status="disputed", open_disputes=2)
        d["items"][2].update(status="published", open_disputes=2)
        d["items"][3].update(status="published", open_disputes=1)

    _break(exported, "sao-paulo/deals.json", dispute)
    for deal_id, status in zip(
        (out, kept, called_published, one), ("disputed",) * 2 + ("published",) * 2, strict=True
    ):
        set_cells(exported / "sao-paulo" / "deals.csv", {"id": deal_id}, status=status)
    wipe_database()
    datasets_import(exported, progress=False)
    assert Deal.objects.get(pk=out).status == "suspended"
    assert Deal.objects.get(pk=kept).status == "disputed"
    assert Deal.objects.get(pk=called_published).status == "disputed"
    assert Deal.objects.get(pk=one).status == "published"
    datasets_export(directory=tmp_path / "again", progress=False)
    ids = {d["id"] for d in read_json(tmp_path / "again" / "sao-paulo" / "deals.json")["items"]}
    assert kept in ids and out not in ids


def test_a_bar_edited_in_venues_all_only_names_the_field_and_both_files(exported):
    listed = read_json(exported / "sao-paulo" / "venues.json")["items"][0]["id"]
    before = _snapshot()
    _break(
        exported,
        "sao-paulo/venues-all.json",
        lambda d: next(v for v in d["items"] if v["id"] == listed).update(opening_hours="24h"),
    )
    with pytest.raises(ImportRefused) as err:
        datasets_import(exported, progress=False)
    message = str(err.value)
    assert f"(id {listed})" in message and 'field "opening_hours"' in message
    assert "sao-paulo/venues.json" in message and "sao-paulo/venues-all.json" in message
    assert _snapshot() == before


def test_an_id_names_one_bar_and_one_price_in_the_whole_tree(world, exported):
    before = _snapshot()
    other = read_json(exported / "manaus" / "venues-all.json")["items"][0]
    _break(
        exported,
        "sao-paulo/venues-all.json",
        lambda d: d["items"].append({**other, "slug": "intruso"}),
    )
    with pytest.raises(ImportRefused, match=r"venues-all\.json, item \d+ \(id \d+\), field \"id\""):
        datasets_import(exported, progress=False)
    assert _snapshot() == before


def test_a_price_id_of_another_city_is_refused(world, exported):
    before = _snapshot()
    manaus = read_json(exported / "manaus" / "deals.json")["items"][0]
    _break(exported, "sao-paulo/deals.json", lambda d: d["items"][0].update(id=manaus["id"]))
    with pytest.raises(ImportRefused, match=r"(manaus|sao-paulo)/deals\.json.*field \"id\""):
        datasets_import(exported, progress=False)
    assert _snapshot() == before


def test_prices_of_a_closed_bar_are_refused(world, exported):
    def close(d):
        d["items"][0]["status"] = "closed"

    bar = read_json(exported / "sao-paulo" / "venues-all.json")["items"][0]["id"]
    priced = {i["venue_id"] for i in read_json(exported / "sao-paulo" / "deals.json")["items"]}
    assert bar in priced
    _break(exported, "sao-paulo/venues-all.json", close)
    with pytest.raises(ImportRefused, match=r'deals\.json, item \d+ \(id \d+\), field "venue_id"'):
        datasets_import(exported, progress=False)


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda root: (root / "sao-paulo" / "deals.csv").unlink(), ["deals.csv", "missing"]),
        (lambda root: (root / "index.json").unlink(), ["index.json", "missing"]),
        (
            lambda root: (root / "sao-paulo" / "deals.csv").write_bytes(
                b"\xef\xbb\xbf" + (root / "sao-paulo" / "deals.csv").read_bytes()
            ),
            ["deals.csv", "byte order mark"],
        ),
        (
            lambda root: (root / "manaus" / "venues-all.csv").write_bytes(
                b"".join((root / "manaus" / "venues-all.csv").read_bytes().splitlines(True)[:-1])
            ),
            ["manaus/venues-all.csv", "rows"],
        ),
        (
            lambda root: (root / "sao-paulo" / "price-index.csv").write_text("month,n\r\n"),
            ["sao-paulo/price-index.csv", "rows"],  # any names, but each row of the JSON
        ),
    ],
)
def test_the_files_the_import_does_not_load_must_be_there_and_agree(world, exported, damage, words):
    before = _snapshot()
    damage(exported)
    with pytest.raises(ImportRefused) as err:
        datasets_import(exported, progress=False)
    for word in words:
        assert word in str(err.value)
    assert _snapshot() == before


@pytest.mark.parametrize("rel", ["sao-paulo/deals.json", "manaus/venues.csv", "index.json"])
def test_a_folder_where_a_file_belongs_is_refused_naming_it(exported, rel):
    before = _snapshot()
    (exported / rel).unlink()
    (exported / rel).mkdir()
    with pytest.raises(ImportRefused, match=rf"^{rel}: is a folder, not a file$"):
        datasets_import(exported, progress=False)
    assert _snapshot() == before


def test_a_price_may_name_only_what_the_trees_catalog_lists(world, exported):
    """Whether a tree loads does not depend on what the database already holds: a beer this
    database has, left out of the tree's catalog.json, is not the tree's to name."""
    deal = read_json(exported / "sao-paulo" / "deals.json")["items"][0]
    assert deal["beer"]
    _break(
        exported,
        "catalog.json",
        lambda d: d.update(beers=[b for b in d["beers"] if b["slug"] != deal["beer"]]),
    )
    before = _snapshot()
    with pytest.raises(ImportRefused) as err:
        datasets_import(exported, progress=False)
    assert f'sao-paulo/deals.json, item 0 (id {deal["id"]}), field "beer"' in str(err.value)
    assert _snapshot() == before


def test_bars_may_swap_slugs_and_pass_them_along_in_one_tree(world, exported):
    """The database holds the slugs as they were: a swap and a chain of renames, each slug
    held by one bar once the tree is in, are loaded (the unique (city, slug) was checked row
    by row, and refused them)."""
    rel = "sao-paulo/venues-all.json"
    items = read_json(exported / rel)["items"]
    assert len(items) >= 3
    a, b, c = items[0], items[1], items[2]
    wanted = {a["id"]: b["slug"], b["id"]: a["slug"], c["id"]: c["slug"] + "-2"}

    def rename(data):
        for item in data["items"]:
            item["slug"] = wanted.get(item["id"], item["slug"])

    for name in ("venues-all.json", "venues.json"):
        _break(exported, f"sao-paulo/{name}", rename)
    for name in ("venues-all.csv", "venues.csv"):
        path = exported / "sao-paulo" / name
        rewrite_csv(
            path,
            lambda t: (
                [t[0]] + [[*r[:1], wanted.get(int(r[0]), r[1]), *r[2:]] if r else r for r in t[1:]]
            ),
        )
        for bar_id, slug in wanted.items():  # the page's address ends with the slug
            set_cells(path, {"id": bar_id}, url=f"http://127.0.0.1:8000/sao-paulo/{slug}")
    for bar_id, slug in wanted.items():  # deals.csv names each price's bar by its slug
        set_cells(exported / "sao-paulo" / "deals.csv", {"venue_id": bar_id}, venue=slug)
    datasets_import(exported, progress=False)
    assert dict(Venue.objects.filter(id__in=wanted).values_list("id", "slug")) == wanted


@pytest.mark.django_db(transaction=True)  # the import commits: its export runs then
def test_an_import_off_a_terminal_prints_nothing_even_as_tasks_run_in_it(
    exported, settings, monkeypatch, capsys, caplog
):
    """The export an import schedules runs in the command's process where tasks run eagerly
    (`make run`): Celery's line about it is held back too."""
    import logging

    from config.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = True
    monkeypatch.setattr(app.conf, "task_always_eager", True)
    caplog.set_level(logging.INFO)
    call_command("import_datasets", str(exported))
    assert capsys.readouterr() == ("", "")
    assert [r.getMessage() for r in caplog.records if r.levelno < logging.WARNING] == []


def test_invalid_json_is_refused_with_the_file_name(exported):
    (exported / "manaus" / "deals.json").write_text('{"items": [')
    with pytest.raises(CommandError, match=r"manaus/deals\.json: not valid JSON"):
        call_command("import_datasets", str(exported))


def test_a_bairro_without_boundary_is_created_named_by_its_slug(world, exported, tmp_path):
    """The files name a bairro only in the GeoJSON (datasets use slugs): one without a
    boundary is created named by its slug, and one the database has keeps its name."""
    world.ze.neighbourhood = world.sp.neighbourhoods.get(slug="se")
    world.ze.save()
    root = tmp_path / "with-se"
    datasets_export(directory=root, progress=False)
    header, rows = read_csv(root / "sao-paulo" / "venues-all.csv")
    assert next(r for r in rows if r["slug"] == "bar-do-ze")["neighbourhood"] == "se"
    datasets_import(root, progress=False)
    assert world.sp.neighbourhoods.get(slug="se").name == "Sé"
    wipe_database()
    result = datasets_import(root, progress=False)
    venue = Venue.objects.get(slug="bar-do-ze")
    assert (venue.neighbourhood.slug, venue.neighbourhood.name) == ("se", "se")
    assert any("se" in note for note in result.notes)
    datasets_export(directory=tmp_path / "again", progress=False)
    assert_same_trees(root, tmp_path / "again")


def test_command_imports_a_copy(exported, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(exported, copy)
    wipe_database()
    call_command("import_datasets", str(copy), verbosity=2)
    assert "9 prices" in capsys.readouterr().out
    header, rows = read_csv(copy / "manaus" / "deals.csv")
    assert Deal.objects.filter(city__slug="manaus").count() == len(rows) == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="sequences are PostgreSQL's")
def test_sequences_are_reset_on_postgresql(exported):
    wipe_database()
    datasets_import(exported, progress=False)
    with connection.cursor() as cursor:
        cursor.execute("SELECT last_value FROM beers_deal_id_seq")
        assert cursor.fetchone()[0] >= Deal.objects.order_by("-id").first().id


def test_exported_layout_is_read_line_by_line_and_a_bad_item_is_named(exported):
    path = exported / "sao-paulo" / "deals.json"
    lines = path.read_bytes().split(b"\n")
    assert lines[0].endswith(b'"items":[')  # the streamed layout
    lines[3] = lines[3].replace(b'"units":1', b'"units":0')
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ImportRefused, match=r'item 2 \(id \d+\), field "units"'):
        datasets_import(exported, progress=False)


def test_pretty_printed_files_are_read_whole(exported, tmp_path):
    path = exported / "sao-paulo" / "deals.json"
    data = read_json(path)
    text = json.dumps(data, indent=2).replace('"items": [', '"items": [', 1)
    # Header on the first line, then items over several lines each: valid, not line-delimited.
    head, _, rest = text.partition('"items": [')
    path.write_text(head.replace("\n", "") + '"items":[' + rest)
    wipe_database()
    result = datasets_import(exported, progress=False)
    assert result.deals == 9


def test_a_missing_comma_between_items_is_invalid_json(exported):
    path = exported / "sao-paulo" / "deals.json"
    path.write_bytes(path.read_bytes().replace(b"},\n{", b"}\n{", 1))
    with pytest.raises(ImportRefused, match=r"sao-paulo/deals\.json: not valid JSON"):
        datasets_import(exported, progress=False)


def test_a_beer_given_another_brand_takes_the_prices_the_files_do_not_hold(world, tmp_path):
    """The catalogue's upsert skips Beer.save: a retired price of a rebranded beer (not in
    deals.json) follows it too."""
    from beers.models import Beer, Brand
    from datasets.services import datasets_export

    retired = Deal.objects.filter(beer__brand__isnull=False).first()
    beer = retired.beer
    Deal.objects.filter(pk=retired.pk).update(status="retired")
    other = Brand.objects.exclude(pk=beer.brand_id).first()
    tree = tmp_path / "tree"
    datasets_export(directory=tree, progress=False)
    _break(
        tree,
        "catalog.json",
        lambda d: next(b for b in d["beers"] if b["slug"] == beer.slug).update(brand=other.slug),
    )

    def rebrand_deals(d):
        for item in d["items"]:
            if item["beer"] == beer.slug:
                item["brand"] = other.slug

    for city in ("sao-paulo", "manaus"):
        _break(tree, f"{city}/deals.json", rebrand_deals)
        set_cells(tree / city / "deals.csv", {"beer": beer.slug}, brand=other.slug)
    datasets_import(tree, progress=False)
    assert Beer.objects.get(pk=beer.pk).brand_id == other.pk
    assert Deal.objects.get(pk=retired.pk).brand_id == other.pk


def _display_names(city: str) -> dict[str, dict[str, str]]:
    from beers.models import Beer, Brand, Neighbourhood

    return {
        "venue": dict(Venue.objects.filter(city__slug=city).values_list("slug", "name")),
        "neighbourhood": dict(
            Neighbourhood.objects.filter(city__slug=city).values_list("slug", "name")
        ),
        "beer": dict(Beer.objects.values_list("slug", "name")),
        "brand": dict(Brand.objects.values_list("slug", "name")),
    }


def _named(names: dict[str, dict[str, str]]):
    """A CSV table with the named columns' slugs written as display names."""

    def change(table):
        at = {name: i for i, name in enumerate(table[0])}
        for row in table[1:]:
            for column, by_slug in names.items():
                if row and column in at and row[at[column]]:
                    row[at[column]] = by_slug[row[at[column]]]
        return table

    return change


def test_a_tree_written_when_the_csv_held_display_names_is_read(world, exported, tmp_path):
    """Until 2026-12-07 the CSV files held bars', bairros', beers' and brands' display names
    where they hold slugs now: such a tree (a backup) still loads, and exports as today's; a
    name that is not its JSON twin's is still refused."""
    old = tmp_path / "old"
    shutil.copytree(exported, old)
    for city in ("sao-paulo", "manaus"):
        names = _display_names(city)
        rewrite_csv(old / city / "deals.csv", _named(names))
        for name in ("venues.csv", "venues-all.csv"):
            rewrite_csv(old / city / name, _named({"neighbourhood": names["neighbourhood"]}))
    assert b",Vila Madalena," in (old / "sao-paulo" / "venues-all.csv").read_bytes()
    assert b",Brahma Chopp,Brahma," in (old / "sao-paulo" / "deals.csv").read_bytes()
    wipe_database()
    datasets_import(old, progress=False)
    datasets_export(directory=tmp_path / "again", progress=False)
    assert_same_trees(exported, tmp_path / "again")
    rewrite_csv(
        old / "sao-paulo" / "deals.csv",
        lambda t: [[("Heineken" if cell == "Brahma Chopp" else cell) for cell in r] for r in t],
    )
    with pytest.raises(
        ImportRefused,
        match=r"sao-paulo/deals\.csv, .*field \"beer\": is 'Heineken', yet its JSON twin says 'brahma-chopp'",
    ):
        datasets_import(old, progress=False)
