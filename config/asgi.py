"""The one ASGI entry: Django for everything, the MCP server at /mcp.

Django's ASGI handler refuses the lifespan scope, so a small router owns the lifespan (which
starts the MCP session manager, and the periodic work where no Celery beat runs:
config/beat.py) and sends /mcp to the MCP app, everything else to Django.

Reads (GET, HEAD, OPTIONS) reach Django through its WSGI handler on a fixed pool of worker
threads (a2wsgi), but for the dataset files' downloads, which the ASGI handler sends from the
event loop (a client that does not read would hold a pool thread). Django's ASGI handler
starts a new thread for every request of a sync view (one ThreadSensitiveContext each) and
hops threads for the request signals: measured here, 1.5 ms of a 2.7 ms trivial request,
against 1.15 ms in all through the pool. Our views are sync,
so nothing is lost. Requests with a body stay on the ASGI handler, which reads the whole body
before the view runs: a slow upload then holds no worker thread. The router reads that body
first, up to DATA_UPLOAD_MAX_MEMORY_SIZE (the largest any endpoint takes), and answers 413
beyond it, so no body, however large, reaches Django's temporary files.
"""

import asyncio
import contextlib
import json
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from a2wsgi import WSGIMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

django_app = get_asgi_application()
django_reads = WSGIMiddleware(get_wsgi_application(), workers=settings.WEB_READ_THREADS)

from config import beat, https  # noqa: E402
from config.bodies import BodyGone, BodyLate, BodyTooLarge, read_body  # noqa: E402
from datasets import views as datasets_views  # noqa: E402
from datasets.services import CITY_FILES, TOP_FILES  # noqa: E402
from mcp_bridge.server import build_asgi_app  # noqa: E402

mcp_app, mcp_lifespan = build_asgi_app()
# Django's HTTPS redirect and security headers, which the MCP app does not pass through
mcp_secured = https.app(mcp_app)

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DATASET_FILES = frozenset((*CITY_FILES, *TOP_FILES))


async def _refuse(scope, send, status: int, code: str, message: str) -> None:
    """An answer before Django: an ErrorResponse under /api/ (with the CORS header the API's
    answers carry), plain text elsewhere (the admin); the connection is closed after it."""
    from beers.api.errors import ERRORS_LANGUAGE, error_body, is_api_path

    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    body = message.encode()
    if is_api_path(scope.get("path", "")):
        body = json.dumps(error_body(code, message)).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-language", ERRORS_LANGUAGE.encode()),
            (b"access-control-allow-origin", b"*"),
        ]
    headers += [(b"content-length", str(len(body)).encode()), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _body_limit(path: str) -> int:
    """The most a request to `path` may send: its view's own `body_limit` (a write's 64 KiB,
    menu photos' 2.2 MB), else DATA_UPLOAD_MAX_MEMORY_SIZE, the most any endpoint takes (the
    admin's forms, the opt-out's)."""
    from django.urls import Resolver404, resolve

    try:
        view = resolve(path).func
    except Resolver404:
        view = None
    limit = getattr(getattr(view, "view_class", None), "body_limit", None)
    return limit if limit is not None else settings.DATA_UPLOAD_MAX_MEMORY_SIZE


async def _bounded_body(scope, receive, send):
    """Read a request's body before Django sees it, up to its path's limit and in time
    (config/bodies.py; Django's ASGI handler spools any body to a temporary file first,
    however large: 3 GB sent chunked filled 2.7 GB of disk before the 413). Returns a receive
    that replays it, or None after answering 413 (a Content-Length over the limit is refused
    before a byte is read) or 408, or when the client left."""
    limit = _body_limit(scope.get("path", ""))
    try:
        messages = await read_body(scope, receive, limit)
    except BodyTooLarge:
        await _too_large(scope, send, limit)
        return None
    except BodyLate as late:
        await _refuse(scope, send, 408, "request_timeout", str(late))
        return None
    except BodyGone:
        return None

    async def replay():
        return messages.pop(0) if messages else await receive()

    return replay


async def _too_large(scope, send, limit: int) -> None:
    """413, as the views word it: `payload_too_large`."""
    await _refuse(scope, send, 413, "payload_too_large", f"The body is larger than {limit} bytes.")


class SlowReader(Exception):
    """A client took no part of its answer for DATASETS_SEND_TIMEOUT_SECONDS."""


def _send_within(send):
    async def timed(message):
        try:
            await asyncio.wait_for(send(message), settings.DATASETS_SEND_TIMEOUT_SECONDS)
        except TimeoutError:
            raise SlowReader from None

    return timed


def _abort(send) -> None:
    """Drop the connection now. The server's close waits for the unsent bytes to drain, which
    a client that reads nothing never lets happen (200 such sockets stayed open, 535 MB
    unsent): abort the transport of the server's send (uvicorn's request cycle), if it has one."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is not None:
        transport.abort()


async def _download(scope, receive, send) -> None:
    """A dataset file at the client's pace (see Router); the files the view opened are closed
    when the answer ends, however it ends (Django closes the streaming response's wrapper, not
    the file reader inside it, on a client gone or too slow)."""
    opened = datasets_views.OPENED.set([])
    try:
        await django_app(scope, receive, _send_within(send))
    except SlowReader:
        _abort(send)
    finally:
        for fh in datasets_views.OPENED.get():
            await asyncio.to_thread(fh.close)
        datasets_views.OPENED.reset(opened)


def _is_dataset_file(path: str) -> bool:
    """`/api/v1/{file}` or `/api/v1/{city}/{file}` of datasets.md (datasets/urls.py)."""
    name = path.rsplit("/", 1)[-1]
    return path.startswith("/api/v1/") and name in DATASET_FILES


class Router:
    """Routes /mcp to the MCP app and the rest to Django; runs the lifespan."""

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        if path == "/mcp/":
            # served as /mcp: the SDK's app redirected it to an address built from the
            # request's Host and scheme (http behind a TLS proxy), not SITE_URL
            scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
            path = "/mcp"
        if path == "/mcp" or path.startswith("/mcp/"):
            await mcp_secured(scope, receive, send)
        elif scope["type"] == "http" and scope["method"] == "GET" and _is_dataset_file(path):
            # Downloads of any size, at the client's pace: Django's ASGI handler sends them from
            # the event loop, so a client that stops reading holds no read thread; one that
            # takes no byte for DATASETS_SEND_TIMEOUT_SECONDS is let go (its file closed).
            await _download(scope, receive, send)
        elif scope["type"] == "http" and scope["method"] in READ_METHODS:
            await django_reads(scope, receive, send)
        else:
            if scope["type"] == "http":  # no endpoint takes more (menu photos, 2.2 MB)
                receive = await _bounded_body(scope, receive, send)
                if receive is None:
                    return
            await django_app(scope, receive, send)

    async def _lifespan(self, receive, send):
        stack = contextlib.AsyncExitStack()
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await stack.enter_async_context(mcp_lifespan())
                    if settings.DATASETS_REFRESH_IN_PROCESS:  # make run: no Celery beat
                        for job in beat.jobs():
                            stack.callback(asyncio.create_task(beat.run_forever(*job)).cancel)
                except Exception as exc:  # pragma: no cover - reported to the server
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await stack.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


application = Router()
