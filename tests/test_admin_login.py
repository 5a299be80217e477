"""Password guesses at /admin/login/ meet a limit per client address."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def _try(client: Client, password: str):
    return client.post(
        "/admin/login/", {"username": "ana", "password": password, "next": "/admin/"}
    )


def test_sign_in_attempts_are_limited_per_address(settings):
    settings.ADMIN_LOGIN_RATE_LIMIT = "3/hour"
    get_user_model().objects.create_superuser("ana", "ana@example.com", "right-password")
    guesser = Client(REMOTE_ADDR="198.51.100.7")
    assert [_try(guesser, f"wrong-{i}").status_code for i in range(3)] == [200, 200, 200]
    refused = _try(guesser, "right-password")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert "Muitas tentativas" in refused.content.decode()
    assert guesser.get("/admin/login/").status_code == 200  # the form still shows
    other = Client(REMOTE_ADDR="198.51.100.8")
    assert _try(other, "right-password").status_code == 302  # another address signs in


def test_off_means_no_limit(settings):
    settings.ADMIN_LOGIN_RATE_LIMIT = "off"
    client = Client(REMOTE_ADDR="198.51.100.9")
    assert {_try(client, "wrong").status_code for _ in range(25)} == {200}


def test_http_basic_on_the_staff_endpoint_counts_as_sign_in_attempts(settings, client):
    """GET /api/admin/venues/{id}/menu-link takes HTTP Basic: its password guesses were held to
    the read limit only (120 a minute); they now share the admin login's count."""
    import base64

    from beers.tests.factories import VenueFactory

    settings.ADMIN_LOGIN_RATE_LIMIT = "3/hour"
    get_user_model().objects.create_superuser("ana", "ana@example.com", "right-password")
    venue = VenueFactory()
    url = f"/api/admin/venues/{venue.pk}/menu-link"

    def basic(password: str) -> dict:
        token = base64.b64encode(f"ana:{password}".encode()).decode()
        return {"HTTP_AUTHORIZATION": f"Basic {token}", "REMOTE_ADDR": "198.51.100.20"}

    assert [client.get(url, **basic(f"wrong-{i}")).status_code for i in range(2)] == [401, 401]
    guesser = Client(REMOTE_ADDR="198.51.100.20")
    assert _try(guesser, "wrong-3").status_code == 200  # the third attempt, at the form
    refused = client.get(url, **basic("right-password"))
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited"
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert _try(guesser, "right-password").status_code == 429
    other = {**basic("right-password"), "REMOTE_ADDR": "198.51.100.21"}
    assert client.get(url, **other).status_code == 200
    # the admin's session carries no password: not a sign-in attempt
    staff = Client(REMOTE_ADDR="198.51.100.20")
    staff.force_login(get_user_model().objects.get(username="ana"))
    assert staff.get(url).status_code == 200
