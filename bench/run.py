"""`make bench`: the read API on 1M prices in PostgreSQL, measured on this machine.

Server pinned to core 0, load generator to core 1 (taskset; the latency client is this
process, pinned too). Prints the figures and writes bench/results/read-api.json.

Latencies are timed with the standard library's http.client on one keep-alive connection:
httpx spends about 0.6 ms of its own per request on this machine, which is the client's time,
not the server's. A trivial endpoint of the same server is timed alongside for reference.
"""

import http.client
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
from cryptography.fernet import Fernet

from bench.build import build

ROOT = Path(__file__).resolve().parent.parent
ADMIN_DSN = os.environ.get("BENCH_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
DB_NAME = os.environ.get("BENCH_DB", "breja_bench")
DSN = ADMIN_DSN.rsplit("/", 1)[0] + "/" + DB_NAME
RESULTS = ROOT / "bench" / "results"


def sh(*args, env=None, **kw):
    return subprocess.run(args, cwd=ROOT, env=env, check=True, **kw)


def ensure_database() -> dict:
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB_NAME,)).fetchone():
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    env = {**os.environ, "DATABASE_URL": DSN.replace("postgresql://", "postgres://"), "DEBUG": "1"}
    sh(sys.executable, "manage.py", "migrate", "-v0", env=env)
    started = time.perf_counter()
    counts = build(DSN)
    counts["build_seconds"] = round(time.perf_counter() - started, 1)
    return counts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, **extra_env):
        self.port = free_port()
        self.env = {
            **os.environ,
            "DATABASE_URL": DSN.replace("postgresql://", "postgres://"),
            "DJANGO_SETTINGS_MODULE": "bench.settings",
            "DJANGO_SECRET_KEY": "bench-only",
            "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
            "ENVIRONMENT": "staging",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "READ_RATE_LIMIT": "off",
            "LOG_LEVEL": "WARNING",
            **extra_env,
        }
        self.base = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        cmd = [
            "taskset",
            "-c",
            "0",
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--no-proxy-headers",
            "--port",
            str(self.port),
            "--no-access-log",
            "--log-level",
            "warning",
        ]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env)
        for _ in range(200):
            try:
                httpx.get(self.base + "/bench/ping", timeout=2)
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(10)


class Client:
    """One keep-alive HTTP/1.1 connection; `get` returns (status, body)."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def get(self, url: str) -> tuple[int, bytes]:
        self.conn.request("GET", url)
        response = self.conn.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.conn.close()


def timed(client, url, n) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        status, body = client.get(url)
        out.append((time.perf_counter() - started) * 1000)
        assert status == 200, (url, status, body[:300])
    return out


def pct(values, q) -> float:
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 2)


def search_plan() -> tuple[str, bool]:
    code = (
        "from beers.selectors import ranking, render;"
        "from django.utils import timezone;"
        "c=ranking.city_get('city-7');"
        "qs=ranking.ranked_deals(city=c, today=timezone.localtime(timezone=c.tz).date())"
        ".exclude(kind='open_bar').order_by(*ranking.PRICE_ORDER)"
        ".values(*render.DEAL_COLUMNS)[:20];"
        "print(qs.explain(analyze=True))"
    )
    env = {**os.environ, "DATABASE_URL": DSN.replace("postgresql://", "postgres://"), "DEBUG": "1"}
    plan = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return plan, "Sort" not in plan


def wrk(url: str, seconds: int = 10) -> float:
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", "-c16", f"-d{seconds}s", url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    raise RuntimeError(out)


def main() -> int:
    results: dict = {"database": ensure_database()}
    print("data:", results["database"], flush=True)
    plan, no_sort = search_plan()
    results["search_plan_has_no_sort"] = no_sort
    results["search_plan"] = plan
    print("search plan (city-7, top 20):\n" + plan, flush=True)
    rng = random.Random(7)
    cities = [f"city-{i}" for i in range(100)]
    os.sched_setaffinity(0, {1})  # the latency client on the load generator's core
    with Server(LIVE_CACHE_SECONDS="0") as server:
        client = Client(server.port)
        # Warm the pool, the OS caches and each query shape (compiled once per process, then
        # prepared on a pooled connection after five runs): the figures are the steady state.
        warm = random.Random(1)
        for c in cities:
            client.get(f"/api/v1/search?city={c}&limit=20")
            client.get(f"/api/v1/search?city={c}&format=garrafa&brand=brand-3&limit=50")
            lat = -30 + (int(c[5:]) % 10) * 2.5 + warm.uniform(-0.05, 0.05)
            lng = -60 + (int(c[5:]) // 10) * 2.5 + warm.uniform(-0.05, 0.05)
            client.get(f"/api/v1/cheapest?city={c}&lat={lat:.5f}&lng={lng:.5f}&radius_m=2000")
        ping_ms = timed(client, "/bench/ping", 400)
        search_urls = [f"/api/v1/search?city={rng.choice(cities)}&limit=20" for _ in range(400)]
        search_ms = [timed(client, u, 1)[0] for u in search_urls]
        cheapest_ms = []
        for _ in range(400):
            c = rng.randrange(100)
            lat = -30 + (c % 10) * 2.5 + rng.uniform(-0.05, 0.05)
            lng = -60 + (c // 10) * 2.5 + rng.uniform(-0.05, 0.05)
            cheapest_ms += timed(
                client,
                f"/api/v1/cheapest?city=city-{c}&lat={lat:.5f}&lng={lng:.5f}&radius_m=2000",
                1,
            )
        filtered_ms = [
            timed(
                client,
                f"/api/v1/search?city={rng.choice(cities)}&format=garrafa&brand=brand-3&limit=50",
                1,
            )[0]
            for _ in range(200)
        ]
        client.close()
    results["trivial_endpoint_ms"] = {"p50": pct(ping_ms, 50), "p95": pct(ping_ms, 95)}
    results["uncached_search_ms"] = {"p50": pct(search_ms, 50), "p95": pct(search_ms, 95)}
    results["uncached_search_filtered_ms"] = {
        "p50": pct(filtered_ms, 50),
        "p95": pct(filtered_ms, 95),
    }
    results["uncached_cheapest_2km_ms"] = {"p50": pct(cheapest_ms, 50), "p95": pct(cheapest_ms, 95)}
    print("trivial endpoint (reference):", results["trivial_endpoint_ms"], flush=True)
    print("uncached search:", results["uncached_search_ms"], flush=True)
    print("uncached filtered search:", results["uncached_search_filtered_ms"], flush=True)
    print("uncached cheapest 2 km:", results["uncached_cheapest_2km_ms"], flush=True)
    if shutil.which("wrk"):
        with Server() as server:
            url = f"{server.base}/api/v1/search?city=city-3&limit=20"
            httpx.get(url)
            cached = wrk(url)
            trivial = wrk(f"{server.base}/bench/ping")
        results["throughput_rps"] = {
            "cached_search": cached,
            "trivial": trivial,
            "ratio": round(cached / trivial, 2),
        }
        print("throughput (1 server core, wrk on the other):", results["throughput_rps"])
    else:
        print("wrk not installed (apt-get install wrk): throughput skipped")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "read-api.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
