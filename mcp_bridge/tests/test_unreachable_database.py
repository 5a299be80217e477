"""A real server whose PostgreSQL does not answer: the tools answer a tool error that points
at the static datasets, like the API's 503; the converter keeps working."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .test_tools import call, error_text, ok

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Remote:
    def __init__(self, base: str):
        self.mcp_url = base + "/mcp"


@pytest.fixture
def server_without_database(tmp_path):
    port, dead = _free_port(), _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{dead}/breja",
        "DEBUG": "1",
        "DB_CONNECT_TIMEOUT": "1",
        "DB_POOL_TIMEOUT": "1",
        "REDIS_URL": "",
        "DEGRADED_FLAG_PATH": str(tmp_path / "flag.json"),
        "LOG_LEVEL": "ERROR",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                httpx.get(base + "/api/v1/status", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield Remote(base)
    finally:
        server.terminate()
        server.wait(10)


def test_tools_point_at_the_datasets_when_the_database_does_not_answer(server_without_database):
    text = error_text(call(server_without_database, "search_deals", {"city": "sao-paulo"}))
    assert "/api/v1/index.json" in text
    assert (
        ok(call(server_without_database, "price_per_litre", {"price_brl": 9, "volume_ml": 600}))[
            "price_per_litre_brl"
        ]
        == 15.0
    )
