"""The MCP server over real HTTP with the official client: every tool, the same answers as the
REST API, tool errors, protocol errors, Host/Origin protection and degraded mode."""

import json
import logging

import anyio
import httpx2
import pytest
from django.core.cache import cache
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from beers import degraded

pytestmark = [pytest.mark.live, pytest.mark.django_db]

TOOL_NAMES = {
    "price_per_litre",
    "search_deals",
    "cheapest_now",
    "get_venue",
    "list_neighbourhoods",
    "price_index",
    "catalog",
}
# Computed at the instant of each answer: the two doors asked a moment apart differ only here.
CLOCK_FIELDS = ("as_of", "local_time")


def session_run(live, work):
    """Open a session with the official client over streamable HTTP and run `work(session)`."""

    async def main():
        async with (
            httpx2.AsyncClient(timeout=20) as http,
            streamable_http_client(live.mcp_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return anyio.run(main)


def call(live, name, arguments=None):
    async def work(session):
        await session.list_tools()  # lets the client check structured content against the schema
        return await session.call_tool(name, arguments or {})

    return session_run(live, work)


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text
    text = result.content[0].text
    assert json.loads(text) == result.structured_content  # the same JSON, as text
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error
    return result.content[0].text


def without_clock(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in CLOCK_FIELDS}


# --- the tools, listed ----------------------------------------------------------------------


def test_lists_the_seven_tools_read_only_with_schemas_and_descriptions(live):
    tools = session_run(live, lambda s: s.list_tools()).tools
    assert {t.name for t in tools} == TOOL_NAMES
    for tool in tools:
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.output_schema and tool.output_schema["type"] == "object"
        assert len(tool.description) > 150, tool.name
    by_name = {t.name: t for t in tools}
    assert "get_venue" in by_name["search_deals"].description  # how the tools chain
    assert "metres" in by_name["cheapest_now"].description
    assert "ml" in by_name["price_per_litre"].description
    search = by_name["search_deals"].input_schema
    assert search["required"] == ["city"]
    assert search["additionalProperties"] is False
    assert search["properties"]["limit"] == {
        "type": ["integer", "null"],
        "minimum": 1,
        "maximum": 50,
        "default": 20,
        "description": "how many prices to return",
        "title": "Limit",
    }
    assert "default" not in search["properties"]["city"]
    assert by_name["get_venue"].input_schema["required"] == ["city", "venue"]


# --- the same answers as the REST API ---------------------------------------------------------


SEARCHES = [
    {"city": "sao-paulo", "limit": 50},
    {"city": "sao-paulo", "neighbourhood": "vila-madalena", "lang": "en"},
    {"city": "rio-de-janeiro", "format": "lata", "max_price_per_litre": 30},
    {"city": "sao-paulo", "kind": "open_bar"},
    {"city": "manaus", "brand": "brahma", "kind": "happy_hour", "limit": 5},
]


@pytest.mark.parametrize("query", SEARCHES)
def test_search_deals_answers_what_the_api_answers(live, api, query):
    tool = ok(call(live, "search_deals", query))
    cache.clear()  # the API computes its own answer, not the one the tool just cached
    rest = api.get("/api/v1/search", params=query)
    assert rest.status_code == 200
    assert tool["count"] > 0  # every query above has prices in the demo data
    assert without_clock(tool) == without_clock(rest.json())
    assert tool["source"].endswith("ODbL 1.0") and tool["as_of"]


def test_search_deals_is_not_empty_and_ranked_by_price_per_litre(live):
    deals = ok(call(live, "search_deals", {"city": "sao-paulo", "limit": 50}))["deals"]
    assert len(deals) == 50
    per_litre = [d["price_per_litre_brl"] for d in deals]
    assert per_litre == sorted(per_litre)


def test_a_tool_and_the_api_share_one_answer_cache(live, api):
    tool = call(live, "search_deals", {"city": "recife", "limit": 7})
    rest = api.get("/api/v1/search", params={"city": "recife", "limit": "7"})
    assert rest.content.decode() == tool.content[0].text  # the cached bytes, as_of included


CHEAPEST = [
    {"city": "sao-paulo", "limit": 50},
    {"city": "sao-paulo", "lat": -23.5614, "lng": -46.6910, "radius_m": 3000, "limit": 20},
    {"city": "rio-de-janeiro", "format": "garrafa", "lang": "en"},
]


@pytest.mark.parametrize("query", CHEAPEST)
def test_cheapest_now_answers_what_the_api_answers(live, api, query):
    tool = ok(call(live, "cheapest_now", query))
    cache.clear()
    rest = api.get("/api/v1/cheapest", params=query)
    assert rest.status_code == 200
    assert tool["count"] > 0
    assert without_clock(tool) == without_clock(rest.json())
    assert tool["local_time"]
    if "lat" in query:
        assert tool["deals"] and all(d["distance_m"] <= query["radius_m"] for d in tool["deals"])


@pytest.mark.parametrize("lang", ["pt-BR", "en"])
def test_get_venue_by_the_slug_of_a_deal_url_answers_what_the_api_answers(live, api, lang):
    deal = ok(call(live, "search_deals", {"city": "sao-paulo", "lang": lang}))["deals"][0]
    slug = deal["url"].rstrip("/").rsplit("/", 1)[1]
    tool = ok(call(live, "get_venue", {"city": "sao-paulo", "venue": slug, "lang": lang}))
    assert tool["venue"]["name"] == deal["venue"] and tool["venue"]["slug"] == slug
    assert deal["id"] in [d["id"] for d in tool["deals"]]
    cache.clear()
    rest = api.get(f"/api/v1/venues/{tool['venue']['id']}", params={"lang": lang})
    assert rest.status_code == 200
    assert without_clock(tool) == without_clock(rest.json())


# --- the tools the API does not have ----------------------------------------------------------


def test_price_per_litre_converts_like_the_rankings(live):
    assert ok(call(live, "price_per_litre", {"price_brl": 12.9, "volume_ml": 600})) == {
        "price_per_litre_brl": 21.5,
        "litres": 0.6,
    }
    bucket = ok(call(live, "price_per_litre", {"price_brl": 29.9, "volume_ml": 355, "units": 5}))
    assert bucket == {"price_per_litre_brl": 16.85, "litres": 1.775}  # 16.845… rounds half up


def test_price_per_litre_of_a_listed_price_matches_the_listed_figure(live):
    deals = ok(call(live, "search_deals", {"city": "sao-paulo", "limit": 50}))["deals"]
    catalogue = {f["code"]: f["volume_ml"] for f in ok(call(live, "catalog"))["formats"]}
    single = [d for d in deals if "×" not in d["serving"]][:5]
    assert single
    for deal in single:
        figure = ok(
            call(
                live,
                "price_per_litre",
                {"price_brl": deal["price_brl"], "volume_ml": catalogue[deal["format"]]},
            )
        )
        assert figure["price_per_litre_brl"] == deal["price_per_litre_brl"]


def test_list_neighbourhoods_counts_what_search_deals_returns(live):
    answer = ok(call(live, "list_neighbourhoods", {"city": "sao-paulo"}))
    hoods = answer["neighbourhoods"]
    assert answer["city"] == "São Paulo" and answer["source"] and answer["as_of"]
    assert len(hoods) >= 3
    covered = [(-h["venues"], -h["deals"], h["slug"]) for h in hoods]
    assert covered == sorted(covered)  # most covered first
    for hood in hoods[:3]:
        regular = ok(
            call(
                live,
                "search_deals",
                {"city": "sao-paulo", "neighbourhood": hood["slug"], "limit": 50},
            )
        )["deals"]
        open_bars = ok(
            call(
                live,
                "search_deals",
                {
                    "city": "sao-paulo",
                    "neighbourhood": hood["slug"],
                    "kind": "open_bar",
                    "limit": 50,
                },
            )
        )["deals"]
        assert hood["deals"] == len(regular) + len(open_bars)
        assert hood["venues"] == len({d["url"] for d in regular + open_bars})
        assert hood["cheapest_price_per_litre_brl"] == regular[0]["price_per_litre_brl"]


def test_price_index_defaults_to_the_latest_month_and_takes_a_month(live):
    latest = ok(call(live, "price_index", {"city": "sao-paulo"}))
    assert latest["month"] and latest["items"] and latest["final"] is False
    # decisions.md: "the city's index (see datasets.md)": the file's envelope, city a slug
    assert latest["city"] == "sao-paulo" and latest["license"] == "ODbL-1.0"
    assert latest["attribution"] and latest["updated_at"]
    city_cell = next(c for c in latest["items"] if c["scope"] == "city")
    assert city_cell["key"] is None and city_cell["n"] > 0
    assert city_cell["min_cents"] <= city_cell["p25_cents"] <= city_cell["median_cents"]
    assert {c["month"] for c in latest["items"]} == {latest["month"]}
    year, month = map(int, latest["month"].split("-"))
    previous = f"{year - (month == 1):04d}-{(month - 2) % 12 + 1:02d}"
    earlier = ok(call(live, "price_index", {"city": "sao-paulo", "month": previous}))
    assert earlier["month"] == previous and earlier["final"] is True
    assert {c["month"] for c in earlier["items"]} <= {previous}
    empty = ok(call(live, "price_index", {"city": "sao-paulo", "month": "1999-01"}))
    assert empty["items"] == [] and empty["final"] is True
    for edge in ("0001-01", "9998-12"):
        assert ok(call(live, "price_index", {"city": "sao-paulo", "month": edge}))["items"] == []
    for beyond in ("0000-01", "9999-12"):  # no calendar holds them and the month after
        assert "YYYY-MM" in error_text(
            call(live, "price_index", {"city": "sao-paulo", "month": beyond})
        )


def test_catalog_lists_cities_brands_and_formats_other_tools_accept(live):
    answer = ok(call(live, "catalog"))
    assert answer["source"].endswith("ODbL 1.0") and answer["as_of"]
    slugs = [c["slug"] for c in answer["cities"]]
    assert "sao-paulo" in slugs and all(c["deal_count"] >= 0 for c in answer["cities"])
    assert {"garrafa_600", "lata_350"} <= {f["code"] for f in answer["formats"]}
    brand = answer["brands"][0]["slug"]
    assert not call(live, "search_deals", {"city": slugs[0], "brand": brand}).is_error


# --- bad arguments are tool errors that say what to send ----------------------------------------


@pytest.mark.parametrize(
    "name, arguments, words",
    [
        ("search_deals", {"city": "atlantis"}, ["city", "atlantis", "sao-paulo"]),
        ("search_deals", {"city": "São Paulo"}, ["city", "city slug", "lowercase"]),
        ("search_deals", {"city": "sao-paulo", "limit": 0}, ["limit", "from 1 to 50"]),
        (
            "search_deals",
            {"city": "sao-paulo", "kind": "cheap"},
            ["kind", "regular, happy_hour, promo, combo, open_bar"],
        ),
        ("search_deals", {}, ["city", "Required"]),
        (
            "cheapest_now",
            {"city": "sao-paulo", "lat": -23.5, "lng": -46.6, "radius_m": 50},
            ["radius_m", "from 100 to 10000"],
        ),
        ("cheapest_now", {"city": "sao-paulo", "lat": 123}, ["lat", "-90 to 90"]),
        ("get_venue", {"city": "sao-paulo", "venue": "Bar Do Zé"}, ["venue", "bar slug"]),
        (
            "get_venue",
            {"city": "sao-paulo", "venue": "no-such-bar"},
            ["venue", "no-such-bar", "url"],
        ),
        ("get_venue", {"city": "atlantis", "venue": "bar"}, ["city", "atlantis", "sao-paulo"]),
        ("list_neighbourhoods", {"city": "atlantis"}, ["city", "atlantis", "catalog"]),
        ("price_index", {"city": "sao-paulo", "month": "2026-13"}, ["month", "YYYY-MM"]),
        ("price_per_litre", {"price_brl": 0, "volume_ml": 600}, ["price_brl", "greater than 0"]),
        ("price_per_litre", {"price_brl": 10, "volume_ml": 600, "units": 51}, ["units", "1 to 50"]),
        # a list is no value of any argument's type (not "the last item wins")
        ("search_deals", {"city": ["nope", "sao-paulo"]}, ["city", "city slug"]),
        ("search_deals", {"city": "sao-paulo", "limit": [999, 1]}, ["limit", "from 1 to 50"]),
        ("search_deals", {"city": "sao-paulo", "lang": ["en"]}, ["lang", "pt-BR, en"]),
        ("price_per_litre", {"price_brl": [1, 2], "volume_ml": 600}, ["price_brl", "number"]),
        ("price_index", {"city": "sao-paulo", "month": "2026-10\n"}, ["month", "YYYY-MM"]),
        # JSON arguments: a number is a JSON number, as the input schemas say (not "5")
        ("search_deals", {"city": "sao-paulo", "limit": "5"}, ["limit", "integer"]),
        ("price_per_litre", {"price_brl": "12", "volume_ml": 600}, ["price_brl", "number"]),
        ("price_per_litre", {"price_brl": 12, "volume_ml": "600"}, ["volume_ml", "integer"]),
        ("cheapest_now", {"city": "sao-paulo", "lat": "-23.5", "lng": -46.6}, ["lat", "number"]),
        ("search_deals", {"city": "sao-paulo", "limit": "20"}, ["limit", "not a string"]),
        # an argument the tool does not take: a misspelt filter must not widen the answer
        (
            "search_deals",
            {"city": "sao-paulo", "neighborhood": "vila-madalena"},
            ["neighborhood", "not an argument of search_deals", "Did you mean neighbourhood?"],
        ),
        ("cheapest_now", {"city": "sao-paulo", "kind": "happy_hour"}, ["kind", "radius_m"]),
        ("catalog", {"x": 1}, ["'x'", "not an argument of catalog", "takes: none"]),
    ],
)
def test_bad_arguments_are_tool_errors_naming_the_argument(live, name, arguments, words):
    text = error_text(call(live, name, arguments))
    for word in words:
        assert word in text, text
    assert "Traceback" not in text and "pydantic" not in text


# --- protocol errors -------------------------------------------------------------------------


def test_a_value_echoed_in_a_message_is_cut_short(live):
    text = error_text(call(live, "search_deals", {"city": "a" * 100_000}))
    assert text.startswith("city: unknown city 'aaa") and len(text) < 1000, len(text)
    text = error_text(call(live, "get_venue", {"city": "sao-paulo", "venue": "b" * 100_000}))
    assert "no bar 'bbb" in text and len(text) < 1000, len(text)


def test_many_unknown_arguments_name_the_first_five_and_count_the_rest(live):
    """Each unknown name got its closest match: 130,000 of them took 2.4 s of the event loop
    (every request of the process waiting) and answered 11 MB."""
    arguments = {"city": "sao-paulo", **{f"neighbourhood{i:05}": 0 for i in range(5000)}}
    text = error_text(call(live, "search_deals", arguments))
    assert text.count("not an argument of search_deals") == 5
    assert "'neighbourhood00004'" in text and "neighbourhood00005" not in text
    assert "and 4995 more." in text and "Arguments it takes: city" in text
    assert len(text) < 1500, len(text)


def test_optional_arguments_sent_as_null_take_their_defaults(live):
    """Agents often send every parameter; the input schemas admit null where the tools do."""
    nulls = {"limit": None, "lang": None, "kind": None, "neighbourhood": None}
    answer = ok(call(live, "search_deals", {"city": "sao-paulo", **nulls}))
    assert answer["count"] == 20
    converted = ok(call(live, "price_per_litre", {"price_brl": 6, "volume_ml": 600, "units": None}))
    assert converted["price_per_litre_brl"] == 10.0


def test_an_unknown_tool_is_a_json_rpc_error(live):
    async def work(session):
        with pytest.raises(MCPError) as caught:
            await session.call_tool("drink_for_free", {})
        return caught.value

    error = session_run(live, work)
    assert error.code == -32602  # invalid params, as the MCP specification names it
    assert "drink_for_free" in error.message and "search_deals" in error.message


HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_malformed_json_rpc_gets_json_rpc_errors(live, api):
    broken = api.post("/mcp", content=b'{"jsonrpc": "2.0", "id": 1, "method": ', headers=HEADERS)
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == -32700  # parse error
    not_rpc = api.post("/mcp", json={"hello": "world"}, headers=HEADERS)
    assert not_rpc.status_code == 400
    assert not_rpc.json()["error"]["code"] in (-32600, -32602)  # invalid request
    unknown = api.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "beers/free"}, headers=HEADERS
    )
    assert unknown.json()["error"]["code"] == -32601 and unknown.json()["id"] == 7


