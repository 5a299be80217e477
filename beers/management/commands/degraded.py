import argparse

from django.core.management.base import BaseCommand

from beers import degraded


def seconds(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("a number of seconds, 1 or more")
    return value


class Command(BaseCommand):
    help = "Switch degraded mode on or off (live reads answer 503, writes close)."

    def add_arguments(self, parser):
        parser.add_argument("state", choices=["on", "off", "status"])
        parser.add_argument("--retry-after", type=seconds, default=degraded.DEFAULT_RETRY_AFTER)

    def handle(self, *args, state, retry_after, **options):
        if state == "on":
            degraded.switch_on(retry_after)
        elif state == "off":
            degraded.switch_off()
        current = degraded.switch_state()
        self.stdout.write(f"degraded: {'on' if current else 'off'}")
