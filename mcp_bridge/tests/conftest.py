"""A live server for the MCP tests: uvicorn running config.asgi:application (Django and /mcp,
with its lifespan) in a thread on a free loopback port, over the demo data in PostgreSQL."""

import socket
import threading
import time

import httpx
import pytest
from django.core.management import call_command
from django.db import connection


class LiveServer:
    def __init__(self):
        import uvicorn

        from config.asgi import application

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.mcp_url = f"{self.base}/mcp"
        config = uvicorn.Config(
            application,
            host="127.0.0.1",
            port=self.port,
            lifespan="on",
            proxy_headers=False,  # as README's command: the app reads trusted proxies itself
            log_level="warning",
            access_log=False,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


def _refuse_a_real_database() -> None:
    """pytest-django creates the test database only when a collected test carries the django_db
    mark; without one, `live` would load and flush the developer's own database."""
    name = str(connection.settings_dict["NAME"])
    in_memory_test_db = connection.vendor == "sqlite" and connection.is_in_memory_db()
    if not (name.startswith("test_") or in_memory_test_db):
        raise RuntimeError(f"refusing to load and flush {name!r}: mark the tests django_db")


@pytest.fixture(scope="module")
def live(django_db_setup, django_db_blocker):
    """The server and the demo data, committed (the server's threads have their own
    connections, so a test transaction would hide the data); flushed after the module.

    Tests using it carry the plain django_db mark, so that the test database exists; their
    own transaction only wraps what the test thread writes (nothing), never the server's."""
    from beers.demo import demo_load
    from beers.models import City
    from beers.services import price_index_close_months

    with django_db_blocker.unblock():
        _refuse_a_real_database()
        demo_load()
        for city in City.objects.filter(active=True):  # as `make run`'s first export does
            price_index_close_months(city=city)
        try:
            with LiveServer() as server:
                yield server
        finally:
            call_command("flush", verbosity=0, interactive=False)


@pytest.fixture
def api(live):
    with httpx.Client(base_url=live.base, timeout=10) as client:
        yield client