@pytest.mark.parametrize(
    ("body", "answer_id", "words"),
    [
        ("[]", None, "an empty batch"),
        ('"hello"', None, "JSON object"),
        ("42", None, "JSON object"),
        ("null", None, "JSON object"),
        ('{"id":3,"method":"tools/list"}', 3, '"jsonrpc" must be "2.0"'),
        ('{"jsonrpc":"1.0","id":"a","method":"tools/list"}', "a", '"jsonrpc" must be "2.0"'),
        ('{"jsonrpc":"2.0","id":4}', 4, '"method"'),
        ('{"jsonrpc":"2.0","id":5,"method":7}', 5, '"method" must be a string'),
        ('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None, '"id" must be'),
        ('{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None, '"id" must be'),
        ('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', None, '"id" must be'),
        ('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call"}', None, '"id" must be'),
    ],
)
def test_a_body_that_is_no_json_rpc_request_is_an_invalid_request(
    live, api, body, answer_id, words
):
    """JSON-RPC 2.0's -32600 with a readable message. The SDK answered -32602 and a dump of
    its validation errors, and a request with an invalid id an empty 202 (a notification):
    no answer ever came."""
    answer = api.post("/mcp", content=body, headers=HEADERS)
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/json"
    data = answer.json()
    assert data["id"] == answer_id and data["error"]["code"] == -32600
    assert words in data["error"]["message"] and "pydantic" not in data["error"]["message"]


@pytest.mark.parametrize("params", [["catalog"], "catalog", 3, True])
def test_params_that_are_not_an_object_are_invalid_params(live, api, params):
    """MCP's params are an object: the SDK answered id null and a 1,000-character dump of its
    validation errors."""
    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}
    answer = api.post("/mcp", json=body, headers=HEADERS)
    assert answer.status_code == 400
    assert answer.json()["id"] == 9
    assert answer.json()["error"] == {
        "code": -32602,
        "message": 'Invalid params: "params" must be an object.',
    }


def test_prompts_and_resources_are_not_found_without_a_traceback(live, api, caplog):
    """The server has only tools: an unknown prompt is -32602 and an unknown resource -32002,
    as the MCP specification names them (the SDK answered code 0 and logged two tracebacks
    per request: anyone could fill the error log)."""
    asked = [
        ("prompts/get", {"name": "x"}, -32602, "Unknown prompt: 'x'."),
        ("resources/read", {"uri": "breja://x"}, -32002, "Resource not found."),
    ]
    with caplog.at_level(logging.WARNING):
        for method, params, code, words in asked:
            body = {"jsonrpc": "2.0", "id": 4, "method": method, "params": params}
            answer = api.post("/mcp", json=body, headers=HEADERS).json()
            assert answer["id"] == 4 and answer["error"]["code"] == code, answer
            assert answer["error"]["message"].startswith(words)
            assert "search_deals" in answer["error"]["message"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def test_no_subscription_stream_is_opened_and_no_list_change_advertised(live, api):
    """Stateless, its tools fixed: subscriptions/listen (2026-07-28) held the POST open for
    ever, a ping every 15 s, and acknowledged subscriptions to resources that do not exist."""
    headers = {**HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}
    params = {"notifications": {"toolsListChanged": True}, "_meta": MODERN_META}
    body = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}
    answer = api.post("/mcp", json=body, headers=headers, timeout=10)
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["id"] == 1 and answer.json()["error"]["code"] == -32601
    headers["Mcp-Method"] = "server/discover"
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "server/discover",
        "params": {"_meta": MODERN_META},
    }
    capabilities = api.post("/mcp", json=body, headers=headers).json()["result"]["capabilities"]
    assert capabilities["tools"].get("listChanged") in (None, False), capabilities
    assert not capabilities.get("resources", {}).get("subscribe"), capabilities


