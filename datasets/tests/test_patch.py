"""The kept copies of the deals files (datasets.patch, PostgreSQL): the next export patches
them, and its files are byte for byte those formatted afresh; a copy that is not what it
should be is never used."""

import os
import random

import pytest
from django.db import connection

from beers.models import City, Deal, Venue
from beers.services import deal_create
from datasets import patch
from datasets.models import DealRowCity
from datasets.services import datasets_export

from .helpers import assert_rows_agree

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the rows are PostgreSQL's"),
]


@pytest.fixture
def patched(monkeypatch):
    """The ids of the cities whose deals files each export patched."""
    calls: list[int] = []
    apply = patch.apply

    def spy(base, changed, new_rows, files, tick=None):
        calls.append(int(base.folder.parent.name))
        return apply(base, changed, new_rows, files, tick)

    monkeypatch.setattr(patch, "apply", spy)
    return calls


def kept_folders() -> dict[str, list[str]]:
    root = patch.work_dir()
    return {city.name: sorted(p.name for p in city.iterdir()) for city in root.iterdir()}


def tokens() -> dict[str, list[str]]:
    return {str(c.city_id): [c.token] for c in DealRowCity.objects.all()}


def test_the_next_export_patches_the_files_kept_by_the_last(world, tmp_path, patched):
    assert_rows_agree(tmp_path, "first")
    assert patched == []  # formatted whole: nothing to patch from
    assert kept_folders() == tokens()
    kept = patch.work_dir() / str(world.sp.pk) / tokens()[str(world.sp.pk)][0]
    assert (kept / "deals.json").stat().st_ino == (
        tmp_path / "first/sao-paulo/deals.json"
    ).stat().st_ino

    Deal.objects.filter(pk=world.deals.regular.pk).update(price_cents=1390)
    before = tokens()
    after = assert_rows_agree(tmp_path, "changed")
    assert sorted(patched) == sorted([world.sp.pk, world.manaus.pk])
    assert b"13.90" in after["sao-paulo/deals.csv"]
    assert tokens() != before  # the rows changed: a new token, a new copy, the old one gone
    assert kept_folders() == tokens()

    patched.clear()
    assert_rows_agree(tmp_path, "unchanged")
    assert sorted(patched) == sorted([world.sp.pk, world.manaus.pk])


def _many_prices(world, count: int) -> list[Deal]:
    bars = [world.ze, world.aspas, world.sem_bairro]
    return [
        deal_create(
            venue=bars[i % 3],
            format=world.garrafa if i % 2 else world.lata,
            beer=None,
            brand=world.brahma,
            price_cents=700 + i * 7,
        )
        for i in range(count)
    ]


def test_patches_of_every_shape_give_the_files_formatted_afresh(
    world, tmp_path, patched, monkeypatch
):
    """Blocks of 3 rows, so changes fall on their edges: the first and last rows dropped,
    changed and added, runs of changes, every row of a bar gone (venues.json loses it), the
    city emptied and filled again."""
    monkeypatch.setattr(patch, "BLOCK", 3)
    _many_prices(world, 30)
    assert_rows_agree(tmp_path, "start")
    rng = random.Random(7)

    def sp_prices():
        return list(Deal.objects.filter(city=world.sp).order_by("id"))

    def drop_first_and_last():
        prices = sp_prices()
        Deal.objects.filter(pk__in=[prices[0].pk, prices[-1].pk]).delete()

    def change_first_last_and_a_run():
        prices = sp_prices()
        chosen = [prices[0].pk, prices[-1].pk, *[p.pk for p in prices[5:12]]]
        for pk in chosen:
            Deal.objects.filter(pk=pk).update(price_cents=rng.randrange(300, 9000))

    def add_at_the_end():
        _many_prices(world, 4)

    def change_at_random():
        for price in rng.sample(sp_prices(), 10):
            Deal.objects.filter(pk=price.pk).update(price_cents=price.price_cents + 1)

    def a_bar_loses_every_price():
        Deal.objects.filter(venue=world.aspas).delete()

    def a_price_moves_in_from_another_city():
        bar = Venue.objects.get(city=world.manaus)
        Deal.objects.filter(pk=world.deals.manaus.pk).update(city=world.sp, venue=world.ze)
        assert bar  # Manaus is left with no price

    def empty_the_city():
        Deal.objects.filter(city=world.sp).delete()

    def fill_it_again():
        _many_prices(world, 8)

    edits = [
        drop_first_and_last,
        change_first_last_and_a_run,
        add_at_the_end,
        change_at_random,
        a_bar_loses_every_price,
        a_price_moves_in_from_another_city,
        empty_the_city,
        fill_it_again,
    ]
    previous = None
    for edit in edits:
        patched.clear()
        edit()
        files = assert_rows_agree(tmp_path, edit.__name__)
        assert world.sp.pk in patched, edit.__name__
        assert files != previous, edit.__name__
        previous = files
        if edit is a_bar_loses_every_price:
            assert b'"slug":"boteco-aspas-virgula"' not in files["sao-paulo/venues.json"]
            assert b'"slug":"boteco-aspas-virgula"' in files["sao-paulo/venues-all.json"]


