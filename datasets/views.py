"""Serving the dataset files of the current generation, without the main database.

Nothing here queries the database or reads the session or user, so the files keep answering
in degraded mode and with the database down. Files come from `storages["datasets"]` (a folder
or S3; with S3 the view streams the object — a CDN in front of the bucket can serve the
generation's objects directly too, since they carry their own Content-Type and Cache-Control).
"""

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator
from email.utils import formatdate

from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from django.utils.http import parse_http_date_safe
from django.views.decorators.csrf import csrf_exempt

from beers.api.errors import json_error
from beers.errors import shown

from .generations import read_pointer
from .storage import CACHE_CONTROL, DatasetsFileSystemStorage, datasets_storage

SMALL = 1 << 20  # answered from memory below this size, streamed above
# The files a download streams, for the ASGI router to close when the answer ends (a list it
# sets per request; the view runs in a copy of its context, which shares the list).
OPENED: contextvars.ContextVar[list] = contextvars.ContextVar("datasets_opened")
CHUNK = 256 << 10
POINTER_TTL = 5.0  # seconds a remote (S3) pointer is reused by this process
_remote_pointer: dict = {}


def _pointer(storage) -> dict | None:
    """The current generation. A local pointer is read each time (a small file); a remote
    one is kept a few seconds per process."""
    if isinstance(storage, DatasetsFileSystemStorage):
        return read_pointer(storage)
    cached = _remote_pointer.get(id(storage))
    if cached and time.monotonic() - cached[0] < POINTER_TTL:
        return cached[1]
    pointer = read_pointer(storage)
    _remote_pointer[id(storage)] = (time.monotonic(), pointer)
    return pointer


def _etag_matches(header: str, etag: str) -> bool:
    """If-None-Match uses the weak comparison (RFC 9110 13.1.2)."""
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == bare for tag in header.split(","))


def _not_modified(request, etag: str, created_at: int) -> bool:
    """RFC 9110 13.2.2: If-None-Match decides when sent (weak comparison, 13.1.2); else
    If-Modified-Since, against the generation's time (a file is as new as its generation)."""
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None:
        return _etag_matches(if_none_match, etag)
    since = parse_http_date_safe(request.headers.get("If-Modified-Since", ""))
    return since is not None and int(created_at) <= since


def _headers(response: HttpResponse, info: dict, created_at: int) -> HttpResponse:
    response["ETag"] = info["etag"]
    response["Cache-Control"] = CACHE_CONTROL
    response["Last-Modified"] = formatdate(created_at, usegmt=True)
    return response


def _not_found(message: str) -> HttpResponse:
    return json_error(404, message)


@csrf_exempt
def dataset_file(request, name: str, city: str | None = None):
    """GET/HEAD one file: `index.json`, `cities.json`, `catalog.json` or `{city}/{file}`."""
    response = _dataset_file(request, name, city)
    response["Access-Control-Allow-Origin"] = "*"  # errors too: a browser can read why
    return response


def _dataset_file(request, name: str, city: str | None, retry: bool = True):
    if request.method not in ("GET", "HEAD"):
        response = json_error(405, "Use GET or HEAD.")
        response["Allow"] = "GET, HEAD"
        return response
    rel = f"{city}/{name}" if city else name
    storage = datasets_storage()
    pointer = _pointer(storage)
    if pointer is None:
        response = json_error(503, "The datasets have not been exported yet.")
        response["Retry-After"] = "60"
        return response
    info = pointer["files"].get(rel)
    if info is None:
        return _not_found(
            "No such dataset file."
            if city is None
            else f"No dataset file {name} for city {shown(city)}."
        )
    created_at = pointer.get("created_at", 0)
    if _not_modified(request, info["etag"], created_at):
        # Streaming, so no Content-Length is added (CommonMiddleware would write 0, which a
        # 304 must not say: RFC 9110 8.6); no Content-Type either: it describes the stored file.
        not_modified = StreamingHttpResponse(_nothing(request), status=304)
        del not_modified["Content-Type"]
        return _headers(not_modified, info, created_at)
    if request.method == "HEAD":
        response = HttpResponse(content_type=info["content_type"])
        response["Content-Length"] = str(info["size"])
        return _headers(response, info, created_at)
    try:
        fh = storage.open(f"{pointer['generation']}/{rel}", "rb")
    except FileNotFoundError:
        # Pruned under a reader that paused past the grace period: the pointer has moved on.
        _remote_pointer.clear()
        if retry:
            return _dataset_file(request, name, city, retry=False)
        return _not_found("No such dataset file.")
    if info["size"] <= SMALL:
        with fh:
            response = HttpResponse(fh.read(), content_type=info["content_type"])
    elif isinstance(request, ASGIRequest):
        downloads = OPENED.get(None)
        if downloads is not None:  # config/asgi.py closes it however the answer ends
            downloads.append(fh)
        # Served by the event loop (config/asgi.py routes the files to Django's ASGI handler):
        # a client that does not read holds a coroutine, not one of the read threads (40 such
        # downloads of a 6 MB file held every thread and stalled every GET of the worker).
        response = StreamingHttpResponse(_chunks(fh), content_type=info["content_type"])
        response["Content-Length"] = str(info["size"])
    else:  # a WSGI server: read in chunks by its thread; the response closes the file
        response = FileResponse(fh, content_type=info["content_type"])
        response.block_size = CHUNK
        response["Content-Length"] = str(info["size"])
    return _headers(response, info, created_at)


def _nothing(request):
    """An empty body of the handler's own kind (an ASGI handler warns on a sync iterator)."""

    async def empty() -> AsyncIterator[bytes]:
        return
        yield

    return empty() if isinstance(request, ASGIRequest) else ()


async def _chunks(fh) -> AsyncIterator[bytes]:
    """The file in CHUNK pieces, each read in a thread (a disk or S3 read), then closed."""
    try:
        while chunk := await asyncio.to_thread(fh.read, CHUNK):
            yield chunk
    finally:
        await asyncio.to_thread(fh.close)
