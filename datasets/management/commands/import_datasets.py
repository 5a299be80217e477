"""`python manage.py import_datasets DIR`: load a dataset tree (datasets.md layout)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from datasets.importer import ImportRefused, datasets_import
from datasets.management.quiet import is_quiet, quiet_logs


class Command(BaseCommand):
    help = (
        "Load a tree of open dataset files (index.json, cities.json, catalog.json, "
        "{city}/...) into the database: upsert by id / slug, ids kept, all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--mirror",
            action="store_true",
            help=(
                "follow the tree's removals too: delete the bars, retire the prices and "
                "deactivate the cities the database has and the tree does not list"
            ),
        )

    def handle(self, *args, directory: Path, mirror: bool = False, **options):
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a folder")
        quiet = is_quiet(self, options)
        try:
            with quiet_logs(quiet):
                result = datasets_import(directory, mirror=mirror)
        except ImportRefused as exc:
            raise CommandError(f"import refused, nothing changed: {exc}") from None
        if quiet:
            return
        for note in result.notes:
            self.stderr.write(note)
        self.stdout.write(
            f"imported {result.cities} cities, {result.brands} brands, {result.beers} beers, "
            f"{result.formats} formats, {result.neighbourhoods} bairros, {result.venues} bars, "
            f"{result.deals} prices ({result.checks_created} checks added)"
        )
        if mirror:
            self.stdout.write(
                f"withdrawn: {result.withdrawn_cities} cities, {result.withdrawn_venues} bars, "
                f"{result.withdrawn_deals} prices, {result.withdrawn_neighbourhoods} bairros, "
                f"{result.withdrawn_catalog} brands, beers or formats"
            )
