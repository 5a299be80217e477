"""Django's HTTPS and header policy (SecurityMiddleware, XFrameOptionsMiddleware) for what the
ASGI router serves without Django: the MCP server at /mcp. An operator who sets
SECURE_SSL_REDIRECT or HSTS gets one policy for the whole host.

The request is secure when its connection is (uvicorn runs with --no-proxy-headers) or a
trusted proxy says so in X-Forwarded-Proto, as Django reads it (beers.clients). A plain-HTTP
request is redirected with 308, so that a POST stays a POST with its body, to the canonical
host (SECURE_SSL_HOST, else SITE_URL's): never to the Host the request names.
"""

import re
from urllib.parse import urlsplit

from django.conf import settings

from beers.clients import is_trusted_proxy


def is_secure(scope) -> bool:
    if scope.get("scheme") in ("https", "wss"):
        return True
    client = (scope.get("client") or ("",))[0] or ""
    for name, value in scope.get("headers", ()):
        if name == b"x-forwarded-proto":
            # Django's reading: the leftmost value, when a proxy chain appended several
            return value.split(b",")[0].strip() == b"https" and is_trusted_proxy(client)
    return False


def redirect_to_https(scope) -> str | None:
    """Where a plain-HTTP request goes under SECURE_SSL_REDIRECT, or None to serve it."""
    if not settings.SECURE_SSL_REDIRECT or is_secure(scope):
        return None
    path = scope.get("path", "")
    if any(re.search(pattern, path.lstrip("/")) for pattern in settings.SECURE_REDIRECT_EXEMPT):
        return None
    host = settings.SECURE_SSL_HOST or urlsplit(settings.SITE_URL).netloc
    query = scope.get("query_string", b"").decode("latin-1")
    return f"https://{host}{path}" + (f"?{query}" if query else "")


def headers(scope) -> list[tuple[bytes, bytes]]:
    """The headers SecurityMiddleware and XFrameOptionsMiddleware add to an answer."""
    found = []
    if settings.SECURE_HSTS_SECONDS and is_secure(scope):
        value = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
            value += "; includeSubDomains"
        if settings.SECURE_HSTS_PRELOAD:
            value += "; preload"
        found.append((b"strict-transport-security", value.encode()))
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        found.append((b"x-content-type-options", b"nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        policy = settings.SECURE_REFERRER_POLICY
        policy = policy if isinstance(policy, str) else ",".join(policy)
        found.append((b"referrer-policy", policy.encode()))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        found.append(
            (b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode())
        )
    found.append((b"x-frame-options", settings.X_FRAME_OPTIONS.encode()))
    return found


def app(inner):
    """`inner` (an ASGI app) under the policy: plain HTTP redirected, headers added."""

    async def secured(scope, receive, send):
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        target = redirect_to_https(scope)
        if target is not None:
            await send(
                {
                    "type": "http.response.start",
                    "status": 308,
                    "headers": [
                        (b"location", target.encode()),
                        (b"content-length", b"0"),
                        *headers(scope),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        added = headers(scope)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                have = {name.lower() for name, _ in message.get("headers", ())}
                extra = [(name, value) for name, value in added if name not in have]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await inner(scope, receive, send_with_headers)

    return secured
