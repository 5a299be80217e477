"""The one ASGI entry: Django for everything, the MCP server at /mcp.

Django's ASGI handler refuses the lifespan scope, so a small router owns the lifespan (which
starts the MCP session manager) and sends /mcp to the MCP app, everything else to Django.
"""

import contextlib
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from mcp_bridge.server import build_asgi_app  # noqa: E402

mcp_app, mcp_lifespan = build_asgi_app()


class Router:
    """Routes /mcp to the MCP app and the rest to Django; runs the lifespan."""

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        if path == "/mcp" or path.startswith("/mcp/"):
            await mcp_app(scope, receive, send)
            return
        await django_app(scope, receive, send)

    async def _lifespan(self, receive, send):
        stack = contextlib.AsyncExitStack()
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await stack.enter_async_context(mcp_lifespan())
                except Exception as exc:  # pragma: no cover - reported to the server
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await stack.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


application = Router()
