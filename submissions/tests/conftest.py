"""Fixtures of the write endpoints: a small world, a JSON client, siteverify on loopback."""

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest
from django.test import Client
from PIL import Image

from beers.models import City, Deal, Format, Venue
from beers.services import deal_create
from submissions.turnstile import ALWAYS_PASS


def jpeg_data_uri(size: tuple[int, int] = (16, 16), color=(200, 120, 30)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()


@pytest.fixture
def writes_open(settings):
    """Writes configured with the always-pass test secret, burst limit off."""
    settings.TURNSTILE_SECRET_KEY = ALWAYS_PASS
    settings.TURNSTILE_HOSTNAMES = []
    settings.WRITE_RATE_LIMIT = "off"
    settings.WRITE_DAILY_CAP = 20
    settings.TRUSTED_PROXY_CIDRS = []
    return settings


class World:
    def __init__(self):
        self.city = City.objects.create(
            slug="sao-paulo",
            name="São Paulo",
            state="SP",
            timezone="America/Sao_Paulo",
            lat=-23.55,
            lng=-46.63,
            active=True,
        )
        self.inactive = City.objects.create(
            slug="manaus",
            name="Manaus",
            state="AM",
            timezone="America/Manaus",
            lat=-3.1,
            lng=-60.0,
            active=False,
        )
        self.other = City.objects.create(
            slug="recife",
            name="Recife",
            state="PE",
            timezone="America/Recife",
            lat=-8.05,
            lng=-34.9,
            active=True,
        )
        self.venue = Venue.objects.create(
            city=self.city,
            slug="bar-do-ze",
            name="Bar do Zé",
            kind="boteco",
            lat=-23.55,
            lng=-46.63,
        )
        self.other_venue = Venue.objects.create(
            city=self.other, slug="bar-recife", name="Bar Recife", kind="bar", lat=-8.05, lng=-34.9
        )
        self.inactive_venue = Venue.objects.create(
            city=self.inactive,
            slug="bar-manaus",
            name="Bar Manaus",
            kind="bar",
            lat=-3.1,
            lng=-60.0,
        )
        self.format = Format.objects.create(
            code="garrafa_600",
            type="garrafa",
            volume_ml=600,
            label_pt="garrafa 600 ml",
            label_en="600 ml bottle",
        )
        self.deal = deal_create(venue=self.venue, format=self.format, price_cents=1290)
        self.other_deal = deal_create(venue=self.other_venue, format=self.format, price_cents=1500)

    def fresh_deal(self, **kwargs) -> Deal:
        return deal_create(venue=self.venue, format=self.format, price_cents=1000, **kwargs)


@pytest.fixture
def world(db):
    return World()


class JsonClient:
    def __init__(self, ip: str = "203.0.113.7"):
        self.client = Client(REMOTE_ADDR=ip)

    def post(
        self,
        path: str,
        body=None,
        *,
        raw: bytes | str | None = None,
        content_type: str = "application/json",
        **extra,
    ):
        data = raw if raw is not None else json.dumps(body)
        return self.client.post(path, data=data, content_type=content_type, **extra)

    def get(self, path: str, **extra):
        return self.client.get(path, **extra)


@pytest.fixture
def api():
    return JsonClient()


class Siteverify:
    """A tiny siteverify on loopback: answers from a queue (default: success)."""

    def __init__(self):
        self.answers: list[tuple[int, dict | str]] = []
        self.default: tuple[int, dict | str] = (
            200,
            {"success": True, "hostname": "breja.example", "error-codes": []},
        )
        self.requests: list[dict[str, list[str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                outer.requests.append(parse_qs(self.rfile.read(length).decode()))
                status, answer = outer.answers.pop(0) if outer.answers else outer.default
                payload = answer if isinstance(answer, str) else json.dumps(answer)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/turnstile/v0/siteverify"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def siteverify(writes_open):
    server = Siteverify()
    writes_open.TURNSTILE_SECRET_KEY = "0x4AAAAAAA-real-looking-secret"
    writes_open.TURNSTILE_SITEVERIFY_URL = server.url
    writes_open.TURNSTILE_TIMEOUT = 2.0
    yield server
    server.close()


@pytest.fixture
def celery_eager():
    """Run tasks in-process (the suite may have a Redis broker without a worker)."""
    from config.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = before
