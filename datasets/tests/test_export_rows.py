"""The export's rows state (datasets.models, PostgreSQL): the files patched from the last
export's are byte for byte those formatted afresh, whatever changed in between, and only what
changed is formatted again.

The export owns its transaction here (transaction=True tests): that is when it keeps files.
Formatted afresh = the same export inside a caller's transaction, which keeps none."""

import threading

import pytest
from django.db import connection, transaction

from beers.models import Beer, Brand, City, Deal, Format, Neighbourhood, Venue
from beers.services import deal_create
from datasets import patch, pgcopy
from datasets.models import DealRowCity, RowChange
from datasets.services import datasets_export
from datasets.snapshot import EXPORT_LOCK, export_snapshot

from .helpers import assert_rows_agree, tree

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the rows are PostgreSQL's"),
]


@pytest.fixture
def formatted(monkeypatch):
    """How many rows each export formatted, city by city (its kept copies' record)."""
    counts: list[dict] = []

    class Spy(patch.Kept):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            counts.append(self.formatted)

    monkeypatch.setattr(patch, "Kept", Spy)
    return counts


def test_the_first_export_formats_every_row_then_only_what_changed(world, tmp_path, formatted):
    first = assert_rows_agree(tmp_path, "first")
    assert formatted[-1] == {"manaus": 1, "sao-paulo": 8}
    assert DealRowCity.objects.count() == 2

    assert assert_rows_agree(tmp_path, "again") == first
    assert formatted[-1] == {"manaus": 0, "sao-paulo": 0}

    # A bulk update (no save(), no signal) is seen too.
    Deal.objects.filter(pk=world.deals.regular.pk).update(price_cents=1390)
    changed = assert_rows_agree(tmp_path, "changed")
    assert formatted[-1] == {"manaus": 0, "sao-paulo": 1}
    assert changed != first
    assert b"13.90" in changed["sao-paulo/deals.csv"]
    assert not RowChange.objects.exists()


def _rename_bar(world):
    Venue.objects.filter(pk=world.ze.pk).update(name='Bar do Zé, "o Novo"', slug="bar-do-ze-o-novo")


def _rename_bairro(world):
    Neighbourhood.objects.filter(pk=world.vila.pk).update(name="Vila Madá", slug="vila-mada")


def _move_bar_to_another_bairro(world):
    Venue.objects.filter(pk=world.ze.pk).update(neighbourhood=None)


def _rename_beer(world):
    Beer.objects.filter(slug="heineken").update(name="Heineken Original", slug="heineken-og")


def _rename_brand(world):
    Brand.objects.filter(slug="brahma").update(name="Brahma!", slug="brahma-nova")


def _rebrand_beer(world):
    Beer.objects.filter(slug="artesanal-da-casa").update(brand=world.brahma)
    for deal in Deal.objects.filter(beer__slug="artesanal-da-casa"):
        deal.save()  # a price follows its beer's brand (Deal.save)


def _close_bar(world):
    Venue.objects.filter(pk=world.ze.pk).update(status="closed")


def _reopen_bar(world):
    Venue.objects.filter(pk=world.fechado.pk).update(status="open")


def _suspend_price(world):
    Deal.objects.filter(pk=world.deals.disputed.pk).update(status="suspended")


def _delete_price(world):
    Deal.objects.filter(pk=world.deals.balde.pk).delete()


def _new_price(world):
    deal_create(
        venue=world.aspas,
        format=world.torre,
        beer=None,
        brand=world.brahma,
        price_cents=4990,
        schedules=[{"days": [5], "start": "23:00", "end": "02:00"}],
    )


def _move_price_to_another_city(world):
    bar = Venue.objects.get(city=world.manaus)
    Deal.objects.filter(pk=world.deals.regular.pk).update(city=world.manaus, venue=bar)


def _relabel_format(world):
    Format.objects.filter(pk=world.garrafa.pk).update(label_pt="garrafa de 600 ml")


def _change_time_zone(world):
    City.objects.filter(pk=world.sp.pk).update(timezone="America/Noronha")


def _check_again(world):
    world.record_check(deal=world.deals.half, source="submission", price_cents=990)


