"""The MCP server: streamable HTTP, stateless, JSON responses, no sign-in, mounted at /mcp.

`build_asgi_app()` is what config.asgi mounts; the ASGI router there owns the lifespan and
enters the session manager it gets from here.
"""

import contextlib
import inspect
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from django.conf import settings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from . import tools

INSTRUCTIONS = (
    "Breja: crowd-sourced beer prices from bars in Brazilian cities, ranked by price per litre "
    "(BRL). Start with catalog (cities, brands, formats), then search_deals or cheapest_now, "
    "then get_venue for a bar. Money is in BRL, volumes in ml, distances in metres. The data is "
    "open (ODbL 1.0): show the answer's source and link the deal's url."
)


class BrejaMCPServer(MCPServer):
    """The SDK's server, except that an unknown tool is a JSON-RPC error (invalid params), as
    the MCP specification asks, instead of a tool result."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if self._tool_manager.get_tool(name) is None:
            known = ", ".join(tool.__name__ for tool in tools.TOOLS)
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}. Tools: {known}.")
        return await super().call_tool(name, arguments, context)


def build_server() -> BrejaMCPServer:
    server = BrejaMCPServer(
        tools=[_tool(fn) for fn in tools.TOOLS],
        name="breja",
        title="Breja: cheapest beer per litre in Brazilian cities",
        instructions=INSTRUCTIONS,
        website_url=settings.SITE_URL,
        version="1.0.0",
        log_level="WARNING",
    )
    return server


def _tool(fn) -> Tool:
    tool = Tool.from_function(
        fn,
        description=inspect.cleandoc(fn.__doc__),
        annotations=tools.READ_ONLY,
        structured_output=True,
    )
    tool.parameters["required"] = tools.REQUIRED[tool.name]
    for name in tools.REQUIRED[tool.name]:
        tool.parameters["properties"][name].pop("default", None)
    return tool


def transport_security(allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection (Host and Origin checks) from Django's ALLOWED_HOSTS.

    Each host is accepted bare and with any port. `*` turns the check off, as it does in
    Django. A Django subdomain wildcard (`.example.com`) accepts the bare domain only: the SDK
    matches exact names, so list each served subdomain explicitly.
    """
    if "*" in allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts: list[str] = []
    origins: list[str] = []
    for entry in allowed_hosts:
        host = entry.lstrip(".")
        if not host:
            continue
        hosts += [host, f"{host}:*"]
        origins += [
            f"{scheme}://{host}{port}" for scheme in ("https", "http") for port in ("", ":*")
        ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class McpMount:
    """The ASGI app at /mcp. Each lifespan builds a fresh transport (the SDK's session manager
    runs once per instance), so the same application object can be served again: a reloaded
    server, or one live server after another in the tests. Lifespans must not overlap."""

    def __init__(self, server: BrejaMCPServer):
        self.server = server
        self.app = self._build()

    def _build(self):
        return self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            transport_security=transport_security(list(settings.ALLOWED_HOSTS)),
        )

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(self):
        self.app = self._build()
        async with self.server.session_manager.run():
            yield


def build_asgi_app() -> tuple[Any, Callable[[], AbstractAsyncContextManager]]:
    """(the ASGI app answering /mcp, a factory of the lifespan that runs its session manager)."""
    mount = McpMount(build_server())
    return mount, mount.lifespan