@pytest.mark.parametrize("version", ["1999-01-01", "garbage", "2025-13-45"])
def test_an_unsupported_protocol_version_header_says_so(live, api, version):
    """The transport's 400 for a version not served, with a message about the header (the
    SDK's spoke of `params._meta`)."""
    body = {"jsonrpc": "2.0", "id": 6, "method": "ping"}
    answer = api.post("/mcp", json=body, headers={**HEADERS, "MCP-Protocol-Version": version})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert answer.json()["id"] == 6 and error["code"] == -32600
    assert error["message"].startswith(f"Unsupported MCP-Protocol-Version: '{version}'.")
    assert "2025-06-18" in error["message"]
    for served in ("2025-06-18", "2025-11-25"):
        ok = api.post("/mcp", json=body, headers={**HEADERS, "MCP-Protocol-Version": served})
        assert ok.status_code == 200 and ok.json()["result"] == {}, served


def test_a_2025_03_26_client_may_send_batches(live, api):
    """MCP 2025-03-26: servers "MUST support receiving JSON-RPC batches". Each message is
    answered as if alone, in one array; notifications get no answer; bad messages their own
    error; initialize is not batched."""
    call = {"name": "price_per_litre", "arguments": {"price_brl": 6, "volume_ml": 600}}
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "t", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": ["x"]},
        {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 6, "method": "beers/free"},
        42,
    ]
    for version in ({}, {"MCP-Protocol-Version": "2025-03-26"}):
        answer = api.post("/mcp", json=batch, headers={**HEADERS, **version})
        assert answer.status_code == 200, answer.text
        answers = answer.json()
        assert [a.get("id") for a in answers] == [1, "t", 3, 4, 5, 6, None]
        assert answers[0]["result"] == {}
        assert {t["name"] for t in answers[1]["result"]["tools"]} == TOOL_NAMES
        assert answers[2]["result"]["structuredContent"]["price_per_litre_brl"] == 10.0
        assert answers[3]["error"]["code"] == -32602
        assert "initialize" in answers[4]["error"]["message"]
        assert answers[5]["error"]["code"] == -32601
        assert answers[6]["error"]["code"] == -32600
    notes = [{"jsonrpc": "2.0", "method": "notifications/initialized"}] * 2
    quiet = api.post("/mcp", json=notes, headers=HEADERS)
    assert quiet.status_code == 202 and quiet.content == b""


