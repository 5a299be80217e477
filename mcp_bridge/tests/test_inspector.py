"""The MCP Inspector's CLI (the reference client of the MCP project, in Node) lists the seven
tools of the live server. Skipped, with the reason, where Node or the npm registry is missing."""

import json
import re
import shutil
import subprocess

import pytest

from .test_tools import TOOL_NAMES

pytestmark = [pytest.mark.live, pytest.mark.django_db]

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
OFFLINE = re.compile(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|network", re.I)


def inspector(url: str, *args: str) -> dict:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx (Node.js) is not installed: apt-get install nodejs npm")
    try:
        done = subprocess.run(
            [npx, "--yes", INSPECTOR, "--cli", url, "--transport", "http", *args],
            capture_output=True,
            text=True,
            timeout=240,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npx did not fetch and run {INSPECTOR} within 240 s")
    if done.returncode != 0 and OFFLINE.search(done.stderr):
        pytest.skip(
            f"the npm registry is unreachable, {INSPECTOR} cannot be fetched: "
            + done.stderr.strip().splitlines()[-1]
        )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_inspector_cli_lists_the_seven_tools(live):
    listed = inspector(live.mcp_url, "--method", "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == TOOL_NAMES
    assert all(tool["annotations"]["readOnlyHint"] for tool in listed["tools"])


def test_the_inspector_cli_calls_a_tool(live):
    answer = inspector(
        live.mcp_url,
        "--method",
        "tools/call",
        "--tool-name",
        "price_per_litre",
        "--tool-arg",
        "price_brl=12.9",
        "--tool-arg",
        "volume_ml=600",
    )
    assert answer["structuredContent"] == {"price_per_litre_brl": 21.5, "litres": 0.6}
    assert not answer.get("isError")
