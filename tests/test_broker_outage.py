"""A broker that takes the connection and never answers (a hung Redis): queueing a task gives
up within seconds instead of holding the request (an opt-out's POST answered after 753 s)."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

QUEUE_ONE = """
import json, time
import django
django.setup()
from outreach.tasks import optout_confirmation_send
started = time.monotonic()
try:
    optout_confirmation_send.delay(1)
    error = None
except Exception as exc:
    error = type(exc).__name__
print(json.dumps({"seconds": time.monotonic() - started, "error": error}))
"""


def test_a_hung_broker_refuses_a_task_within_seconds():
    with socket.socket() as hung:  # listens, never accepts: the kernel completes connections
        hung.bind(("127.0.0.1", 0))
        hung.listen(64)
        port = hung.getsockname()[1]
        env = {
            **os.environ,
            "DEBUG": "1",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0",
            "CELERY_TASK_ALWAYS_EAGER": "false",
        }
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-c", QUEUE_ONE],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-2000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["error"] is not None  # not queued: the caller carries on (robust on_commit)
    assert answer["seconds"] < 8, (answer, elapsed)
