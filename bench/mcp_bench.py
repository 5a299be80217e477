"""`python -m bench.mcp_bench`: a tools/call of search_deals against the same cached search over
REST, one client, one server (the bench database of bench/run.py, 1M prices in PostgreSQL).

The server (uvicorn, config.asgi:application) is pinned to core 0 and this client to core 1.
Both doors answer from the shared answer cache (Redis when REDIS_URL is set), so the figures
compare what each door costs around the same cached bytes: DRF view vs the MCP SDK's
JSON-RPC, pydantic and transport layers. Measured sequentially, p50 and p95 in milliseconds:

- rest: GET /api/v1/search?city=…&limit=20 (keep-alive httpx client);
- mcp_raw: POST /mcp with a tools/call JSON-RPC body, same httpx client (what the server adds);
- mcp_client: `ClientSession.call_tool` of the official SDK client over streamable HTTP, one
  session, interleaved with rest_async_client: a GET of the same search on the client's own
  async httpx2 connection (so the ratio compares like with like; informational: the official
  client adds its own parsing and output-schema validation).

Prints the figures and writes bench/results/mcp.json. Target: mcp_raw p50 ≤ 1.5 × rest p50.
"""

import json
import os
import statistics
import sys
import time

import httpx

from bench.run import RESULTS, Server, ensure_database

ROUNDS = int(os.environ.get("MCP_BENCH_ROUNDS", "1000"))
CITY = "city-3"
QUERY = {"city": CITY, "limit": 20}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def pct(values: list[float], q: int) -> float:
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 3)


def figures(values: list[float]) -> dict:
    return {"p50": pct(values, 50), "p95": pct(values, 95), "n": len(values)}


def rpc_body(request_id: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "search_deals", "arguments": QUERY},
        }
    ).encode()


def measure_raw(client: httpx.Client) -> tuple[list[float], list[float]]:
    """Interleaved REST and MCP requests, so drift (other load, cache state) hits both alike."""
    rest_url = f"/api/v1/search?city={CITY}&limit={QUERY['limit']}"
    rest_ms, mcp_ms = [], []
    for i in range(ROUNDS):
        started = time.perf_counter()
        rest = client.get(rest_url)
        rest_ms.append((time.perf_counter() - started) * 1000)
        body = rpc_body(i)
        started = time.perf_counter()
        mcp = client.post("/mcp", content=body, headers=HEADERS)
        mcp_ms.append((time.perf_counter() - started) * 1000)
        assert rest.status_code == 200 and mcp.status_code == 200, (rest.text, mcp.text)
        if i == 0:  # one answer, two doors
            result = mcp.json()["result"]
            assert not result["isError"], result
            assert result["content"][0]["text"] == rest.content.decode()
    return rest_ms, mcp_ms


def measure_client(url: str) -> tuple[list[float], list[float]]:
    """The official client's call_tool, interleaved with a REST GET on the same async client."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> tuple[list[float], list[float]]:
        rest_ms, mcp_ms = [], []
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            rest_url = url.removesuffix("/mcp") + f"/api/v1/search?city={CITY}&limit=20"
            for _ in range(ROUNDS // 2):
                started = time.perf_counter()
                result = await session.call_tool("search_deals", QUERY)
                mcp_ms.append((time.perf_counter() - started) * 1000)
                assert not result.is_error
                started = time.perf_counter()
                response = await http.get(rest_url)
                rest_ms.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200
        return rest_ms, mcp_ms

    return anyio.run(main)


def main() -> int:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})  # the server runs on core 0
    results: dict = {"database": ensure_database(), "rounds": ROUNDS, "query": QUERY}
    print("data:", results["database"], flush=True)
    with Server() as server, httpx.Client(base_url=server.base, timeout=30) as client:
        for _ in range(50):  # warm: fill the cache, the pool, the code paths
            client.get(f"/api/v1/search?city={CITY}&limit=20")
            client.post("/mcp", content=rpc_body(0), headers=HEADERS)
        rest_ms, mcp_ms = measure_raw(client)
        rest_async_ms, client_ms = measure_client(server.base + "/mcp")
    results["rest_ms"] = figures(rest_ms)
    results["mcp_raw_ms"] = figures(mcp_ms)
    results["mcp_client_ms"] = figures(client_ms)
    results["rest_async_client_ms"] = figures(rest_async_ms)
    results["ratio_p50"] = round(results["mcp_raw_ms"]["p50"] / results["rest_ms"]["p50"], 2)
    results["ratio_p50_official_client"] = round(
        results["mcp_client_ms"]["p50"] / results["rest_async_client_ms"]["p50"], 2
    )
    results["target_met"] = results["ratio_p50"] <= 1.5
    for key in (
        "rest_ms",
        "rest_async_client_ms",
        "mcp_raw_ms",
        "mcp_client_ms",
        "ratio_p50",
        "ratio_p50_official_client",
        "target_met",
    ):
        print(f"{key}: {results[key]}", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mcp.json").write_text(json.dumps(results, indent=2))
    return 0 if results["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
