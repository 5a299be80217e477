"""Transactions side by side on real connections (PostgreSQL): one held open while another
runs into its locks, for tests of what two requests or two moderators do at once."""

import threading

from django.db import connections, transaction


class Held(threading.Thread):
    """`work` in a transaction of its own connection, kept open (its locks held) until
    `release` is set; `done` once it committed or failed (`error`)."""

    def __init__(self, work, release: threading.Event | None = None):
        super().__init__(daemon=True)
        self.work, self.release = work, release or threading.Event()
        self.worked, self.done = threading.Event(), threading.Event()
        self.result = self.error = None

    def run(self):
        try:
            with transaction.atomic():
                self.result = self.work()
                self.worked.set()
                self.release.wait(10)
        except Exception as exc:  # kept for the test to look at
            self.error = exc
        finally:
            self.done.set()
            connections.close_all()


def started(held: Held, settle: float = 0.4) -> Held:
    """Start it and give it time to run as far as it can (to its end, or to a lock)."""
    held.start()
    held.worked.wait(settle)
    return held


def finish(*held: Held) -> None:
    for each in held:
        each.release.set()
    for each in held:
        each.join(15)
        assert each.done.is_set()
