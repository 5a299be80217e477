"""Bodies that do not arrive: the MCP app answers 408 past REQUEST_BODY_SECONDS and hands the
SDK nothing when the client left (300 bodies of 4 MB held open kept 1.5 GB; abandoned ones
reached the SDK half read, with a traceback each)."""

import asyncio
import json

from config import asgi

HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]


def _post(messages: list[dict], *, then_wait: bool = False) -> list[dict]:
    """What /mcp sent back for a POST whose body comes as `messages`."""
    sent, queue = [], list(messages)

    async def receive():
        if queue:
            return queue.pop(0)
        if then_wait:
            await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": HEADERS,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "scheme": "http",
        "query_string": b"",
        "root_path": "",
    }
    asyncio.run(asgi.mcp_app(scope, receive, send))
    return sent


def test_a_body_that_does_not_arrive_in_time_is_408(settings):
    settings.REQUEST_BODY_SECONDS = 0.2
    start = {"type": "http.request", "body": b'{"jsonrpc": "2.0", ', "more_body": True}
    sent = _post([start], then_wait=True)
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    answer = json.loads(sent[1]["body"])
    assert answer["error"]["code"] == -32600
    assert answer["error"]["message"] == "The body did not arrive within 0.2 s."


def test_a_client_that_left_mid_body_is_not_answered(settings):
    start = {"type": "http.request", "body": b'{"jsonrpc": "2.0", ', "more_body": True}
    assert _post([start, {"type": "http.disconnect"}]) == []
