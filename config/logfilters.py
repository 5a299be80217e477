"""Logging filters: what must never reach a log line."""

import logging
import re

# The opt-out token authorises an opt-out by itself (interface.md, Authentication): a log
# line with an opt-out address would hand it to whoever reads the logs.
_OPT_OUT_TOKEN = re.compile(r"(/optout/)[^/\s'\"?]+")


class RedactSecrets(logging.Filter):
    """Masks opt-out tokens in a record's message (Django logs the path of a failed request,
    "Internal Server Error: /api/v1/optout/<token>")."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _OPT_OUT_TOKEN.sub(r"\1[redacted]", message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


class ThrottleUnavailable(logging.Filter):
    """Lets one 503 record a minute through (per process): in degraded mode or with the
    database away every live read answers 503, and Django logs each as an ERROR; the first
    says the service is degraded, the rest would flood the log."""

    interval = 60.0

    def __init__(self):
        super().__init__()
        self._last = float("-inf")

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) != 503:
            return True
        if record.created - self._last < self.interval:
            return False
        self._last = record.created
        return True
