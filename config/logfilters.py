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
