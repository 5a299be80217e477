"""The shared cache (Redis) not answering: live reads and MCP are answered, not counted, and
say so in status; writes close. A dead address stands for the store (nothing listens there)."""

import pytest

from beers import outage
from tests.conftest import make_deals

pytestmark = pytest.mark.django_db

DEAD_STORE = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:9/0",  # the discard port: nothing answers
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.2, "SOCKET_TIMEOUT": 0.2},
    }
}


@pytest.fixture
def store_down(settings):
    settings.READ_RATE_LIMIT = "120/min"
    settings.CACHES = DEAD_STORE
    outage.STORE.back()
    yield settings
    outage.STORE.back()


def test_live_reads_are_answered_and_status_says_limits_are_off(client, bar, formats, store_down):
    make_deals(bar, formats, 3)
    for _ in range(2):  # the second skips the store it knows is down
        response = client.get("/api/v1/search", {"city": "sao-paulo"})
        assert response.status_code == 200
        assert response.json()["count"] == 3
    assert outage.STORE.down()
    venue = client.get(f"/api/v1/venues/{bar.pk}")
    assert venue.status_code == 200
    status = client.get("/api/v1/status").json()
    assert status["db"] is True
    assert status["rateLimits"] == {"read": False, "write": False}


def test_writes_close_while_the_store_is_down(client, bar, store_down):
    store_down.TURNSTILE_SECRET_KEY = "1x0000000000000000000000000000000AA"
    body = {"reason": "closed", "venue": bar.pk, "turnstile": "t"}
    response = client.post("/api/v1/reports", body, content_type="application/json")
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "Retry-After" in response


def test_mcp_calls_are_not_refused_for_the_store(store_down):
    from mcp_bridge.server import _count

    scope = {"headers": [], "client": ("203.0.113.7", 1234)}
    assert _count(scope, (1, 60)) == (True, 0)
    assert _count(scope, (1, 60)) == (True, 0)


def test_status_says_limits_are_on_when_the_store_answers(client, db, settings):
    settings.READ_RATE_LIMIT = "120/min"
    outage.STORE.back()
    assert client.get("/api/v1/status").json()["rateLimits"]["read"] is True


def test_admin_sign_in_closes_rather_than_go_uncounted(client, db, store_down):
    store_down.ADMIN_LOGIN_RATE_LIMIT = "20/hour"
    response = client.post("/admin/login/", {"username": "a", "password": "b"})
    assert response.status_code == 503
    assert response["Retry-After"] == "60"


def test_http_basic_on_the_staff_endpoint_closes_rather_than_go_uncounted(client, db, store_down):
    import base64

    store_down.ADMIN_LOGIN_RATE_LIMIT = "20/hour"
    token = base64.b64encode(b"ana:guess").decode()
    response = client.get("/api/admin/venues/1/menu-link", HTTP_AUTHORIZATION=f"Basic {token}")
    assert response.status_code == 503
    assert response["Retry-After"] == "60"
