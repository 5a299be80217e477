"""The router reads a write's body before Django, up to DATA_UPLOAD_MAX_MEMORY_SIZE: Django's
ASGI handler would spool any body to disk first (3 GB sent chunked filled 2.7 GB)."""

import asyncio
import json

import pytest

from config import asgi

LIMIT = 2_200_000


def _run(path: str, chunks: list[bytes], headers=()) -> tuple[list[dict], list[dict], int]:
    """(what the router sent, the messages Django received, how many chunks were read)."""
    sent, seen, read = [], [], 0

    async def receive():
        nonlocal read
        read += 1
        if read <= len(chunks):
            return {
                "type": "http.request",
                "body": chunks[read - 1],
                "more_body": read < len(chunks),
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
    sent, seen, read = _run("/api/v1/reports", [chunk] * 1000)
    assert seen == []
    assert read == 23  # stopped at the first chunk past 2.2 MB, not at 100 MB
    assert sent[0]["status"] == 413
    headers = dict(sent[0]["headers"])
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"access-control-allow-origin"] == b"*"
    assert json.loads(sent[1]["body"]) == {
        "error": "payload_too_large",
        "message": "Request body too large.",
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
