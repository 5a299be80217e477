"""`python manage.py export_datasets [--dir DIR] [--if-changed]`: write the open datasets."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from datasets.management.quiet import is_quiet, quiet_logs
from datasets.services import datasets_export, datasets_export_if_changed


class Command(BaseCommand):
    help = (
        "Write every open dataset file (datasets.md) to the datasets storage as a new "
        "generation, or with --dir as a plain tree in a folder."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dir", type=Path, help="write a plain tree into this folder")
        parser.add_argument(
            "--if-changed",
            action="store_true",
            help="only when the data changed since the served export",
        )

    def handle(self, *args, dir=None, if_changed=False, **options):
        quiet = is_quiet(self, options)
        if dir is not None:
            try:
                dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CommandError(f"{dir}: cannot be made a folder ({exc.strerror})") from None
        with quiet_logs(quiet):
            if if_changed and dir is None:
                result = datasets_export_if_changed()
            else:
                result = datasets_export(directory=dir)
        if quiet:
            return
        if result is None:
            self.stdout.write("datasets: unchanged, nothing exported")
            return
        where = result.generation or str(dir)
        total = sum(c["deals"] for c in result.counts.values())
        self.stdout.write(
            f"datasets: {len(result.counts)} cities, {total} prices -> {where} "
            f"({result.seconds:.1f}s)"
        )
