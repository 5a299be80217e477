"""Reading a request's body before the app that answers it (Django's ASGI handler, the MCP
SDK): up to a limit and within REQUEST_BODY_SECONDS, so that neither a large nor an endless
body is held (400 bodies of 2.2 MB less one byte kept 770 MB for good, 300 held MCP bodies
1.5 GB). The callers answer each outcome in their own format."""

import anyio
from django.conf import settings


class BodyTooLarge(Exception):
    """More than the limit came (reading stopped there)."""


class BodyGone(Exception):
    """The client hung up before its body ended: nobody to answer."""


class BodyLate(Exception):
    """The body was not whole within REQUEST_BODY_SECONDS; its text is the answer's message."""


def declared_length(scope) -> int | None:
    """The request's Content-Length, None when it has none (or not a number)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


async def read_body(scope, receive, limit: int) -> list[dict]:
    """The messages that carried the body, to hand on as they came. Raises BodyTooLarge (a
    Content-Length over the limit before a byte is read), BodyLate or BodyGone."""
    declared = declared_length(scope)
    if declared is not None and declared > limit:
        raise BodyTooLarge
    try:
        return await _messages(receive, limit)
    except TimeoutError:
        seconds = settings.REQUEST_BODY_SECONDS
        raise BodyLate(f"The body did not arrive within {seconds:g} s.") from None


async def _messages(receive, limit: int) -> list[dict]:
    messages, size = [], 0
    with anyio.fail_after(settings.REQUEST_BODY_SECONDS):
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] == "http.disconnect":
                raise BodyGone
            if message["type"] != "http.request":
                return messages
            size += len(message.get("body", b""))
            if size > limit:
                raise BodyTooLarge
            if not message.get("more_body"):
                return messages


def body_of(messages: list[dict]) -> bytes:
    return b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
