"""The MCP server: streamable HTTP, stateless, JSON responses, no sign-in, mounted at /mcp.

`build_asgi_app()` is what config.asgi mounts; the ASGI router there owns the lifespan and
enters the session manager it gets from here.
"""

import contextlib
import difflib
import inspect
import json
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio.to_thread
import orjson
from django.conf import settings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request

from beers.answers import DATASETS_INDEX
from beers.clients import address_hash, client_ip_from_meta
from beers.counters import parse_rate, window_hit
from config.bodies import BodyGone, BodyLate, BodyTooLarge, body_of, read_body

from . import tools

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Breja: crowd-sourced beer prices from bars in Brazilian cities, ranked by price per litre "
    "(BRL). Start with catalog (cities, brands, formats), then search_deals or cheapest_now, "
    "then get_venue for a bar. Money is in BRL, volumes in ml, distances in metres. The data is "
    "open (ODbL 1.0): show the answer's source and link the deal's url."
)


# each tool's arguments, in order, by tool name
TOOL_ARGUMENTS = {fn.__name__: tuple(inspect.signature(fn).parameters) for fn in tools.TOOLS}
TOOL_NAMES = tuple(TOOL_ARGUMENTS)


class BrejaMCPServer(MCPServer):
    """The SDK's server, except that an unknown tool is a JSON-RPC error (invalid params), as
    the MCP specification asks, instead of a tool result, and an argument the tool does not
    take is a tool error: a misspelt filter (`neighborhood`) would otherwise be dropped and
    the agent shown the whole city as if filtered."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if name not in TOOL_NAMES:
            known = ", ".join(TOOL_NAMES)
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}. Tools: {known}.")
        unknown = unknown_arguments(name, arguments)
        if unknown:
            return tools.error(unknown)
        return await super().call_tool(name, arguments, context)

    async def get_prompt(self, name: str, arguments=None, context=None):
        """No prompts are served: -32602, as the MCP specification names an unknown prompt
        (the SDK's ValueError answered code 0 and logged two tracebacks per request)."""
        raise MCPError(
            INVALID_PARAMS, f"Unknown prompt: {tools.shorten(name)}. {NOTHING_BUT_TOOLS}"
        )

    async def read_resource(self, uri, context=None):
        """No resources are served: -32002, the MCP specification's "resource not found"."""
        raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found. {NOTHING_BUT_TOOLS}")


RESOURCE_NOT_FOUND = -32002
NOTHING_BUT_TOOLS = f"This server has no prompts or resources, only tools: {', '.join(TOOL_NAMES)}."


# The unknown arguments a tool error names, each with its closest match: a call naming 130,000
# (4 MB) took 2.4 s of the event loop, every request of the process waiting, and answered 11 MB.
UNKNOWN_ARGUMENTS_SHOWN = 5


def unknown_arguments(name: str, arguments: dict[str, Any] | None) -> str:
    """The tool error's text for the arguments `name` does not take, or "" (none)."""
    taken = TOOL_ARGUMENTS[name]
    unknown = [argument for argument in arguments or {} if argument not in taken]
    if not unknown:
        return ""
    problems = []
    for argument in unknown[:UNKNOWN_ARGUMENTS_SHOWN]:
        shown = tools.shorten(argument)
        close = difflib.get_close_matches(argument, taken, n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        problems.append(f"{shown}: not an argument of {name}.{hint}")
    if len(unknown) > UNKNOWN_ARGUMENTS_SHOWN:
        problems.append(f"and {len(unknown) - UNKNOWN_ARGUMENTS_SHOWN} more.")
    accepted = ", ".join(taken) or "none"
    return f"Invalid arguments. {'; '.join(problems)} Arguments it takes: {accepted}."


def build_server() -> BrejaMCPServer:
    server = BrejaMCPServer(
        tools=[_tool(fn) for fn in tools.TOOLS],
        name="breja",
        title="Breja: cheapest beer per litre in Brazilian cities",
        instructions=INSTRUCTIONS,
        website_url=settings.SITE_URL,
        version="1.0.0",
        log_level="WARNING",
        # Stateless, its tools fixed: no subscriptions/listen stream (2026-07-28), which held a
        # POST open for ever with a ping every 15 s, and no listChanged advertised.
        subscriptions=False,
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
    tool.parameters["additionalProperties"] = False  # BrejaMCPServer.call_tool refuses others
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


def _count(scope, rate: tuple[int, int], group: str = "mcp") -> tuple[bool, int]:
    """One more request from this client address in `group`: `mcp` counts tool calls
    (READ_RATE_LIMIT, the live reads' limit: the tools answer the same questions),
    `mcp-protocol` the rest of the traffic (initialize, lists, notifications)."""
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    meta = {
        "REMOTE_ADDR": (scope.get("client") or ("", 0))[0],
        "HTTP_CF_CONNECTING_IP": headers.get("cf-connecting-ip", ""),
        "HTTP_X_FORWARDED_FOR": headers.get("x-forwarded-for", ""),
    }
    limit, period = rate
    try:
        return window_hit(group, address_hash(client_ip_from_meta(meta)), limit, period)
    except Exception:  # the counters' store is down: reads fail open (beers.api.live)
        return True, 0


PROTOCOL_RATE_FACTOR = 4  # a client opens a session and lists tools around its calls
BODY_PEEK_LIMIT = 4 << 20  # the SDK's own limit (413 above it)


_NOT_JSON = object()


def _parsed(body: bytes):
    """The JSON-RPC body, parsed once for the checks below; _NOT_JSON when it does not parse
    (the SDK then answers -32700). What orjson refuses but the SDK's parser reads (NaN,
    Infinity) is read with json, so `"arguments": NaN` gets the same tool error as `3`."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    try:
        data = json.loads(body)
        # a lone surrogate ("\ud800"), which the SDK refuses as a parse error and no answer
        # could carry back (UnicodeEncodeError, a ValueError)
        json.dumps(data, ensure_ascii=False).encode()
    except (ValueError, RecursionError):  # not JSON, a digit limit, nesting past orjson's 1024
        return _NOT_JSON
    return data


def _calls_a_tool(data) -> bool:
    """Whether a parsed JSON-RPC body (one message or a batch) holds a tools/call. What does
    not parse counts as one: the SDK refuses it, and it cost a parse."""
    if data is _NOT_JSON:
        return True
    messages = data if isinstance(data, list) else [data]
    return any(isinstance(m, dict) and m.get("method") == "tools/call" for m in messages)


_NO_CALL = object()


def _call_with_bad_arguments(data):
    """The id of a single tools/call whose `arguments` is neither an object nor null, else
    _NO_CALL. The SDK would refuse it as a protocol error (-32602) before any tool ran;
    decisions.md wants bad arguments to be a tool error with a readable message."""
    if not isinstance(data, dict) or data.get("method") != "tools/call" or "id" not in data:
        return _NO_CALL
    params = data.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return _NO_CALL
    arguments = params.get("arguments")
    if arguments is None or isinstance(arguments, dict):
        return _NO_CALL
    return data["id"]


def _request_id(data):
    """The id of a parsed JSON-RPC message when it is a valid one (a string or an integer),
    else None: what an error answers to."""
    request_id = data.get("id") if isinstance(data, dict) else None
    if isinstance(request_id, bool):
        return None
    if isinstance(request_id, int):
        return request_id if -(1 << 63) <= request_id < (1 << 64) else None
    return request_id if isinstance(request_id, str) else None


def _invalid_request(data) -> tuple[int, str, Any] | None:
    """(the JSON-RPC error code, the message, the id to answer) of a body that is no JSON-RPC
    2.0 message the server takes, or None. The SDK answered these -32602 with a dump of its
    validation errors, and a request whose id is null, a float, a boolean or an object as a
    notification: 202 and no answer, a client waiting for ever."""
    if data is _NOT_JSON:
        return None  # the SDK's -32700
    if data == []:
        return INVALID_REQUEST, "Invalid Request: an empty batch.", None
    if isinstance(data, list):
        return (
            INVALID_REQUEST,
            "Batches are not part of MCP 2025-06-18 and later (nor batches in a batch): "
            "send one JSON-RPC message per request.",
            None,
        )
    if not isinstance(data, dict):
        return INVALID_REQUEST, "Invalid Request: a JSON-RPC message is a JSON object.", None
    answer_id = _request_id(data)
    if data.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0".', answer_id
    if "method" not in data:
        if "id" in data and ("result" in data or "error" in data):
            if _a_response(data):
                return None  # a response: the SDK's to take
            message = (
                "Invalid Request: a response has a string or integer id and a result object "
                "or an error object with an integer code and a string message."
            )
            return INVALID_REQUEST, message, answer_id
        return INVALID_REQUEST, 'Invalid Request: a request names its "method".', answer_id
    if not isinstance(data["method"], str):
        return INVALID_REQUEST, 'Invalid Request: "method" must be a string.', answer_id
    if "id" in data and answer_id is None:
        return INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer.', None
    if data.get("params") is not None and not isinstance(data["params"], dict):
        # MCP's params are an object: the SDK answered a 1,000-character validation dump
        return INVALID_PARAMS, 'Invalid params: "params" must be an object.', answer_id
    return None


def _a_response(data: dict) -> bool:
    """Whether a message without a method is a well-formed JSON-RPC response (the SDK answered
    any other with a dump of its validation errors)."""
    if _request_id(data) is None or ("result" in data) == ("error" in data):
        return False
    if "result" in data:
        return isinstance(data["result"], dict)
    error = data["error"]
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and not isinstance(error.get("code"), bool)
        and isinstance(error.get("message"), str)
    )


def _a_request(data) -> bool:
    """Whether a parsed message is a request (a method and a valid id): one that is answered."""
    return isinstance(data, dict) and "method" in data and _request_id(data) is not None


INVALID_REQUEST = -32600
PROTOCOL_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)


# The revisions whose clients may send JSON-RPC batches (2025-03-26: servers "MUST support
# receiving" them; 2025-06-18 took them out). A request of theirs may carry no version header.
BATCH_VERSIONS = (None, "2024-11-05", "2025-03-26")
BATCH_MAX = 20  # messages in one batch; each still counts against the rate limits


def _protocol_version(scope) -> str | None:
    """The MCP-Protocol-Version header's value, or None without one."""
    for name, value in scope["headers"]:
        if name == b"mcp-protocol-version":
            return value.decode("latin-1")
    return None


def _unsupported_version(scope) -> str | None:
    """The refusal of an MCP-Protocol-Version header naming no version served (400, as the
    transport asks; the SDK's message spoke of `params._meta` instead), else None."""
    asked = _protocol_version(scope)
    if asked is None or asked in PROTOCOL_VERSIONS:
        return None
    return (
        f"Unsupported MCP-Protocol-Version: {tools.shorten(asked)}. "
        f"Supported: {', '.join(PROTOCOL_VERSIONS)}."
    )


async def _json(send, status: int, body: bytes, headers: list | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _error_item(code: int, message: str, request_id=None) -> dict:
    """A JSON-RPC error message (its id null: answering no known request)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _rpc_error(code: int, message: str, request_id=None) -> bytes:
    """A JSON-RPC error, encoded."""
    return orjson.dumps(_error_item(code, message, request_id))


async def _bad_arguments(send, request_id, modern: bool = False) -> None:
    """The tool error a call with non-object `arguments` gets (as every tool's bad argument);
    2026-07-28 results say their `resultType`, as the SDK's own do."""
    text = "arguments: Must be an object of the tool's parameters (or left out)."
    result = {"content": [{"type": "text", "text": text}], "isError": True}
    if modern:
        result["resultType"] = "complete"
    await _json(send, 200, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


async def _too_many_requests(send, retry_after: int, request_id=None) -> None:
    """HTTP 429 with Retry-After, its body a JSON-RPC error answering the request's id."""
    body = _rpc_error(
        -32000,
        f"Too many requests from this address; retry in {retry_after} seconds, "
        f"or read the static datasets: {settings.SITE_URL}{DATASETS_INDEX}",
        request_id,
    )
    await _json(send, 429, body, [(b"retry-after", str(retry_after).encode())])


async def _too_large(send) -> None:
    """HTTP 413 as soon as the body is known to be over the limit (its Content-Length, or
    what was read): the SDK read the whole upload first, then answered in plain text."""
    limit_mb = BODY_PEEK_LIMIT >> 20
    await _json(send, 413, _rpc_error(-32600, f"Request body too large (at most {limit_mb} MB)."))


class _JsonErrors:
    """The send of the SDK's app, where an error answer in plain text ("Invalid Host header",
    "Invalid Content-Type header") becomes a JSON-RPC error, status and other headers kept:
    a client reads every answer of /mcp as JSON; and an error in JSON that answers id null
    (the SDK's 406 for an Accept without JSON) answers the request's id when it has one.
    Notes whether an answer started, so that an exception before it gets a JSON 500
    (McpMount._one)."""

    def __init__(self, send, request_id=None):
        self.send = send
        self.request_id = request_id
        self.started = False
        self.held: dict | None = None
        self.text = b""

    async def __call__(self, message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            if message["status"] >= 400:
                self.held = message
                return
        elif message["type"] == "http.response.body" and self.held is not None:
            self.text += message.get("body", b"")
            if message.get("more_body"):
                return
            await self.flush()
            return
        await self.send(message)

    async def flush(self) -> None:
        """Send the held error as JSON (its last body message came, or none will)."""
        if self.held is None:
            return
        start, self.held = self.held, None
        headers = [
            (name, value)
            for name, value in start.get("headers") or []
            if name not in (b"content-type", b"content-length")
        ]
        await _json(self.send, start["status"], self._error(start["status"]), headers)

    def _error(self, status: int) -> bytes:
        """The held answer as a JSON-RPC error answering the request's id."""
        try:
            answer = orjson.loads(self.text)
        except orjson.JSONDecodeError:
            answer = None
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            if answer.get("id") is None and self.request_id is not None:
                answer["id"] = self.request_id
            return orjson.dumps(answer)
        text = self.text.decode("utf-8", "replace").strip() or "Request refused."
        code = -32603 if status >= 500 else -32600
        return _rpc_error(code, text[:200], self.request_id)


async def _only_post(send) -> None:
    """HTTP 405: stateless and answering in JSON, the server has no stream to open on GET and
    no session to end on DELETE (the streamable HTTP transport allows 405 for both), and
    nothing else is served (PUT, OPTIONS…): one `Allow: POST` for all. The SDK would hold a
    GET open with an event stream that never carries a message."""
    body = _rpc_error(-32000, "Method not allowed: send JSON-RPC with POST.")
    await _json(send, 405, body, [(b"allow", b"POST")])


def _replay(messages: list[dict], receive):
    """A receive that gives `messages` again, then goes on with the client's."""
    pending = list(messages)

    async def replayed():
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


def _case_folded(scope):
    """Host names, origins and media types are case-insensitive (Django compares hosts so;
    RFC 6454 §4, RFC 9110 §8.3.1); the SDK's checks are not (`APPLICATION/JSON` got 415,
    an Origin of `http://LOCALHOST:8000` 403)."""
    headers = [
        (name, value.lower()) if name in (b"host", b"origin", b"content-type") else (name, value)
        for name, value in scope["headers"]
    ]
    return {**scope, "headers": headers}


class _Status:
    """A send that notes the answer's HTTP status."""

    def __init__(self, send):
        self.send = send
        self.status: int | None = None

    async def __call__(self, message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self.send(message)


class _Kept:
    """A send that keeps the answer's body (a batch's message answered alone)."""

    def __init__(self):
        self.body = b""

    async def __call__(self, message) -> None:
        if message["type"] == "http.response.body":
            self.body += message.get("body", b"")


async def _over_rate(scope, items: list) -> int | None:
    """Count each message of a request (tool calls against READ_RATE_LIMIT, the rest against
    the protocol's share): the seconds to wait when one is over its limit, else None."""
    rate = parse_rate(settings.READ_RATE_LIMIT)
    if rate is None:
        return None
    for item in items:
        if _calls_a_tool(item):
            allowed, retry_after = await anyio.to_thread.run_sync(_count, scope, rate)
        else:
            protocol = (rate[0] * PROTOCOL_RATE_FACTOR, rate[1])
            allowed, retry_after = await anyio.to_thread.run_sync(
                _count, scope, protocol, "mcp-protocol"
            )
        if not allowed:
            return retry_after
    return None


class McpMount:
    """The ASGI app at /mcp. Each lifespan builds a fresh transport (the SDK's session manager
    runs once per instance), so the same application object can be served again: a reloaded
    server, or one live server after another in the tests. Lifespans must not overlap."""

    def __init__(self, server: BrejaMCPServer):
        self.server = server
        self.app = self._build()

    def _build(self):
        security = transport_security(list(settings.ALLOWED_HOSTS))
        self.guard = TransportSecurityMiddleware(security)
        return self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            transport_security=security,
        )

    async def _refused(self, scope, receive, send, *, post: bool) -> bool:
        """The SDK's Host, Origin and (on a POST) Content-Type checks, before anything reads
        the body and whatever the method: a page of a refused origin got "invalid request"
        (400) for a malformed body, and its requests counted against the address's rate,
        instead of 403; a GET under another Host got 405, not 421."""
        refusal = await self.guard.validate_request(Request(scope), is_post=post)
        if refusal is None:
            return False
        errors = _JsonErrors(send)
        await refusal(scope, receive, errors)
        await errors.flush()
        return True

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            scope = _case_folded(scope)
            post = scope["method"] == "POST"
            if await self._refused(scope, receive, send, post=post):
                return
            if not post:
                await _only_post(send)
                return
            try:  # in time and up to the SDK's limit (config/bodies.py)
                messages = await read_body(scope, receive, BODY_PEEK_LIMIT)
            except BodyGone:
                return
            except BodyTooLarge:
                await _too_large(send)
                return
            except BodyLate as late:
                # the rest of that body may still come: nothing more is read on this connection
                await _json(send, 408, _rpc_error(-32600, str(late)), [(b"connection", b"close")])
                return
            body = body_of(messages)
            data = _parsed(body)
            version = _protocol_version(scope)
            if isinstance(data, list) and data and version in BATCH_VERSIONS:
                await self._batch(scope, data, receive, send)
                return
            refused = await _over_rate(scope, [data])
            if refused is not None:
                await _too_many_requests(send, refused, _request_id(data))
                return
            unsupported = _unsupported_version(scope)
            if unsupported is not None:
                await _json(send, 400, _rpc_error(INVALID_REQUEST, unsupported, _request_id(data)))
                return
            await self._one(scope, data, _replay(messages, receive), send)
            return
        await self.app(scope, receive, send)

    async def _one(self, scope, data, receive, send) -> int:
        """One JSON-RPC message (its body in `receive`): checked here, then the SDK's.
        Returns the answer's HTTP status."""
        invalid = _invalid_request(data)
        if invalid is not None:
            code, message, request_id = invalid
            await _json(send, 400, _rpc_error(code, message, request_id))
            return 400
        request_id = _call_with_bad_arguments(data)
        if request_id is not _NO_CALL:
            modern = _protocol_version(scope) in MODERN_PROTOCOL_VERSIONS
            await _bad_arguments(send, request_id, modern)
            return 200
        status = _Status(send)
        send = _JsonErrors(status, _request_id(data))
        try:
            await self.app(scope, receive, send)
        except Exception:
            if send.started and send.held is None:
                raise
            logger.exception("MCP: unhandled error")
            send.held = None  # an error answer begun, then the exception: ours instead
            await _json(status, 500, _rpc_error(-32603, "Internal error.", _request_id(data)))
            return 500
        await send.flush()  # an error answer begun without its body
        return status.status or 500

    async def _batch(self, scope, items: list, receive, send) -> None:
        """A JSON-RPC batch of a 2025-03-26 (or older) client: each message answered as if
        sent alone (re-encoded by json, which writes back what it read: NaN, 1e400, integers
        past 64 bits), in order, the answers in one array (200). Notifications and responses
        only: 202, or 400 with the errors when one is refused (2025-03-26, "Sending Messages").
        Every message counts against the rate limits; `initialize` may not be batched
        (2025-03-26, "Lifecycle"); a refusal of the whole request (406) is the batch's."""
        if len(items) > BATCH_MAX:
            message = f"Invalid Request: a batch holds at most {BATCH_MAX} messages."
            await _json(send, 400, _rpc_error(INVALID_REQUEST, message))
            return
        refused = await _over_rate(scope, items)
        if refused is not None:
            await _too_many_requests(send, refused)
            return
        answers = []
        for item in items:
            if isinstance(item, dict) and item.get("method") == "initialize":
                message = "Invalid Request: initialize may not be part of a batch."
                answers.append(_error_item(INVALID_REQUEST, message, _request_id(item)))
                continue
            try:
                body = json.dumps(item).encode()
            except RecursionError:
                message = "Invalid Request: the message is nested too deep."
                answers.append(_error_item(INVALID_REQUEST, message, _request_id(item)))
                continue
            headers = [(n, v) for n, v in scope["headers"] if n != b"content-length"]
            alone = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
            kept = _Kept()
            message = {"type": "http.request", "body": body, "more_body": False}
            status = await self._one(alone, item, _replay([message], receive), kept)
            if status in (406, 415):  # the request's media types: not this message's fault
                await _json(send, status, kept.body)
                return
            if kept.body.strip():
                answers.append(orjson.loads(kept.body))
        if any(_a_request(item) for item in items):
            await _json(send, 200, orjson.dumps(answers))
        elif answers:
            await _json(send, 400, orjson.dumps(answers))
        else:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    @contextlib.asynccontextmanager
    async def lifespan(self):
        self.app = self._build()
        async with self.server.session_manager.run():
            yield


def build_asgi_app() -> tuple[Any, Callable[[], AbstractAsyncContextManager]]:
    """(the ASGI app answering /mcp, a factory of the lifespan that runs its session manager)."""
    mount = McpMount(build_server())
    return mount, mount.lifespan
