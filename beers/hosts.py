"""A Host this site does not serve is refused the same way in every mode."""

from asgiref.sync import iscoroutinefunction
from django.core.exceptions import DisallowedHost
from django.urls import get_resolver
from django.utils.decorators import sync_and_async_middleware

from beers.csp import PAGE_POLICY


def _refusal(request):
    """None for a served Host; else the site's 400 (config.urls.handler400: an ErrorResponse
    under /api/, a plain page elsewhere). Django raises DisallowedHost where it first reads
    the host (CommonMiddleware), and with DEBUG (`make run`) answered with its traceback page
    (decisions.md: no error answer shows a stack trace)."""
    try:
        request.get_host()
    except DisallowedHost as exc:
        response = get_resolver().resolve_error_handler(400)(request, exc)
        if response.get("Content-Type", "").startswith("text/html"):
            response["Content-Security-Policy"] = PAGE_POLICY  # beers.csp sits further in
        return response
    return None


@sync_and_async_middleware
def allowed_host_middleware(get_response):
    """Before the middleware that reads the host (sessions, CommonMiddleware), inside the CORS
    and API error middleware; sync and async, so that it adds no thread hop on either
    request path."""
    if iscoroutinefunction(get_response):

        async def middleware(request):
            return _refusal(request) or await get_response(request)

    else:

        def middleware(request):
            return _refusal(request) or get_response(request)

    return middleware
