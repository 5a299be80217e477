"""The router reads a write's body before Django, up to its path's limit (a write's 64 KiB,
else DATA_UPLOAD_MAX_MEMORY_SIZE) and within REQUEST_BODY_SECONDS: Django's ASGI handler would
spool any body to disk first (3 GB sent chunked filled 2.7 GB), and a body that never ended
held its memory for good."""

import asyncio
import json

import pytest

from config import asgi

LIMIT = 2_200_000


def _run(
    path: str, chunks: list[bytes], headers=(), *, then_wait: bool = False
) -> tuple[list[dict], list[dict], int]:
    """(what the router sent, the messages Django received, how many chunks were read).
    `then_wait`: after the chunks the client sends nothing more (and never says it ended)."""
    sent, seen, read = [], [], 0

    async def receive():
        nonlocal read
        read += 1
        if then_wait and read > len(chunks):
            await asyncio.sleep(3600)
        if read <= len(chunks):
            return {
                "type": "http.request",
                "body": chunks[read - 1],
                "more_body": then_wait or read < len(chunks),
            }
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    async def django(scope, receive, send):
        while True:
            message = await receive()
            seen.append(message)
            if not message.get("more_body"):
                break

    scope = {"type": "http", "method": "POST", "path": path, "headers": list(headers)}
    original = asgi.django_app
    asgi.django_app = django
    try:
        asyncio.run(asgi.application(scope, receive, send))
    finally:
        asgi.django_app = original
    return sent, seen, read


@pytest.fixture(autouse=True)
def limit(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT


def test_a_chunked_body_over_the_limit_is_413_before_django_reads_a_byte():
    chunk = b"x" * 100_000
    sent, seen, read = _run("/api/v1/menu-photos", [chunk] * 1000)
    assert seen == []
    assert read == 23  # stopped at the first chunk past 2.2 MB, not at 100 MB
    assert sent[0]["status"] == 413
    headers = dict(sent[0]["headers"])
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"access-control-allow-origin"] == b"*"
    assert json.loads(sent[1]["body"]) == {
        "error": "payload_too_large",
        "message": "The body is larger than 2200000 bytes.",
    }


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/reports",
        "/api/v1/submissions",
        "/api/v1/city-requests",
        "/api/v1/bar-owners",
        "/api/v1/deals/7/confirm",
        "/api/v1/deals/7/dispute",
    ],
)
def test_a_write_takes_64_kib_and_no_more_is_read(path):
    """The views refuse over 64 KiB; the router stops reading there too (it read 2.2 MB)."""
    sent, seen, read = _run(path, [b"x" * 40_000] * 50)
    assert (seen, read) == ([], 2)
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["message"] == "The body is larger than 65536 bytes."
    sent, seen, read = _run(path, [b"x"], headers=[(b"content-length", b"65537")])
    assert (seen, read, sent[0]["status"]) == ([], 0, 413)
    sent, seen, _ = _run(path, [b"x" * 65536])
    assert sent == [] and len(seen[0]["body"]) == 65536


def test_a_body_that_does_not_arrive_in_time_is_408(settings):
    settings.REQUEST_BODY_SECONDS = 0.2
    sent, seen, read = _run("/api/v1/menu-photos", [b"x" * 1000], then_wait=True)
    assert seen == [] and read == 2
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    assert json.loads(sent[1]["body"]) == {
        "error": "request_timeout",
        "message": "The body did not arrive within 0.2 s.",
    }


def test_a_declared_length_over_the_limit_is_413_before_anything_is_read():
    sent, seen, read = _run(
        "/admin/login/", [b"x"], headers=[(b"content-length", str(LIMIT + 1).encode())]
    )
    assert (seen, read) == ([], 0)
    assert sent[0]["status"] == 413
    assert dict(sent[0]["headers"])[b"content-type"].startswith(b"text/plain")


def test_a_body_at_the_limit_reaches_django_whole_as_it_came():
    chunks = [b"a" * 1_000_000, b"b" * 1_000_000, b"c" * 200_000]
    sent, seen, _ = _run("/api/v1/menu-photos", chunks)
    assert sent == []
    assert b"".join(m["body"] for m in seen) == b"".join(chunks)
    assert [m["more_body"] for m in seen] == [True, True, False]