def test_a_kept_copy_changed_since_is_not_used(world, tmp_path, patched):
    assert_rows_agree(tmp_path, "first")
    kept = patch.work_dir() / str(world.sp.pk) / tokens()[str(world.sp.pk)][0]
    # The tree it links to is edited in place: the copy is no longer what its index says.
    with open(tmp_path / "first/sao-paulo/deals.csv", "ab") as fh:
        fh.write(b"1,2,3\r\n")
    assert patch.Base.open(kept) is None
    Deal.objects.filter(pk=world.deals.regular.pk).update(price_cents=1390)
    assert b"13.90" in assert_rows_agree(tmp_path, "after")["sao-paulo/deals.csv"]
    assert patched == [world.manaus.pk]  # São Paulo was read whole, and kept again
    assert patch.Base.open(patch.work_dir() / str(world.sp.pk) / tokens()[str(world.sp.pk)][0])


def test_a_copy_cut_short_while_read_fails_the_export(world, tmp_path, monkeypatch):
    """Its index passed, its files then changed: the export fails rather than write wrong
    files, and the next one reads the city whole."""
    assert_rows_agree(tmp_path, "first")
    open_base = patch.Base.open

    def cut(folder):
        base = open_base(folder)
        if base is not None:
            os.truncate(folder / "deals.json", base.json_start + 10)
        return base

    monkeypatch.setattr(patch.Base, "open", staticmethod(cut))
    with pytest.raises(patch.Stale):
        datasets_export(directory=tmp_path / "cut", progress=False)
    monkeypatch.undo()
    assert_rows_agree(tmp_path, "next")


def test_a_failed_export_leaves_the_copy_to_patch(world, tmp_path, patched, monkeypatch):
    """Its transaction rolled back (tokens as they were): the copy it made is not used, the
    one before is, and the next export leaves only its own."""
    from datasets import services

    assert_rows_agree(tmp_path, "first")
    before = tokens()
    Deal.objects.filter(pk=world.deals.regular.pk).update(price_cents=1390)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    with monkeypatch.context() as broken_export, pytest.raises(RuntimeError):
        broken_export.setattr(services, "_neighbourhoods", broken)
        datasets_export(directory=tmp_path / "broken", progress=False)
    assert tokens() == before
    patched.clear()
    assert all(len(folders) >= 1 for folders in kept_folders().values())
    files = assert_rows_agree(tmp_path, "next")
    assert b"13.90" in files["sao-paulo/deals.csv"]
    assert sorted(patched) == sorted([world.sp.pk, world.manaus.pk])
    assert kept_folders() == tokens()


def test_a_city_out_of_the_files_loses_its_copy(world, tmp_path):
    assert_rows_agree(tmp_path, "first")
    City.objects.filter(pk=world.manaus.pk).update(active=False)
    datasets_export(directory=tmp_path / "without", progress=False)
    assert list(kept_folders()) == [str(world.sp.pk)]


def test_an_export_to_storage_leaves_only_its_copies(world, settings):
    datasets_export(progress=False)
    datasets_export(progress=False)
    assert sorted(p.name for p in settings.DATASETS_WORK_DIR.iterdir()) == [
        connection.settings_dict["NAME"]
    ]


def test_an_export_that_keeps_no_rows_keeps_no_copies(world, tmp_path, settings):
    assert_rows_agree(tmp_path, "first")
    settings.DATASETS_COPY = False
    datasets_export(directory=tmp_path / "portable", progress=False)
    assert not patch.work_dir().exists()