def _raw(api, content: str, **headers):
    return api.post("/mcp", content=content.encode(), headers={**HEADERS, **headers}, timeout=10)


def test_what_orjson_cannot_write_back_is_never_a_500(live, api, settings):
    """A lone surrogate (json reads it, orjson and the SDK do not), nesting past orjson's 255
    levels of writing, integers past 64 bits: each was a plain-text 500 somewhere."""
    lone = '{"jsonrpc":"%s","id":"\\ud800","method":"ping"%s}'
    deep = "[" * 300 + "]" * 300
    bodies = [
        "[" + lone % ("2.0", "") + "]",
        lone % ("1.0", ""),
        lone % ("2.0", ',"params":5'),
        '[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + deep + "}}]",
        '[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":NaN,"b":100000000000000000000000}}]',
        '{"jsonrpc":"2.0","id":100000000000000000000000,"method":"ping","params":{"a":NaN}}',
    ]
    for body in bodies:
        answer = _raw(api, body)
        assert answer.headers["content-type"] == "application/json", body[:80]
        assert answer.status_code in (200, 400), (body[:80], answer.status_code)
    assert _raw(api, lone % ("2.0", ""), **{"MCP-Protocol-Version": "garbage"}).status_code == 400
    settings.READ_RATE_LIMIT = "1/hour"
    cache.clear()
    _raw(api, lone % ("2.0", ""))
    limited = _raw(api, lone % ("2.0", ""))
    assert limited.status_code == 429 and limited.json()["id"] is None


