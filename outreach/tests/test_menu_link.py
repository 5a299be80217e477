"""The staff endpoint of a bar's menu link (GET /api/admin/venues/{id}/menu-link)."""

import base64
import logging
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from beers.tests.factories import VenueFactory
from outreach.links import menu_link_ref, menu_link_trusts

pytestmark = pytest.mark.django_db
REF_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16}$")  # interface.md: MenuPhotoUpload.ref
PASSWORD = "correct horse battery"


def url(venue_id) -> str:
    return f"/api/admin/venues/{venue_id}/menu-link"


def basic(username: str, password: str = PASSWORD) -> dict:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


@pytest.fixture
def staff():
    return get_user_model().objects.create_user("ana", password=PASSWORD, is_staff=True)


@pytest.fixture
def venue():
    return VenueFactory()


def test_staff_get_the_bar_menu_link(client, staff, venue):
    response = client.get(url(venue.pk), **basic("ana"))
    assert response.status_code == 200
    body = response.json()
    assert body["ref"] == menu_link_ref(venue.pk)
    assert REF_PATTERN.fullmatch(body["ref"])
    assert body["venue"] == {"id": venue.pk, "slug": venue.slug, "city": venue.city.slug}
    assert body["upload"] == "/api/v1/menu-photos"
    assert response["Cache-Control"] == "no-store"  # a credential: kept by no cache


def test_the_admin_session_is_enough(staff, venue):
    client = Client()
    client.force_login(staff)
    assert client.get(url(venue.pk)).json()["ref"] == menu_link_ref(venue.pk)


def test_without_credentials_401_and_a_challenge(client, venue):
    response = client.get(url(venue.pk))
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert response["WWW-Authenticate"].startswith("Basic")
    assert client.get(url(venue.pk), **basic("ana", "wrong")).status_code == 401


def test_a_user_who_is_not_staff_is_refused(client, venue):
    get_user_model().objects.create_user("joao", password=PASSWORD)
    response = client.get(url(venue.pk), **basic("joao"))
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    assert menu_link_ref(venue.pk) not in response.content.decode()


@pytest.mark.parametrize("venue_id", ["999999", "9223372036854775808"])
def test_unknown_bar_404(client, staff, venue_id):
    response = client.get(url(venue_id), **basic("ana"))
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_only_get(client, staff, venue):
    response = client.post(url(venue.pk), **basic("ana"))
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


def test_each_bar_has_its_own_link_and_only_it_trusts(venue, settings):
    other = VenueFactory()
    ref = menu_link_ref(venue.pk)
    assert ref != menu_link_ref(other.pk)
    assert menu_link_trusts(ref, venue.pk)
    assert not menu_link_trusts(ref, other.pk)
    assert not menu_link_trusts(ref[:-1] + ("A" if ref[-1] != "A" else "B"), venue.pk)
    assert not menu_link_trusts(None, venue.pk) and not menu_link_trusts("", venue.pk)
    assert not menu_link_trusts("é" * 16, venue.pk)
    settings.OUTREACH_SECRET = "another secret"  # rotating the secret revokes every link
    assert not menu_link_trusts(ref, venue.pk)


def test_the_link_never_reaches_the_logs(client, staff, venue, caplog):
    caplog.set_level(logging.DEBUG)
    client.get(url(venue.pk), **basic("ana"))
    assert menu_link_ref(venue.pk) not in caplog.text


def test_password_guesses_meet_the_rate_limit(client, staff, venue, settings):
    settings.READ_RATE_LIMIT = "3/min"
    answers = [
        client.get(url(venue.pk), **basic("ana", f"guess-{i}")).status_code for i in range(4)
    ]
    assert answers == [401, 401, 401, 429]
    # the right password does not pass the limit either
    assert client.get(url(venue.pk), **basic("ana")).status_code == 429


def test_the_staff_endpoint_is_not_open_to_other_sites(client, staff, venue):
    """The public API answers any page's preflight; a staff endpoint does not (an audit saw
    `Access-Control-Allow-Origin: *` and Authorization allowed on it)."""
    cors = {"HTTP_ORIGIN": "https://elsewhere.example"}
    preflight = {**cors, "HTTP_ACCESS_CONTROL_REQUEST_METHOD": "GET"}
    preflight["HTTP_ACCESS_CONTROL_REQUEST_HEADERS"] = "authorization"
    for answer in (
        client.get(url(venue.pk), **basic("ana"), **cors),
        client.options(url(venue.pk), **preflight),
    ):
        assert "access-control-allow-origin" not in answer.headers
    assert client.get("/api/v1/status", **cors).headers["access-control-allow-origin"] == "*"
    assert (
        client.options("/api/v1/search", **preflight).headers["access-control-allow-origin"] == "*"
    )
