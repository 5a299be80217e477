import csv
import json
import re
from pathlib import Path

from django.db import transaction

from beers.models import Beer, Brand, City, Deal, Format, Neighbourhood, PriceCheck, Venue
from datasets.services import datasets_export

UPDATED_AT = re.compile(rb'"updated_at":"[^"]*"')


def read_json(path: Path) -> dict:
    # The standard library parser refuses NaN only when told to: make it.
    def no_constants(name):
        raise ValueError(f"{name} in {path}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constants)


def read_csv(path: Path) -> tuple[list[str], list[dict]]:
    raw = path.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), f"{path} has a BOM"
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root, `updated_at` blanked."""
    return {
        str(p.relative_to(root)): UPDATED_AT.sub(b'"updated_at":""', p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def assert_same_trees(first: Path, second: Path) -> None:
    """The same files with the same bytes (the export's trees, updated_at aside)."""
    a, b = tree(first), tree(second)
    assert list(a) == list(b)
    for name in a:
        assert a[name] == b[name], name


def wipe_database() -> None:
    PriceCheck.objects.all().delete()
    Deal.objects.all().delete()
    Venue.objects.all().delete()
    Neighbourhood.objects.all().delete()
    City.objects.all().delete()
    Beer.objects.all().delete()
    Brand.objects.all().delete()
    Format.objects.all().delete()


def export_both(tmp_path, name: str) -> tuple[dict, dict]:
    """The files through the export rows, and formatted afresh."""
    datasets_export(directory=tmp_path / name, progress=False)
    with transaction.atomic():
        datasets_export(directory=tmp_path / f"{name}-afresh", progress=False)
    return tree(tmp_path / name), tree(tmp_path / f"{name}-afresh")


def assert_rows_agree(tmp_path, name: str) -> dict:
    """The export through its rows (and its kept files) gives the files formatted afresh."""
    cached, afresh = export_both(tmp_path, name)
    assert cached == afresh
    return cached


def rewrite_csv(path, change) -> None:
    """A CSV file rewritten as `change` turns its table (header first) into another."""
    with open(path, newline="", encoding="utf-8") as fh:
        table = list(csv.reader(fh))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\r\n").writerows(change(table))


def set_cells(path, where: dict, **cells) -> None:
    """The CSV twin of an edited JSON item edited alike: in each row whose columns hold
    `where`, the named cells set (by column name, whatever the columns' order)."""

    def change(table):
        at = {name: i for i, name in enumerate(table[0])}
        for row in table[1:]:
            if row and all(row[at[k]] == str(v) for k, v in where.items()):
                for name, value in cells.items():
                    row[at[name]] = value
        return table

    rewrite_csv(path, change)