def test_a_batch_member_is_read_as_it_would_be_alone(live, api):
    """Members were re-encoded by orjson, which writes NaN and 1e400 as null: a bad filter
    became no filter (the whole city) and a bad count the default."""
    for arguments in (
        '{"city":"recife","brand":NaN}',
        '{"price_brl":10,"volume_ml":350,"units":1e400}',
    ):
        name = "search_deals" if "city" in arguments else "price_per_litre"
        message = (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call",'
            f'"params":{{"name":"{name}","arguments":{arguments}}}}}'
        )
        alone = _raw(api, message).json()
        batched = _raw(api, f"[{message}]").json()
        assert batched == [alone]
        assert alone["result"]["isError"] is True, alone


def test_a_batch_of_notifications_one_refused_is_400(live, api):
    """2025-03-26: input of notifications or responses only that the server cannot accept
    gets an HTTP error status (it got 200)."""
    good = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    for bad in ({**good, "params": 5}, {"jsonrpc": "2.0", "method": 5}):
        answer = api.post("/mcp", json=[good, bad], headers=HEADERS)
        assert answer.status_code == 400
        assert [a["id"] for a in answer.json()] == [None]


def test_a_refused_media_type_answers_the_request_id_and_is_the_batch_s(live, api):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {**HEADERS, "Accept": "text/html"}
    alone = api.post("/mcp", json=ping, headers=headers)
    assert alone.status_code == 406 and alone.json()["id"] == 1
    batched = api.post("/mcp", json=[ping, {**ping, "id": 2}], headers=headers)
    assert batched.status_code == 406


@pytest.mark.parametrize(
    "body",
    [
        '{"jsonrpc":"2.0","id":1.5,"result":{}}',
        '{"jsonrpc":"2.0","id":1,"error":"bad"}',
        '{"jsonrpc":"2.0","id":1,"result":5}',
        '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
    ],
)
def test_a_malformed_response_is_an_invalid_request(live, api, body):
    for content in (body, f"[{body}]"):
        answer = _raw(api, content)
        assert answer.status_code == 400, content
        data = answer.json()
        error = (data[0] if isinstance(data, list) else data)["error"]
        assert error["code"] == -32600 and "pydantic" not in error["message"]
    fine = _raw(api, '{"jsonrpc":"2.0","id":1,"result":{}}')
    assert fine.status_code == 202


def test_a_batch_under_an_unsupported_version_says_so(live, api):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {**HEADERS, "MCP-Protocol-Version": "2025-03-26x"}
    answer = api.post("/mcp", json=[ping], headers=headers)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"].startswith("Unsupported MCP-Protocol-Version")