EDITS = [
    _rename_bar,
    _rename_bairro,
    _move_bar_to_another_bairro,
    _rename_beer,
    _rename_brand,
    _rebrand_beer,
    _close_bar,
    _reopen_bar,
    _suspend_price,
    _delete_price,
    _new_price,
    _move_price_to_another_city,
    _relabel_format,
    _change_time_zone,
    _check_again,
]


@pytest.mark.parametrize("edit", EDITS, ids=[e.__name__.strip("_") for e in EDITS])
def test_an_edit_of_anything_a_price_shows_reaches_the_files(world, tmp_path, edit):
    before = assert_rows_agree(tmp_path, "before")
    edit(world)
    after = assert_rows_agree(tmp_path, "after")
    assert after != before  # the edit shows in the files
    # and the files kept after it are patched right by the next export
    assert assert_rows_agree(tmp_path, "again") == after


def test_a_price_moved_among_many_changes_keeps_one_row(world, tmp_path, formatted, monkeypatch):
    """Many changes: every city is formatted whole, Manaus before São Paulo, as a São Paulo
    price moves to Manaus: its old row, still under São Paulo, gives way to the new one."""
    assert_rows_agree(tmp_path, "first")
    monkeypatch.setattr(pgcopy, "BULK_CHANGES", 0)
    _move_price_to_another_city(world)
    after = assert_rows_agree(tmp_path, "after")
    assert formatted[-1] == {"manaus": 2, "sao-paulo": 7}
    assert f"\r\n{world.deals.regular.pk},".encode() in after["manaus/deals.csv"]
    assert f"\r\n{world.deals.regular.pk},".encode() not in after["sao-paulo/deals.csv"]
    assert assert_rows_agree(tmp_path, "again") == after


def test_a_city_out_of_the_files_is_formatted_whole_when_it_returns(world, tmp_path, formatted):
    assert_rows_agree(tmp_path, "first")
    City.objects.filter(pk=world.manaus.pk).update(active=False)
    datasets_export(directory=tmp_path / "without", progress=False)
    assert not DealRowCity.objects.filter(city_id=world.manaus.pk).exists()
    # Its changes are not followed meanwhile: its rows come back whole.
    Deal.objects.filter(pk=world.deals.manaus.pk).update(price_cents=1250)
    RowChange.objects.all().delete()
    City.objects.filter(pk=world.manaus.pk).update(active=True)
    assert b"1250" in assert_rows_agree(tmp_path, "back")["manaus/deals.json"]
    assert formatted[-1] == {"manaus": 1, "sao-paulo": 0}


def test_rows_lost_with_their_table_are_formatted_again(world, tmp_path, formatted):
    """A crash empties the UNLOGGED table: the next export formats every row."""
    first = assert_rows_agree(tmp_path, "first")
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE datasets_dealrowcity")
    assert assert_rows_agree(tmp_path, "after") == first
    assert formatted[-1] == {"manaus": 1, "sao-paulo": 8}


def test_a_change_committed_after_the_snapshot_waits_for_the_next_export(world, tmp_path):
    """The refresh forgets only the changes its snapshot sees: one committed meanwhile, by
    another connection, is formatted by the next export."""
    assert_rows_agree(tmp_path, "first")
    deal = world.deals.regular

    def other_writer():
        try:
            Deal.objects.filter(pk=deal.pk).update(price_cents=1490)
        finally:
            connection.close()

    with export_snapshot() as own:
        assert own
        City.objects.count()  # the snapshot is taken
        writer = threading.Thread(target=other_writer)
        writer.start()
        writer.join()
        cities = list(City.objects.filter(active=True).order_by("slug"))
        refreshed = pgcopy.refresh_rows(cities, {f.id: f for f in Format.objects.all()})
        assert deal.pk not in refreshed.changed
    assert RowChange.objects.filter(kind="deal", row_id=deal.pk).exists()
    files = assert_rows_agree(tmp_path, "next")
    assert b"14.90" in files["sao-paulo/deals.csv"]


