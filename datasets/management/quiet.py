"""What export_datasets and import_datasets print: a progress bar and a summary on a terminal,
nothing off one (cron, a pipe) unless something fails."""

import contextlib
import logging

from django.core.management.base import BaseCommand


@contextlib.contextmanager
def quiet_logs(quiet: bool):
    """Off a terminal (cron, a pipe) the commands say nothing unless something fails:
    datasets' own INFO lines are held back too (`-v 2` shows them), and so are Celery's about
    the export an import schedules, which runs in the command's process where tasks run
    eagerly (`make run`)."""
    loggers = [logging.getLogger(name) for name in ("datasets", "celery")]
    levels = [logger.level for logger in loggers]
    if quiet:
        for logger in loggers:
            logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def is_quiet(command: BaseCommand, options: dict) -> bool:
    return options["verbosity"] < 2 and not command.stdout.isatty()