def test_bad_arguments_say_their_result_type_in_2026_07_28(live, api):
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "catalog", "arguments": 5, "_meta": MODERN_META},
    }
    headers = {**HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
    result = api.post("/mcp", json=body, headers=headers).json()["result"]
    assert result["isError"] is True and result["resultType"] == "complete"


def test_batches_are_refused_from_2025_06_18_on_and_past_twenty(live, api):
    one = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for version in ("2025-06-18", "2025-11-25"):
        headers = {**HEADERS, "MCP-Protocol-Version": version}
        answer = api.post("/mcp", json=[one], headers=headers)
        assert answer.status_code == 400
        assert "Batches are not part of MCP 2025-06-18" in answer.json()["error"]["message"]
    many = api.post("/mcp", json=[one] * 21, headers=HEADERS)
    assert many.status_code == 400 and "at most 20" in many.json()["error"]["message"]
    assert api.post("/mcp", json=[one] * 20, headers=HEADERS).status_code == 200


def test_media_types_and_notifications_still_pass(live, api):
    """Media types are case-insensitive (RFC 9110): `APPLICATION/JSON` got 415."""
    listed = _list_tools_over_raw_http(api, **{"Content-Type": "Application/JSON; Charset=UTF-8"})
    assert listed.status_code == 200 and listed.json()["id"] == 1
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert api.post("/mcp", json=note, headers=HEADERS).status_code == 202
    ids = [
        api.post("/mcp", json={**note, "id": i, "method": "ping"}, headers=HEADERS)
        for i in ("x", 0)
    ]
    assert [r.json()["id"] for r in ids] == ["x", 0]


@pytest.mark.parametrize("arguments", [[], "sao-paulo", 3, True, "NaN"])
def test_arguments_that_are_not_an_object_get_a_tool_error(live, api, arguments):
    """decisions.md: bad arguments give a tool error with a readable message, never a
    protocol error (the SDK answered -32602 "Invalid request parameters")."""
    body = {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "tools/call",
        "params": {"name": "search_deals", "arguments": arguments},
    }
    content = json.dumps(body)
    if arguments == "NaN":  # not strict JSON, but the SDK's parser reads it
        content = content.replace('"NaN"', "NaN")
    answer = api.post("/mcp", content=content, headers=HEADERS)
    assert answer.status_code == 200
    assert answer.json()["id"] == 11
    result = answer.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("arguments: Must be an object")


def test_mcp_with_a_trailing_slash_is_served_not_redirected(live, api):
    """The SDK redirected /mcp/ to an address built from the request's Host and scheme (http
    behind a TLS proxy, any port), not SITE_URL."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    answer = api.post("/mcp/", json=body, headers=HEADERS, follow_redirects=False)
    assert answer.status_code == 200
    assert {t["name"] for t in answer.json()["result"]["tools"]} == TOOL_NAMES


def test_mcp_answers_carry_the_sites_security_headers(live, api, settings):
    settings.SECURE_HSTS_SECONDS = 3600
    answer = _list_tools_over_raw_http(api)
    assert answer.status_code == 200
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "same-origin"
    assert "strict-transport-security" not in answer.headers  # plain HTTP: not said
    assert _only_post_answer(api).headers["x-content-type-options"] == "nosniff"


def test_mcp_over_plain_http_is_sent_to_https_like_every_page(live, api, settings):
    """SECURE_SSL_REDIRECT for the whole host: a 308 (a POST stays a POST) to the canonical
    host, not the one the request names; from a trusted proxy that says https, served."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SITE_URL = "http://breja.example"
    settings.TRUSTED_PROXY_CIDRS = []
    moved = api.post(
        "/mcp?x=1", json={}, headers={**HEADERS, "Host": "evil.example"}, follow_redirects=False
    )
    assert moved.status_code == 308
    assert moved.headers["location"] == "https://breja.example/mcp?x=1"
    # said by a client, not a trusted proxy
    assert _list_tools_over_raw_http(api, **{"X-Forwarded-Proto": "https"}).status_code == 308

    settings.TRUSTED_PROXY_CIDRS = ["127.0.0.1/32"]
    served = _list_tools_over_raw_http(api, **{"X-Forwarded-Proto": "https"})
    assert served.status_code == 200
    assert served.headers["strict-transport-security"].startswith("max-age=3600")


def _only_post_answer(api):
    return api.get("/mcp", headers=HEADERS, timeout=5)


def test_every_method_but_post_is_405_allow_post(live, api):
    """Stateless JSON answers: nothing could come over a GET stream, and no session ends;
    the other methods are not served either, and every 405 says the same."""
    for method in ("GET", "HEAD", "DELETE", "PUT", "PATCH", "OPTIONS"):
        response = api.request(method, "/mcp", headers=HEADERS, timeout=5)
        assert response.status_code == 405, method
        assert response.headers["allow"] == "POST"
        if method != "HEAD":
            assert response.json()["error"]["code"] == -32000
    assert _list_tools_over_raw_http(api).status_code == 200


def _list_tools_over_raw_http(api, **headers):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    return api.post("/mcp", json=body, headers={**HEADERS, **headers})


def test_host_header_protection_follows_allowed_hosts(live, api):
    for host in (f"127.0.0.1:{live.port}", f"localhost:{live.port}", "localhost", "LocalHost"):
        response = _list_tools_over_raw_http(api, Host=host)
        assert response.status_code == 200, host
        assert {t["name"] for t in response.json()["result"]["tools"]} == TOOL_NAMES
    assert _list_tools_over_raw_http(api, Host="evil.example").status_code == 421
    assert _list_tools_over_raw_http(api, Host=f"evil.example:{live.port}").status_code == 421
    assert _list_tools_over_raw_http(api, Origin="https://evil.example").status_code == 403
    for origin in (f"http://localhost:{live.port}", f"HTTP://LocalHost:{live.port}"):
        assert _list_tools_over_raw_http(api, Origin=origin).status_code == 200, origin
    assert _list_tools_over_raw_http(api, Origin="HTTPS://EVIL.example").status_code == 403


@pytest.mark.parametrize(
    ("headers", "status", "words"),
    [
        ({"Host": "evil.example"}, 421, "Host"),
        ({"Origin": "https://evil.example"}, 403, "Origin"),
        ({"Content-Type": "text/plain"}, 400, "Content-Type"),
    ],
)
def test_the_sdks_refusals_are_json_rpc_errors(live, api, headers, status, words):
    """The SDK answers these in plain text: every answer of /mcp is JSON for a client."""
    refused = _list_tools_over_raw_http(api, **headers)
    assert refused.status_code == status
    assert refused.headers["content-type"] == "application/json"
    error = refused.json()["error"]
    assert error["code"] == -32600 and words in error["message"]


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        b"not json",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"catalog","arguments":3}}',
        b'{"x":"' + b"a" * (5 << 20) + b'"}',
    ],
    ids=["batch", "null id", "not json", "bad arguments", "over 4 MB"],
)
def test_a_refused_host_or_origin_is_refused_whatever_the_body(live, api, body):
    """The Host and Origin checks come first: a malformed body from a refused origin got our
    400 "invalid request" (or 413, or a tool error), which told a foreign page more than 403."""
    for headers, status, words in (
        ({"Origin": "https://evil.example"}, 403, "Origin"),
        ({"Host": "evil.example"}, 421, "Host"),
    ):
        refused = api.post("/mcp", content=body, headers={**HEADERS, **headers})
        assert refused.status_code == status, headers
        assert refused.headers["content-type"] == "application/json"
        assert words in refused.json()["error"]["message"]


