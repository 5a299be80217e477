from django.core.management.base import BaseCommand

from beers.demo import demo_load
from beers.models import City
from datasets.services import datasets_schedule_export


class Command(BaseCommand):
    help = (
        "Load the demo cities, bairros, bars and prices. Idempotent: a second run creates only "
        "what is missing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="Load only when the database has no city yet (used by `make run`).",
        )

    def handle(self, *args, if_empty: bool, **options):
        if if_empty and City.objects.exists():
            self.stdout.write("load_demo: cities exist already; nothing loaded.")
            return
        created = demo_load()
        if any(created.values()):
            # answers cached before (an empty catalogue, say) are stale now, and so are the
            # files a server beside this command serves (exported at once without a broker)
            datasets_schedule_export()
        summary = ", ".join(
            f"{name} {created[name]}"
            for name in (
                "cities",
                "neighbourhoods",
                "formats",
                "brands",
                "beers",
                "venues",
                "deals",
                "price_checks",
            )
        )
        self.stdout.write(f"load_demo: created {summary}.")