def test_the_price_index_is_computed_beside_the_files(world, tmp_path, monkeypatch):
    """On a second connection sharing the export's snapshot, while the export's own one
    writes the files: the same cells as inside one transaction."""
    from datasets import services

    backends: dict[str, set[int]] = {"index": set(), "export": set()}
    index, rows_of = services.price_index, pgcopy.refresh_rows

    def pid() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    def spy_index(**kwargs):
        backends["index"].add(pid())
        return index(**kwargs)

    def spy_rows(cities, formats, tick=None):
        backends["export"].add(pid())
        return rows_of(cities, formats, tick)

    monkeypatch.setattr(services, "price_index", spy_index)
    monkeypatch.setattr(pgcopy, "refresh_rows", spy_rows)
    datasets_export(directory=tmp_path / "beside", progress=False)
    assert len(backends["index"]) == 1 and len(backends["export"]) == 1
    assert backends["index"] != backends["export"]
    with transaction.atomic():
        datasets_export(directory=tmp_path / "inside", progress=False)
    beside, inside = tree(tmp_path / "beside"), tree(tmp_path / "inside")
    for name in ("sao-paulo/price-index.json", "manaus/price-index.csv"):
        assert beside[name] == inside[name]
    assert b'"month":"2026-10"' in beside["sao-paulo/price-index.json"]


def test_a_second_export_waits_for_the_first(world, tmp_path):
    """One export at a time keeps the rows: a second one waits on the lock longer than its
    session's statement timeout (the API's), then exports."""
    started, done = threading.Event(), []

    def second():
        try:
            with connection.cursor() as cursor:  # the session's own timeout: short
                cursor.execute("SET statement_timeout = 500")
            started.set()
            done.append(datasets_export(directory=tmp_path / "second", progress=False))
        finally:
            connection.close()

    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")
        cursor.execute("SELECT pg_advisory_lock(%s)", [EXPORT_LOCK])
    try:
        thread = threading.Thread(target=second)
        thread.start()
        started.wait(5)
        thread.join(timeout=1.5)
        assert thread.is_alive() and not done  # waiting on the lock
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [EXPORT_LOCK])
    thread.join(timeout=60)
    assert done and done[0].counts["sao-paulo"]["deals"] == 8


def test_many_changes_format_every_city_whole(world, tmp_path, formatted, monkeypatch):
    first = assert_rows_agree(tmp_path, "first")
    monkeypatch.setattr(pgcopy, "BULK_CHANGES", 2)
    Deal.objects.filter(pk__in=[world.deals.regular.pk, world.deals.half.pk]).update(
        confirmations=7
    )
    Deal.objects.filter(pk=world.deals.manaus.pk).update(confirmations=7)
    after = assert_rows_agree(tmp_path, "after")
    assert formatted[-1] == {"manaus": 1, "sao-paulo": 8}
    assert after != first and b'"confirmations":7' in after["manaus/deals.json"]
    assert not RowChange.objects.exists()


def _insert_prices(world, count: int) -> None:
    """`count` prices at Zé's bar in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO beers_deal (city_id, venue_id, format_id, volume_ml, units, packaging,
                                    kind, price_cents, conditions, schedules, verified_at,
                                    created_at, confirmations, open_disputes, status, credit)
            SELECT %s, %s, %s, 600, 1, 'single', 'regular', 500 + g, '', '[]'::jsonb, now(),
                   now(), 0, 0, 'published', ''
            FROM generate_series(1, %s) g""",
            [world.sp.pk, world.ze.pk, world.garrafa.pk, count],
        )
        cursor.execute("ANALYZE beers_deal")  # as autovacuum soon would


@pytest.fixture
def no_timeout():
    """The session's statement timeout (the API's 5 s) lifted: the export formatted afresh
    runs in the test's own transaction, and 50k prices are a batch job."""
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")
    yield
    with connection.cursor() as cursor:
        cursor.execute("RESET statement_timeout")


def test_a_statement_of_many_rows_is_noted_once(world, tmp_path, formatted, no_timeout):
    """A bulk load (more rows in one statement than the export patches) notes one change,
    not one per price, and every city is formatted whole; a statement of as many rows as the
    export patches is noted row by row, and patched."""
    assert_rows_agree(tmp_path, "first")
    bulk = pgcopy.BULK_CHANGES
    _insert_prices(world, bulk + 1)
    assert list(RowChange.objects.values_list("kind", "row_id")) == [("bulk", 0)]
    loaded = assert_rows_agree(tmp_path, "loaded")
    assert formatted[-1] == {"manaus": 1, "sao-paulo": 8 + bulk + 1}
    assert loaded["sao-paulo/deals.csv"].count(b"\r\n") == 1 + 8 + bulk + 1
    assert not RowChange.objects.exists()

    first_loaded = Deal.objects.order_by("-pk").values_list("pk", flat=True)[bulk]
    Deal.objects.filter(pk__gt=first_loaded).update(confirmations=37)
    assert RowChange.objects.filter(kind="deal").count() == bulk
    changed = assert_rows_agree(tmp_path, "changed")
    assert formatted[-1] == {"manaus": 0, "sao-paulo": bulk}
    assert changed["sao-paulo/deals.json"].count(b'"confirmations":37') == bulk


