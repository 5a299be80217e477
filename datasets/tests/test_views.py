"""Serving the files: content types, caching, ETag/304, CORS, HEAD, 404 — without the database."""

import datetime as dt
import hashlib
import os
import tempfile
import time
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from datasets import generations
from datasets.services import datasets_export
from datasets.storage import datasets_storage
from tests.live import free_port, served

from .conftest import at

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def exported(world):
    return datasets_export(progress=False)


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/api/v1/index.json", "application/json"),
        ("/api/v1/cities.json", "application/json"),
        ("/api/v1/catalog.json", "application/json"),
        ("/api/v1/sao-paulo/deals.json", "application/json"),
        ("/api/v1/sao-paulo/deals.csv", "text/csv; charset=utf-8"),
        ("/api/v1/manaus/venues-all.csv", "text/csv; charset=utf-8"),
        ("/api/v1/manaus/price-index.json", "application/json"),
        ("/api/v1/sao-paulo/neighbourhoods.geojson", "application/geo+json"),
    ],
)
def test_files_are_served_with_type_cache_cors_and_a_strong_etag(
    client, exported, path, content_type
):
    response = client.get(path, HTTP_ORIGIN="https://example.org")
    assert response.status_code == 200
    body = response.content
    rel = path.removeprefix("/api/v1/")
    stored = datasets_storage().open(f"{exported.generation}/{rel}").read()
    assert body == stored
    assert response["Content-Type"] == content_type
    assert response["Cache-Control"] == "public, max-age=300"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["ETag"] == f'"{hashlib.sha256(body).hexdigest()}"'
    assert response["Content-Length"] == str(len(body))
    # a browser script can read the ETag (to send If-None-Match)
    assert "etag" in response["Access-Control-Expose-Headers"].lower()