def test_a_refused_host_or_origin_is_refused_whatever_the_method(live, api):
    """decisions.md: another Host answers 421, another Origin 403; a GET or DELETE of a
    refused host got 405 (the method was checked first)."""
    for method in ("GET", "DELETE", "OPTIONS", "PUT"):
        for headers, status, words in (
            ({"Origin": "https://evil.example"}, 403, "Origin"),
            ({"Host": "evil.example"}, 421, "Host"),
        ):
            refused = api.request(method, "/mcp", headers=headers)
            assert refused.status_code == status, (method, headers)
            assert words in refused.json()["error"]["message"]
        assert api.request(method, "/mcp").status_code == 405, method


def test_nesting_past_the_parsers_depth_is_a_parse_error_not_a_crash(live, api):
    """orjson stops at 1024 levels and json's fallback raised RecursionError: a 500 in plain
    text for a 2 KB body."""
    for depth in (1100, 30_000):
        body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":'
        body += "[" * depth + "]" * depth + "}}"
        answer = api.post("/mcp", content=body, headers=HEADERS)
        assert answer.status_code == 400, depth
        assert answer.json()["error"]["code"] in (-32700, -32600), depth
    assert _list_tools_over_raw_http(api).status_code == 200


def test_a_body_over_4_mb_is_413_json_before_it_is_read(live, api):
    big = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + b"a" * (5 << 20)
    declared = api.post("/mcp", content=big + b'"}}', headers=HEADERS)
    assert declared.status_code == 413
    assert declared.json()["error"]["code"] == -32600

    def chunks():  # no Content-Length: refused once 4 MB were read
        for start in range(0, len(big), 1 << 20):
            yield big[start : start + (1 << 20)]

    streamed = api.post("/mcp", content=chunks(), headers=HEADERS)
    assert streamed.status_code == 413
    assert "too large" in streamed.json()["error"]["message"]


# --- degraded mode ---------------------------------------------------------------------------


def test_degraded_mode_is_a_tool_error_pointing_at_the_static_datasets(live, api):
    degraded.switch_on(retry_after=77)
    try:
        text = error_text(call(live, "search_deals", {"city": "sao-paulo"}))
        assert "/api/v1/index.json" in text and "77" in text
        for name, arguments in [
            ("catalog", {}),
            ("list_neighbourhoods", {"city": "recife"}),
            ("get_venue", {"city": "recife", "venue": "x"}),
            ("cheapest_now", {"city": "recife"}),
            ("price_index", {"city": "recife"}),
        ]:
            assert "/api/v1/index.json" in error_text(call(live, name, arguments)), name
        assert api.get("/api/v1/search", params={"city": "sao-paulo"}).status_code == 503
        # the converter reads no data: it keeps working
        assert ok(call(live, "price_per_litre", {"price_brl": 7, "volume_ml": 350})) == {
            "price_per_litre_brl": 20.0,
            "litres": 0.35,
        }
    finally:
        degraded.switch_off()
    assert not call(live, "search_deals", {"city": "sao-paulo"}).is_error


# --- rate limit ------------------------------------------------------------------------------


def _call_over_raw_http(api, **headers):
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "price_per_litre", "arguments": {"price_brl": 7, "volume_ml": 350}},
    }
    return api.post("/mcp", json=body, headers={**HEADERS, **headers})