def test_new_label_code_formats_every_city_whole(world, tmp_path, formatted, monkeypatch):
    """A deploy that labels servings or schedules otherwise (beers.labels, the catalogues)
    changes every city's recipe."""
    assert_rows_agree(tmp_path, "first")
    assert_rows_agree(tmp_path, "same")
    assert formatted[-1] == {"manaus": 0, "sao-paulo": 0}
    monkeypatch.setattr(pgcopy, "_label_sources", lambda: "another release")
    assert_rows_agree(tmp_path, "deployed")
    assert formatted[-1] == {"manaus": 1, "sao-paulo": 8}


def test_a_bairro_renamed_while_a_price_in_it_is_added_reaches_that_price(world, tmp_path):
    """The rename commits after an export whose snapshot saw the new price (which was added
    and committed while the rename was open): the next export writes the new slug on it. (A
    bar's own slug cannot be renamed so: its unique key locks the bar against new prices.)"""
    assert_rows_agree(tmp_path, "first")
    renamed, commit = threading.Event(), threading.Event()

    def rename():
        try:
            with transaction.atomic():
                Neighbourhood.objects.filter(pk=world.aspas.neighbourhood_id).update(
                    slug="pinheiros-renomeado"
                )
                renamed.set()
                commit.wait(30)
        finally:
            connection.close()

    renamer = threading.Thread(target=rename)
    renamer.start()
    assert renamed.wait(30)
    price = deal_create(venue=world.aspas, format=world.lata, beer=None, price_cents=555)
    during = assert_rows_agree(tmp_path, "during")
    assert b"renomeado" not in during["sao-paulo/deals.csv"]
    commit.set()
    renamer.join(30)
    after = assert_rows_agree(tmp_path, "after")
    line = next(
        row
        for row in after["sao-paulo/deals.csv"].split(b"\r\n")
        if row.startswith(b"%d," % price.pk)
    )
    assert b",pinheiros-renomeado," in line


def test_a_truncate_formats_every_city_whole(world, tmp_path, formatted):
    """Ids may be reused after a TRUNCATE, and it notes no rows: no row of before stays."""
    assert_rows_agree(tmp_path, "first")
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE beers_deal RESTART IDENTITY CASCADE")
    deal_create(venue=world.ze, format=world.garrafa, beer=None, price_cents=1000)
    files = assert_rows_agree(tmp_path, "after")
    assert files["sao-paulo/deals.csv"].count(b"\r\n") == 2  # the header and the new price
    assert formatted[-1] == {"manaus": 0, "sao-paulo": 1}


def test_the_rows_show_a_progress_bar_only_when_asked(world, tmp_path, capsys):
    datasets_export(directory=tmp_path / "quiet", progress=False)
    assert capsys.readouterr().err == ""
    datasets_export(directory=tmp_path / "bar", progress=True)
    assert "rows: 100%" in capsys.readouterr().err


def test_an_export_that_keeps_no_rows_leaves_none(world, tmp_path, settings, formatted):
    """DATASETS_COPY off on PostgreSQL: the rows and the noted changes go, so nothing piles
    up and no row outlives the changes it missed."""
    assert_rows_agree(tmp_path, "first")
    settings.DATASETS_COPY = False
    Deal.objects.filter(pk=world.deals.regular.pk).update(price_cents=1590)
    datasets_export(directory=tmp_path / "portable", progress=False)
    assert not (DealRowCity.objects.exists() or RowChange.objects.exists())
    settings.DATASETS_COPY = True
    assert b"15.90" in assert_rows_agree(tmp_path, "back")["sao-paulo/deals.csv"]
    assert formatted[-1] == {"manaus": 1, "sao-paulo": 8}