def test_matching_if_none_match_is_304_and_a_stale_one_is_200(client, exported):
    first = client.get("/api/v1/sao-paulo/deals.csv")
    etag = first["ETag"]
    again = client.get("/api/v1/sao-paulo/deals.csv", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and b"".join(again.streaming_content) == b""
    assert again["ETag"] == etag and again["Cache-Control"] == "public, max-age=300"
    assert "Content-Type" not in again  # it would relabel the cached CSV as HTML
    assert "Content-Length" not in again  # 0 would contradict the 200's (RFC 9110 8.6)
    listed = client.get("/api/v1/sao-paulo/deals.csv", HTTP_IF_NONE_MATCH=f'"x", W/{etag}')
    assert listed.status_code == 304
    stale = client.get("/api/v1/sao-paulo/deals.csv", HTTP_IF_NONE_MATCH='"other"')
    assert stale.status_code == 200


def test_if_modified_since_is_304_unless_older_or_beside_if_none_match(client, exported):
    """RFC 9110 13.1.3: a date no older than Last-Modified is 304; If-None-Match, when sent,
    decides alone (13.2.2)."""
    first = client.get("/api/v1/cities.json")
    modified = first["Last-Modified"]
    since = parsedate_to_datetime(modified)
    for date in (modified, format_datetime(since + dt.timedelta(days=1), usegmt=True)):
        again = client.get("/api/v1/cities.json", HTTP_IF_MODIFIED_SINCE=date)
        assert again.status_code == 304, date
        assert again["ETag"] == first["ETag"] and again["Last-Modified"] == modified
    older = format_datetime(since - dt.timedelta(seconds=1), usegmt=True)
    assert client.get("/api/v1/cities.json", HTTP_IF_MODIFIED_SINCE=older).status_code == 200
    assert client.get("/api/v1/cities.json", HTTP_IF_MODIFIED_SINCE="yesterday").status_code == 200
    both = client.get(
        "/api/v1/cities.json", HTTP_IF_MODIFIED_SINCE=modified, HTTP_IF_NONE_MATCH='"other"'
    )
    assert both.status_code == 200
    assert client.head("/api/v1/cities.json", HTTP_IF_MODIFIED_SINCE=modified).status_code == 304


def test_head_answers_headers_without_a_body(client, exported):
    get = client.get("/api/v1/index.json")
    head = client.head("/api/v1/index.json")
    assert head.status_code == 200 and head.content == b""
    assert head["Content-Length"] == str(len(get.content))
    assert head["ETag"] == get["ETag"] and head["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/curitiba/deals.json",
        "/api/v1/nowhere/deals.csv",
        "/api/v1/sao-paulo/secrets.json",
        "/api/v1/current.json",
        "/api/v1/sao-paulo/manifest.json",
    ],
)
def test_unknown_city_or_file_is_a_json_404(client, exported, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "not_found"


def test_a_404_repeats_a_long_city_cut(client, exported):
    answer = client.get("/api/v1/" + "a" * 10_000 + "/deals.json").json()
    assert answer["message"] == "No dataset file deals.json for city " + "a" * 59 + "…."


def test_other_methods_are_405_json(client, exported):
    response = client.post("/api/v1/index.json")
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


def test_other_methods_are_405_even_before_any_export(client, db):
    response = client.post("/api/v1/sao-paulo/deals.csv")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


def test_before_any_export_the_files_answer_503(client, db):
    response = client.get("/api/v1/index.json")
    assert response.status_code == 503 and "Retry-After" in response


def test_serving_makes_no_database_query(client, exported, django_assert_num_queries):
    with django_assert_num_queries(0):
        for path in (
            "/api/v1/index.json",
            "/api/v1/sao-paulo/deals.json",
            "/api/v1/nowhere/deals.json",
        ):
            client.get(path)


def test_a_new_export_switches_atomically_and_old_generations_are_pruned(client, world, settings):
    settings.DATASETS_GRACE_SECONDS = 0
    storage = datasets_storage()
    first = datasets_export(progress=False, now=at(2026, 11, 23, 10))
    etag_before = client.get("/api/v1/sao-paulo/deals.json")["ETag"]
    world.deals.regular.price_cents = 1390
    world.deals.regular.save()
    second = datasets_export(progress=False, now=at(2026, 11, 23, 10, 5))
    assert client.get("/api/v1/sao-paulo/deals.json")["ETag"] != etag_before
    assert generations.generations(storage) == [first.generation, second.generation]
    third = datasets_export(progress=False, now=at(2026, 11, 23, 10, 10))
    # The one before the current stays for readers that read the old pointer.
    assert generations.generations(storage) == [second.generation, third.generation]
    assert generations.read_pointer(storage)["generation"] == third.generation
    assert not Path(settings.DATASETS_ROOT, first.generation).exists()


def test_grace_period_keeps_recent_generations(world, settings):
    settings.DATASETS_GRACE_SECONDS = 3600
    names = [
        datasets_export(progress=False, now=at(2026, 11, 23, 10, m)).generation for m in (0, 5, 10)
    ]
    assert generations.generations(datasets_storage()) == names


@pytest.fixture
def real_server():
    """uvicorn on loopback, DATABASE_URL pointing at a closed port."""
    env = {
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/nowhere",
        "DB_CONNECT_TIMEOUT": "1",
        "DATASETS_ROOT": str(settings.DATASETS_ROOT),
        "ENVIRONMENT": "development",
        "DEBUG": "0",
        "DJANGO_SECRET_KEY": "test-only",
        "REDIS_URL": "",
    }
    with tempfile.TemporaryFile() as log:
        with served(
            env,
            "--lifespan",
            "off",
            "--log-level",
            "warning",
            ready="/api/v1/index.json",
            output=log,
        ) as base:
            yield base
        log.seek(0)
        out = log.read()
    assert b"Traceback" not in out, out.decode()
    assert b"synchronous iterators" not in out, out.decode()  # streamed, not read whole


@pytest.mark.live
def test_files_are_served_by_a_real_server_whose_database_is_unreachable(exported, real_server):
    base = real_server
    index = httpx.get(f"{base}/api/v1/index.json", timeout=5)
    assert index.status_code == 200, index.text
    assert index.json()["license"] == "ODbL-1.0"
    deals = httpx.get(f"{base}/api/v1/sao-paulo/deals.csv", timeout=5)
    assert deals.status_code == 200
    assert deals.headers["content-type"] == "text/csv; charset=utf-8"
    assert deals.headers["access-control-allow-origin"] == "*"
    cached = httpx.get(
        f"{base}/api/v1/sao-paulo/deals.csv",
        timeout=5,
        headers={"If-None-Match": deals.headers["etag"]},
    )
    assert cached.status_code == 304 and cached.content == b""
    assert (
        "content-length" not in cached.headers and cached.headers["etag"] == deals.headers["etag"]
    )
    head = httpx.head(f"{base}/api/v1/sao-paulo/deals.csv", timeout=5)
    assert head.status_code == 200 and head.content == b""
    missing = httpx.get(f"{base}/api/v1/nowhere/deals.json", timeout=5)
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


@pytest.mark.live
def test_a_large_file_is_streamed_whole(tmp_path, real_server):
    body = b"".join(b'{"id":%d,"pad":"%s"},\n' % (i, b"x" * 80) for i in range(40_000))
    _publish_big_file(tmp_path, body)
    response = httpx.get(f"{real_server}/api/v1/sao-paulo/deals.json", timeout=10)
    assert response.status_code == 200
    assert len(body) > 3_000_000 and response.content == body
    assert response.headers["content-length"] == str(len(body))
    assert response.headers["etag"] == '"' + hashlib.sha256(body).hexdigest() + '"'


def test_files_are_served_in_degraded_mode(client, exported):
    from beers import degraded

    degraded.switch_on(60)
    try:
        assert client.get("/api/v1/sao-paulo/deals.json").status_code == 200
    finally:
        degraded.switch_off()


def test_errors_carry_cors_too(client, exported):
    assert client.get("/api/v1/nowhere/deals.json")["Access-Control-Allow-Origin"] == "*"


def test_an_older_snapshot_finishing_late_does_not_replace_a_newer_one(world):
    newer = datasets_export(progress=False, now=at(2026, 11, 23, 10, 5))
    datasets_export(progress=False, now=at(2026, 11, 23, 10, 0))  # started earlier, ends later
    assert generations.read_pointer(datasets_storage())["generation"] == newer.generation


def test_a_generation_dated_in_the_future_does_not_freeze_the_files(world):
    """A generation written by a clock that was ahead (stepped back since, another server's):
    later exports switched no more until the clock caught up with it."""
    from django.utils import timezone

    datasets_export(progress=False, now=timezone.now() + dt.timedelta(days=1))
    later = datasets_export(progress=False)
    assert generations.read_pointer(datasets_storage())["generation"] == later.generation


def test_cors_preflight_is_answered(client, exported):
    response = client.options(
        "/api/v1/sao-paulo/deals.json",
        HTTP_ORIGIN="https://example.org",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="if-none-match",
    )
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    allowed = {h.strip() for h in response["Access-Control-Allow-Headers"].split(",")}
    assert {"if-none-match", "if-modified-since"} <= allowed
    # only methods something under /api/ accepts (reads, and the writes' POST)
    methods = {m.strip() for m in response["Access-Control-Allow-Methods"].split(",")}
    assert methods == {"GET", "HEAD", "OPTIONS", "POST"}


def test_the_pointer_is_as_readable_as_the_files_it_names(exported):
    """The worker writes, the web server reads, perhaps as another user: `current.json` was
    made 0600 by mkstemp while the generation's files were 0644."""
    import stat

    storage = datasets_storage()
    pointer = stat.S_IMODE(Path(storage.path("current.json")).stat().st_mode)
    index = Path(storage.path(f"{exported.generation}/index.json"))
    assert pointer == stat.S_IMODE(index.stat().st_mode) == 0o644


def _publish_big_file(tmp_path, body: bytes = b"x" * 24_000_000) -> bytes:
    """A generation whose sao-paulo/deals.json is `body` (and an index)."""
    root = tmp_path / "big"
    (root / "sao-paulo").mkdir(parents=True)
    (root / "sao-paulo" / "deals.json").write_bytes(body)
    (root / "index.json").write_bytes(b"{}")
    names = ["sao-paulo/deals.json", "index.json"]
    files = {rel: generations.file_info(root / rel, rel) for rel in names}
    generations.publish(
        datasets_storage(), root=root, files=files, now=at(2026, 11, 23), extra={}, order=names
    )
    return body


def _asking_and_not_reading(base: str, path: str):
    """A socket that sent `GET path` and reads nothing (a 4 KB receive buffer)."""
    import socket

    host, port = base.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return sock


@pytest.mark.live
def test_downloads_nobody_reads_hold_no_read_thread(tmp_path, real_server):
    """40 clients that ask for a 24 MB file and never read it (as a slow or hostile client
    does) held every read thread of the worker, and every GET waited: the files go out from
    the event loop, and the server keeps answering the others."""
    body = _publish_big_file(tmp_path)
    stalled = []
    try:
        for _ in range(40):  # more than the read threads (WEB_READ_THREADS, 10)
            stalled.append(_asking_and_not_reading(real_server, "/api/v1/sao-paulo/deals.json"))
        time.sleep(1)
        for _ in range(3):
            assert httpx.get(f"{real_server}/api/v1/index.json", timeout=5).status_code == 200
            assert httpx.get(f"{real_server}/api/v1/status", timeout=5).status_code == 200
        whole = httpx.get(f"{real_server}/api/v1/sao-paulo/deals.json", timeout=10)
        assert whole.content == body
    finally:
        for sock in stalled:
            sock.close()


@pytest.mark.live
def test_a_download_nobody_reads_is_let_go(tmp_path):
    """A client that takes no byte for DATASETS_SEND_TIMEOUT_SECONDS is disconnected (its
    file closed), rather than held open for good."""
    _publish_big_file(tmp_path)
    env = {
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/nowhere",
        "DATASETS_ROOT": str(settings.DATASETS_ROOT),
        "DATASETS_SEND_TIMEOUT_SECONDS": "1",
        "DEBUG": "0",
        "DJANGO_SECRET_KEY": "test-only",
        "REDIS_URL": "",
    }
    with served(env, "--lifespan", "off", ready="/api/v1/index.json") as base:
        with _asking_and_not_reading(base, "/api/v1/sao-paulo/deals.json"):
            time.sleep(0.5)
            assert _open(base, "/deals.json") == 1
            sockets = _open(base, "socket:")  # the listener's and this connection's
            time.sleep(2.5)  # the client took nothing for longer than the timeout
            # let go without waiting for it to read (a close would wait for ever): the
            # server holds neither the connection nor the file any more
            assert _open(base, "/deals.json") == 0
            assert _open(base, "socket:") == sockets - 1
        assert httpx.get(f"{base}/api/v1/index.json", timeout=5).status_code == 200


def _open(base: str, target: str) -> int:
    """How many of the server's file descriptors (the server on `base`, Linux /proc) point to
    something whose name holds `target` ("socket:", "/deals.json")."""
    port = base.rsplit(":", 1)[1]
    count = 0
    for proc in Path("/proc").iterdir():
        try:
            if f"--port\x00{port}\x00".encode() not in (proc / "cmdline").read_bytes():
                continue
            count += sum(target in os.readlink(fd) for fd in (proc / "fd").iterdir())
        except OSError:  # not a process, or gone, or not ours
            continue
    return count