def test_mcp_tool_calls_are_rate_limited_per_address_in_their_own_group(live, api, settings):
    """READ_RATE_LIMIT counts tool calls; the protocol around them (initialize, lists,
    notifications: a client opening a session per call sends three requests for one call)
    has four times as much room."""
    settings.READ_RATE_LIMIT = "3/hour"  # an hour: no window edge falls inside the test
    for _ in range(3):
        assert _call_over_raw_http(api).status_code == 200
        assert _list_tools_over_raw_http(api).status_code == 200
    refused = _call_over_raw_http(api)
    assert refused.status_code == 429
    assert 0 < int(refused.headers["Retry-After"]) <= 3600
    assert refused.json()["id"] == 2  # the request it answers (JSON-RPC: null if unknown)
    assert "/api/v1/index.json" in refused.json()["error"]["message"]
    # a call hidden in a batch, or spelled with escapes, is a call
    batch = rb'[{"jsonrpc": "2.0", "id": 3, "method": "tools\u002fcall", "params": {}}]'
    escaped = api.post("/mcp", content=batch, headers=HEADERS)
    assert escaped.status_code == 429
    # each message of a batch counts: 3 lists above, the batch's 4 and 5 more, 12 in all
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert api.post("/mcp", json=[listing] * 4, headers=HEADERS).status_code == 200
    for _ in range(5):
        assert _list_tools_over_raw_http(api).status_code == 200
    assert _list_tools_over_raw_http(api).status_code == 429
    # another address (through a trusted proxy) has its own count
    settings.TRUSTED_PROXY_CIDRS = ["127.0.0.1/32"]
    other = _list_tools_over_raw_http(api, **{"X-Forwarded-For": "203.0.113.9"})
    assert other.status_code == 200
    # the REST reads count in their own group
    assert api.get("/api/v1/search", params={"city": "recife"}).status_code == 200


def _asgi_run(app_behaviour) -> list[dict]:
    """The messages McpMount sends when the SDK's app behaves as given (after our checks)."""
    import asyncio

    from mcp.server.transport_security import TransportSecurityMiddleware

    from mcp_bridge.server import McpMount, transport_security

    sent: list[dict] = []
    mount = McpMount.__new__(McpMount)
    mount.app = app_behaviour
    mount.guard = TransportSecurityMiddleware(transport_security(["localhost"]))
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 5000),
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(mount(scope, receive, send))
    return sent


def _answer(sent: list[dict]) -> tuple[int, dict, dict]:
    start, body = sent
    return start["status"], dict(start["headers"]), json.loads(body["body"])


@pytest.mark.parametrize("then", ["returns", "raises"])
def test_an_error_answer_begun_without_its_body_still_reaches_the_client_as_json(db, then):
    """An error start held for its body: the app returning without one, or raising after
    it, must not leave the client with no answer (uvicorn's plain 500)."""

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 406, "headers": []})
        if then == "raises":
            raise RuntimeError("after the start")

    status, headers, body = _answer(_asgi_run(app))
    assert headers[b"content-type"] == b"application/json"
    if then == "returns":
        assert status == 406 and body["error"]["code"] == -32600
    else:
        assert status == 500 and body["error"]["code"] == -32603


def test_an_exception_before_any_answer_is_a_json_500(db):
    async def app(scope, receive, send):
        raise RuntimeError("before the start")

    status, _, body = _answer(_asgi_run(app))
    assert status == 500 and body["error"] == {"code": -32603, "message": "Internal error."}


# --- the published bounds are the parser's ---------------------------------------------------


def _bound_probes(schema: dict):
    """(inside, outside) values at each end of a numeric property's declared range."""
    step = 1 if "integer" in schema["type"] else 0.01
    if "minimum" in schema:
        yield schema["minimum"], schema["minimum"] - step
    if "exclusiveMinimum" in schema:
        yield schema["exclusiveMinimum"] + step, schema["exclusiveMinimum"]
    if "maximum" in schema:
        yield schema["maximum"], schema["maximum"] + step


def test_every_declared_bound_is_the_one_the_tool_applies(live):
    """The input schemas spell the bounds a second time (beers.selectors.queries holds them for
    the API and the tools): at each end of each numeric argument of every tool, the bound
    itself is taken and one step past it is refused, naming the argument."""
    base = {
        "search_deals": {"city": "sao-paulo"},
        "cheapest_now": {"city": "sao-paulo"},
        "price_per_litre": {"price_brl": 10, "units": 1, "volume_ml": 600},
    }

    async def work(session):
        tools = (await session.list_tools()).tools
        checked = []
        for tool in tools:
            for name, schema in tool.input_schema["properties"].items():
                kinds = schema.get("type")
                if not {"integer", "number"} & set(kinds if isinstance(kinds, list) else [kinds]):
                    continue
                for inside, outside in _bound_probes(schema):
                    arguments = {**base[tool.name], name: inside}
                    result = await session.call_tool(tool.name, arguments)
                    assert not result.is_error, (tool.name, arguments, result.content[0].text)
                    arguments[name] = outside
                    result = await session.call_tool(tool.name, arguments)
                    assert result.is_error and name in result.content[0].text, (
                        tool.name,
                        arguments,
                    )
                    checked.append((tool.name, name))
        return checked

    checked = session_run(live, work)
    assert {
        ("search_deals", "max_price_per_litre"),
        ("search_deals", "limit"),
        ("cheapest_now", "lat"),
        ("cheapest_now", "lng"),
        ("cheapest_now", "radius_m"),
        ("cheapest_now", "limit"),
        ("price_per_litre", "price_brl"),
        ("price_per_litre", "units"),
        ("price_per_litre", "volume_ml"),
    } <= set(checked)
