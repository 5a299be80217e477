"""Verification against siteverify: replaced only at the network edge (a loopback server)."""

import socket

import pytest

from submissions.models import CityRequest

BODY = {"city": "Campinas", "turnstile": "the-token"}


@pytest.mark.django_db
def test_siteverify_success_is_received_with_the_documented_fields(api, world, siteverify):
    response = api.post("/api/v1/city-requests", BODY)
    assert response.status_code == 202
    [sent] = siteverify.requests
    assert sent["secret"] == ["0x4AAAAAAA-real-looking-secret"]
    assert sent["response"] == ["the-token"]
    assert sent["remoteip"] == ["203.0.113.7"]
    assert len(sent["idempotency_key"][0]) == 36


@pytest.mark.django_db
@pytest.mark.parametrize("codes", [["invalid-input-response"], ["timeout-or-duplicate"], []])
def test_siteverify_failure_is_403(api, world, siteverify, codes):
    siteverify.default = (200, {"success": False, "error-codes": codes})
    response = api.post("/api/v1/city-requests", BODY)
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    assert CityRequest.objects.count() == 0


@pytest.mark.django_db
def test_a_refused_secret_is_our_fault_so_503_not_403(api, world, siteverify):
    siteverify.default = (200, {"success": False, "error-codes": ["invalid-input-secret"]})
    response = api.post("/api/v1/city-requests", BODY)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"


@pytest.mark.django_db
def test_hostname_is_checked_when_listed(api, world, siteverify):
    from django.conf import settings

    settings.TURNSTILE_HOSTNAMES = ["breja.example"]
    assert api.post("/api/v1/city-requests", BODY).status_code == 202
    settings.TURNSTILE_HOSTNAMES = ["other.example"]
    response = api.post("/api/v1/city-requests", {**BODY, "city": "Outra"})
    assert response.status_code == 403


@pytest.mark.django_db
def test_one_retry_with_the_same_idempotency_key(api, world, siteverify):
    siteverify.answers = [(502, "bad gateway")]
    assert api.post("/api/v1/city-requests", BODY).status_code == 202
    first, second = siteverify.requests
    assert first["idempotency_key"] == second["idempotency_key"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "answer",
    [
        (500, "oops"),
        (200, "not json"),
        (200, "[1]"),
        (200, {"success": False, "error-codes": ["internal-error"]}),
    ],
)
def test_siteverify_failing_twice_is_503_with_retry_after(api, world, siteverify, answer):
    siteverify.default = answer
    response = api.post("/api/v1/city-requests", BODY)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert int(response["Retry-After"]) > 0
    assert len(siteverify.requests) == 2
    assert CityRequest.objects.count() == 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.django_db
def test_siteverify_unreachable_is_503_never_202(api, world, siteverify, settings):
    settings.TURNSTILE_SITEVERIFY_URL = f"http://127.0.0.1:{_closed_port()}/siteverify"
    response = api.post("/api/v1/city-requests", BODY)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "Retry-After" in response
    assert CityRequest.objects.count() == 0


@pytest.mark.django_db
def test_siteverify_too_slow_is_503(api, world, settings, writes_open):
    # A listener that accepts but never answers: the short timeout applies.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        settings.TURNSTILE_SECRET_KEY = "0x4AAAAAAA-real-looking-secret"
        settings.TURNSTILE_SITEVERIFY_URL = f"http://127.0.0.1:{sock.getsockname()[1]}/"
        settings.TURNSTILE_TIMEOUT = 0.3
        response = api.post("/api/v1/city-requests", BODY)
    assert response.status_code == 503
