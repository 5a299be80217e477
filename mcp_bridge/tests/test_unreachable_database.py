"""A real server whose PostgreSQL does not answer: the tools answer a tool error that points
at the static datasets, like the API's 503; the converter keeps working."""

import pytest

from tests.live import free_port, served

from .test_tools import call, error_text, ok

pytestmark = pytest.mark.live


class Remote:
    def __init__(self, base: str):
        self.mcp_url = base + "/mcp"


@pytest.fixture
def server_without_database(tmp_path):
    env = {
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/breja",
        "DEBUG": "1",
        "DB_CONNECT_TIMEOUT": "1",
        "DB_POOL_TIMEOUT": "1",
        "REDIS_URL": "",
        "DEGRADED_FLAG_PATH": str(tmp_path / "flag.json"),
        "LOG_LEVEL": "ERROR",
    }
    with served(env, "--log-level", "warning") as base:
        yield Remote(base)


def test_tools_point_at_the_datasets_when_the_database_does_not_answer(server_without_database):
    text = error_text(call(server_without_database, "search_deals", {"city": "sao-paulo"}))
    assert "/api/v1/index.json" in text
    assert (
        ok(call(server_without_database, "price_per_litre", {"price_brl": 9, "volume_ml": 600}))[
            "price_per_litre_brl"
        ]
        == 15.0
    )
