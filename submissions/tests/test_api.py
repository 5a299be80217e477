"""Every answer of the write table: 202 received/duplicate, 403, 404, 413, 422, 429, 503."""

import pytest
from django.core.cache import cache
from django.test import Client

from beers.counters import parse_rate
from beers.degraded import switch_on
from beers.models import City, Deal, Venue
from beers.services import deal_create
from outreach.links import menu_link_ref
from submissions import limits
from submissions.models import (
    BarOwnerMessage,
    CityRequest,
    DealConfirmation,
    DealDispute,
    MenuPhoto,
    MenuPhotoUpload,
    PhotoState,
    PriceSubmission,
    Report,
    ReviewState,
)
from submissions.turnstile import ALWAYS_FAIL, ALWAYS_SPENT

from .conftest import JsonClient, jpeg_data_uri


def bodies(world) -> dict[str, dict]:
    """One valid body per endpoint."""
    return {
        "/api/v1/submissions": {
            "city": "sao-paulo",
            "venue": {"id": world.venue.pk},
            "beer": None,
            "format_code": "garrafa_600",
            "price": 9.9,
            "turnstile": "tok",
        },
        "/api/v1/city-requests": {"city": "Campinas", "state": "SP", "turnstile": "tok"},
        "/api/v1/bar-owners": {
            "city": "sao-paulo",
            "bar": "Bar do Zé",
            "topic": "sponsor",
            "contact": "ze@example.com",
            "consent": True,
            "turnstile": "tok",
        },
        "/api/v1/menu-photos": {
            "city": "sao-paulo",
            "venue": "bar-do-ze",
            "images": [jpeg_data_uri()],
            "turnstile": "tok",
        },
        f"/api/v1/deals/{world.deal.pk}/confirm": {"turnstile": "tok"},
        f"/api/v1/deals/{world.deal.pk}/dispute": {"turnstile": "tok", "price": 14},
        "/api/v1/reports": {"deal": world.deal.pk, "reason": "closed", "turnstile": "tok"},
    }


MODELS = [
    PriceSubmission,
    CityRequest,
    BarOwnerMessage,
    MenuPhotoUpload,
    DealConfirmation,
    DealDispute,
    Report,
]


def stored() -> int:
    return sum(m.objects.count() for m in MODELS)


ENDPOINTS = [
    "submissions",
    "city-requests",
    "bar-owners",
    "menu-photos",
    "confirm",
    "dispute",
    "reports",
]


def path_of(world, endpoint: str) -> str:
    return next(p for p in bodies(world) if p.endswith(endpoint))


# --- 202 ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_valid_write_is_received_then_duplicate(api, world, writes_open, endpoint):
    path = path_of(world, endpoint)
    body = bodies(world)[path]
    first = api.post(path, body)
    assert first.status_code == 202
    assert first.json() == {"status": "received"}
    assert stored() == 1
    again = api.post(path, {**body, "turnstile": "another-token"})
    assert again.status_code == 202
    assert again.json() == {"status": "duplicate"}
    assert stored() == 1


@pytest.mark.django_db
def test_duplicate_ignores_email_and_consent(api, world, writes_open):
    body = bodies(world)["/api/v1/submissions"]
    assert api.post("/api/v1/submissions", body).json() == {"status": "received"}
    answer = api.post("/api/v1/submissions", {**body, "email": "ana@example.com", "consent": True})
    assert answer.json() == {"status": "duplicate"}
    assert PriceSubmission.objects.count() == 1


@pytest.mark.django_db
def test_duplicate_ignores_contact(api, world, writes_open):
    body = bodies(world)["/api/v1/bar-owners"]
    api.post("/api/v1/bar-owners", body)
    answer = api.post("/api/v1/bar-owners", {**body, "contact": "+55 11 98888-7777"})
    assert answer.json() == {"status": "duplicate"}


@pytest.mark.django_db
def test_same_body_from_another_address_is_received(world, writes_open):
    body = bodies(world)["/api/v1/submissions"]
    assert JsonClient("198.51.100.1").post("/api/v1/submissions", body).json() == {
        "status": "received"
    }
    assert JsonClient("198.51.100.2").post("/api/v1/submissions", body).json() == {
        "status": "received"
    }
    assert PriceSubmission.objects.count() == 2


@pytest.mark.django_db
def test_same_body_after_review_is_received_again(api, world, writes_open):
    body = bodies(world)["/api/v1/submissions"]
    api.post("/api/v1/submissions", body)
    PriceSubmission.objects.update(state=ReviewState.REJECTED)
    assert api.post("/api/v1/submissions", body).json() == {"status": "received"}


@pytest.mark.django_db
def test_different_body_is_not_a_duplicate(api, world, writes_open):
    body = bodies(world)["/api/v1/submissions"]
    api.post("/api/v1/submissions", body)
    assert api.post("/api/v1/submissions", {**body, "price": 10}).json() == {"status": "received"}
    # 9.9 and the same value written differently are the same body
    assert api.post("/api/v1/submissions", {**body, "price": 10.0}).json() == {
        "status": "duplicate"
    }


@pytest.mark.django_db
def test_submission_with_new_venue_is_stored_without_private_data(api, world, writes_open):
    body = {
        **bodies(world)["/api/v1/submissions"],
        "venue": {
            "new": {"name": "Bar Novo", "lat": -23.5, "lng": -46.6, "kind": "bar", "on_site": True}
        },
        "email": "ana@example.com",
        "consent": True,
        "nickname": "Ana",
    }
    assert api.post("/api/v1/submissions", body).status_code == 202
    row = PriceSubmission.objects.get()
    assert row.venue is None and row.city == world.city and row.format == world.format
    assert row.state == ReviewState.PENDING
    assert row.payload["venue"]["new"]["name"] == "Bar Novo"
    assert row.payload["nickname"] == "Ana"
    assert not {"email", "consent", "turnstile"} & set(row.payload)
    assert row.email == "ana@example.com"
    assert len(row.address_hash) == 64 and "203.0.113.7" not in row.address_hash


@pytest.mark.django_db
def test_menu_photos_are_kept_until_read_then_deleted(
    api, world, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    body = {
        **bodies(world)["/api/v1/menu-photos"],
        "images": [jpeg_data_uri(), jpeg_data_uri(color=(0, 0, 0))],
        "ref": "A" * 16,
    }
    with django_capture_on_commit_callbacks(execute=False) as read_later:
        assert api.post("/api/v1/menu-photos", body).status_code == 202
    upload = MenuPhotoUpload.objects.get()
    assert upload.state == PhotoState.RECEIVED
    assert upload.venue == world.venue
    assert upload.trusted is False  # a well-formed ref that is not the bar's link
    assert MenuPhoto.objects.filter(upload=upload).count() == 2
    assert bytes(MenuPhoto.objects.first().jpeg)[:2] == b"\xff\xd8"
    for callback in read_later:  # the reading, queued after the commit
        callback()
    upload.refresh_from_db()
    assert upload.state == PhotoState.DRAFTED  # read: plain colours, no text, no drafts
    assert not MenuPhoto.objects.exists()


@pytest.mark.django_db
def test_an_upload_with_the_bar_menu_link_is_trusted(api, world, writes_open, celery_eager):
    """interface.md: a valid `ref` (the bar's own link token, from the staff endpoint) makes
    the upload trusted; another bar's token, or none, does not. The token is not stored."""
    other = Venue.objects.exclude(pk=world.venue.pk).first()
    body = bodies(world)["/api/v1/menu-photos"]
    own = menu_link_ref(world.venue.pk)
    for ref, ip in [(own, "203.0.113.1"), (menu_link_ref(other.pk), "203.0.113.2"), (None, "")]:
        sent = {**body, "ref": ref} if ref else body
        client = JsonClient(ip) if ip else api
        assert client.post("/api/v1/menu-photos", sent).status_code == 202
    trusted = dict(MenuPhotoUpload.objects.values_list("address_hash", "trusted"))
    assert sorted(trusted.values()) == [False, False, True]
    assert MenuPhotoUpload.objects.get(trusted=True).venue == world.venue
    assert "ref" not in {f.name for f in MenuPhotoUpload._meta.get_fields()}


@pytest.mark.django_db
def test_bar_owner_venue_slug_links_the_bar_and_an_unknown_one_is_422(api, world, writes_open):
    body = {**bodies(world)["/api/v1/bar-owners"], "venue": "bar-do-ze"}
    assert api.post("/api/v1/bar-owners", body).status_code == 202
    unknown = api.post("/api/v1/bar-owners", {**body, "venue": "sem-bar"})
    assert unknown.status_code == 422
    assert [i["path"] for i in unknown.json()["issues"]] == ["venue"]
    rows = {m.venue_slug: m.venue for m in BarOwnerMessage.objects.all()}
    assert rows == {"bar-do-ze": world.venue}


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ["/api/v1/bar-owners", "/api/v1/menu-photos"])
@pytest.mark.parametrize("slug", ["Bar Do Ze", "", "bar--ze", "-bar", "a" * 141, 7])
def test_a_venue_that_is_not_a_slug_is_400_at_venue(api, world, writes_open, endpoint, slug):
    response = api.post(endpoint, {**bodies(world)[endpoint], "venue": slug})
    assert response.status_code == 400
    assert [i["path"] for i in response.json()["issues"]] == ["venue"]
    assert stored() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("endpoint", "path", "value"),
    [
        ("/api/v1/bar-owners", "contact", "     "),
        ("/api/v1/bar-owners", "contact", "\t\t\t\t\t\t"),
        ("/api/v1/bar-owners", "contact", "\u3000\u00a0\u2003\ufeff\n"),
        ("/api/v1/menu-photos", "contact", "       "),
        ("/api/v1/bar-owners", "bar", "   "),
        ("/api/v1/bar-owners", "name", "  "),
        ("/api/v1/city-requests", "city", "   "),
        ("/api/v1/city-requests", "state", "  "),
        ("/api/v1/submissions", "venue.new.name", "    "),
    ],
)
def test_text_of_white_space_alone_is_400(api, world, writes_open, endpoint, path, value):
    """A contact to reply to, a bar's or a city's name: five spaces pass the length, yet name
    nobody and nothing."""
    body = {**bodies(world)[endpoint], "consent": True}
    if path == "venue.new.name":
        body["venue"] = {
            "new": {"name": value, "lat": -23.56, "lng": -46.65, "kind": "bar", "on_site": True}
        }
    else:
        body[path] = value
    response = api.post(endpoint, body)
    assert response.status_code == 400, response.json()
    issues = response.json()["issues"]
    assert [i["path"] for i in issues] == [path]
    assert issues[0]["message"] == "Must hold more than white space."
    assert stored() == 0
    body[path.split(".")[0]] = (
        {"new": {**body["venue"]["new"], "name": " Bar  Novo "}}
        if (path == "venue.new.name")
        else f" {value}x{value} "
    )  # white space around text is taken as written
    assert api.post(endpoint, body).status_code == 202


# --- 403 ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("secret", [ALWAYS_FAIL, ALWAYS_SPENT])
def test_failed_verification_is_403_and_stores_nothing(api, world, writes_open, endpoint, secret):
    writes_open.TURNSTILE_SECRET_KEY = secret
    path = path_of(world, endpoint)
    response = api.post(path, bodies(world)[path])
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    assert stored() == 0
    assert limits.cap_count(endpoint, _hash()) == 0


def _hash(ip: str = "203.0.113.7") -> str:
    from beers.clients import address_hash

    return address_hash(ip)


@pytest.mark.django_db
def test_spent_token_says_so(api, world, writes_open):
    writes_open.TURNSTILE_SECRET_KEY = ALWAYS_SPENT
    response = api.post("/api/v1/city-requests", {"city": "Campinas", "turnstile": "t"})
    assert response.status_code == 403
    assert "already used" in response.json()["message"]


# --- 404 ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["confirm", "dispute"])
@pytest.mark.parametrize("status", ["suspended", "retired", None])
def test_confirm_or_dispute_of_unknown_or_unranked_price_is_404(
    api, world, writes_open, action, status
):
    if status is None:
        deal_id = Deal.objects.order_by("-pk").first().pk + 1000
    else:
        deal_id = world.fresh_deal(status=status).pk
    response = api.post(f"/api/v1/deals/{deal_id}/{action}", {"turnstile": "tok"})
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert stored() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["confirm", "dispute"])
@pytest.mark.parametrize("hidden_by", ["closed bar", "inactive city"])
def test_confirm_or_dispute_of_a_price_nobody_can_see_is_404(
    api, world, writes_open, action, hidden_by
):
    deal = world.fresh_deal()
    if hidden_by == "closed bar":
        Venue.objects.filter(pk=deal.venue_id).update(status="closed")
    else:
        City.objects.filter(pk=deal.city_id).update(active=False)
    response = api.post(f"/api/v1/deals/{deal.pk}/{action}", {"turnstile": "tok"})
    assert response.status_code == 404
    deal.refresh_from_db()
    assert (deal.confirmations, deal.open_disputes) == (0, 0)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "digits", ["1" + "0" * 25, "9" * 31, "9" * 5000], ids=["26 digits", "31 digits", "5000 digits"]
)
def test_huge_deal_id_is_404_not_a_database_error(api, world, writes_open, digits):
    """Any integer > 0 is an id (interface.md); one no price has is 404, however long."""
    response = api.post(f"/api/v1/deals/{digits}/confirm", {"turnstile": "tok"})
    assert response.status_code == 404


@pytest.mark.django_db
def test_built_in_validation_messages_are_english(api, world, writes_open):
    response = api.post("/api/v1/reports", {}, HTTP_ACCEPT_LANGUAGE="pt-BR")
    assert response.status_code == 400
    assert "This field is required." in {i["message"] for i in response.json()["issues"]}
    assert response["Content-Language"] == "en"


@pytest.mark.django_db
def test_leading_zeros_name_the_same_price(api, world, writes_open):
    response = api.post(f"/api/v1/deals/{world.deal.pk:031d}/confirm", {"turnstile": "tok"})
    assert response.status_code == 202
    world.deal.refresh_from_db()
    assert world.deal.confirmations == 1
    zero = api.post(f"/api/v1/deals/{0:031d}/confirm", {"turnstile": "tok"})
    assert zero.status_code == 400


# --- 413 ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e != "menu-photos"])
def test_body_over_64_kib_is_413(api, world, writes_open, endpoint):
    path = path_of(world, endpoint)
    body = bodies(world)[path]
    filler = "x" * 65536
    response = api.post(path, {**body, "notes": filler})
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"
    assert stored() == 0


@pytest.mark.django_db
def test_body_of_exactly_64_kib_is_parsed(api, world, writes_open):
    prefix, suffix = '{"city": "Campinas", "turnstile": "', '"}'
    raw = prefix + "t" * (65536 - len(prefix) - len(suffix)) + suffix
    assert len(raw) == 65536
    response = api.post("/api/v1/city-requests", raw=raw)
    assert response.status_code == 400  # turnstile over 2048: parsed, not refused unread
    assert api.post("/api/v1/city-requests", raw=raw[:-2] + "t" + suffix).status_code == 413


@pytest.mark.django_db
def test_menu_photos_body_over_2_2_mb_is_413_and_at_it_is_parsed(api, world, writes_open):
    prefix, suffix = '{"city": "sao-paulo", "venue": "bar-do-ze", "turnstile": "t", "x": "', '"}'
    raw = prefix + "a" * (2_200_000 - len(prefix) - len(suffix)) + suffix
    assert len(raw) == 2_200_000
    assert api.post("/api/v1/menu-photos", raw=raw).status_code == 400
    response = api.post("/api/v1/menu-photos", raw=raw[:-2] + "a" + suffix)
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"


@pytest.mark.django_db
def test_declared_length_over_the_limit_is_413_before_reading(api, world, writes_open):
    response = api.post(
        "/api/v1/reports", {"reason": "closed", "turnstile": "t"}, CONTENT_LENGTH="70000"
    )
    assert response.status_code == 413


@pytest.mark.django_db
def test_django_request_data_too_big_is_413_json(api, world, writes_open):
    writes_open.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = api.post("/api/v1/reports", {"reason": "closed", "turnstile": "t" * 2000})
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"


# --- 422 ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "issue"),
    [
        ({"city": "curitiba"}, "city"),
        ({"city": "manaus"}, "city"),  # inactive
        ({"format_code": "garrafa_601"}, "format_code"),
        ({"format_code": "Garrafa 600"}, "format_code"),
        ({"venue": {"id": 999_999_999}}, "venue.id"),
        ({"venue": {"id": 10**30}}, "venue.id"),
        ({"venue": {"id": "OTHER"}}, "venue.id"),  # a bar of another city
    ],
)
def test_submission_unknown_city_bar_or_format_is_422(api, world, writes_open, change, issue):
    if change.get("venue") == {"id": "OTHER"}:
        change = {"venue": {"id": world.other_venue.pk}}
    body = {**bodies(world)["/api/v1/submissions"], **change}
    response = api.post("/api/v1/submissions", body)
    assert response.status_code == 422
    answer = response.json()
    assert answer["error"] == "unprocessable"
    assert issue in [i["path"] for i in answer["issues"]]
    assert stored() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "change", "issue"),
    [
        ("/api/v1/bar-owners", {"city": "curitiba"}, "city"),
        ("/api/v1/bar-owners", {"city": "manaus"}, "city"),
        ("/api/v1/menu-photos", {"city": "curitiba"}, "city"),
        ("/api/v1/menu-photos", {"venue": "bar-recife"}, "venue"),
        ("/api/v1/bar-owners", {"venue": "bar-recife"}, "venue"),
        ("/api/v1/menu-photos", {"city": "manaus", "venue": "bar-manaus"}, "city"),
        ("/api/v1/reports", {"deal": 999_999_999}, "deal"),
        ("/api/v1/reports", {"deal": 10**30}, "deal"),
        ("/api/v1/reports", {"venue": 999_999_999}, "venue"),
        ("/api/v1/reports", {"venue": "OTHER"}, "deal"),  # the price is not at that bar
        # of a city off the site: nothing public names them (they answered 202)
        ("/api/v1/reports", {"venue": "INACTIVE"}, "venue"),
        ("/api/v1/reports", {"deal": "INACTIVE"}, "deal"),
        ("/api/v1/reports", {"deal": "suspended"}, "deal"),
        ("/api/v1/reports", {"deal": "retired"}, "deal"),
        ("/api/v1/reports", {"deal": "CLOSED"}, "deal"),
    ],
)
def test_unknown_city_bar_or_price_is_422(api, world, writes_open, path, change, issue):
    if change.get("venue") == "OTHER":
        change = {"venue": world.other_venue.pk}
    elif change.get("venue") == "INACTIVE":
        change = {"venue": world.inactive_venue.pk}
    elif change.get("deal") == "INACTIVE":
        inactive = deal_create(venue=world.inactive_venue, format=world.format, price_cents=990)
        change = {"deal": inactive.pk}
    elif change.get("deal") in ("suspended", "retired"):  # out of the open data: unknown
        Deal.objects.filter(pk=world.deal.pk).update(status=change["deal"])
        change = {"deal": world.deal.pk}
    elif change.get("deal") == "CLOSED":
        Venue.objects.filter(pk=world.venue.pk).update(status="closed")
        change = {"deal": world.deal.pk}
    response = api.post(path, {**bodies(world)[path], **change})
    assert response.status_code == 422
    assert issue in [i["path"] for i in response.json()["issues"]]
    assert stored() == 0


@pytest.mark.django_db
def test_report_of_a_bar_alone_or_of_nothing_is_received(api, world, writes_open):
    assert (
        api.post(
            "/api/v1/reports", {"venue": world.venue.pk, "reason": "closed", "turnstile": "t"}
        ).status_code
        == 202
    )
    assert (
        api.post(
            "/api/v1/reports", {"reason": "other", "message": "site lento", "turnstile": "t"}
        ).status_code
        == 202
    )


@pytest.mark.django_db
def test_bar_owner_may_name_a_closed_bar(api, world, writes_open):
    Venue.objects.filter(pk=world.venue.pk).update(status="closed")
    body = {**bodies(world)["/api/v1/bar-owners"], "venue": world.venue.slug, "topic": "removal"}
    assert api.post("/api/v1/bar-owners", body).status_code == 202
    assert BarOwnerMessage.objects.get().venue == world.venue


# --- 429 ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_daily_cap_per_endpoint_and_address(world, writes_open, endpoint):
    writes_open.WRITE_DAILY_CAP = 2
    path = path_of(world, endpoint)
    body = bodies(world)[path]
    api = JsonClient("192.0.2.10")
    if endpoint in ("confirm", "dispute"):
        deals = [world.fresh_deal() for _ in range(3)]
        paths = [path.replace(f"/{world.deal.pk}/", f"/{d.pk}/") for d in deals]
        sends = [(p, body) for p in paths]
    elif endpoint == "menu-photos":
        sends = [(path, {**body, "images": [jpeg_data_uri(color=(i, i, i))]}) for i in range(3)]
    elif endpoint == "submissions":
        sends = [(path, {**body, "price": 10 + i}) for i in range(3)]
    elif endpoint == "reports":
        sends = [(path, {**body, "message": f"#{i}"}) for i in range(3)]
    else:
        sends = [
            (path, {**body, "bar" if endpoint == "bar-owners" else "city": f"Nome {i}"})
            for i in range(3)
        ]
    assert api.post(*sends[0]).json() == {"status": "received"}
    # A duplicate does not count.
    assert api.post(*sends[0]).json() == {"status": "duplicate"}
    assert api.post(*sends[1]).json() == {"status": "received"}
    over = api.post(*sends[2])
    assert over.status_code == 429
    assert over.json()["error"] == "rate_limited"
    assert 0 < int(over["Retry-After"]) <= 86400
    assert stored() == 2
    # The counters lost (`make run` restarted: they live in its memory; evicted; Redis
    # restarted): the day's writes the database holds still count.
    cache.clear()
    assert api.post(*sends[2]).status_code == 429
    assert stored() == 2
    # At the cap a repeat of a waiting write is still a duplicate: it stores nothing.
    assert api.post(*sends[0]).json() == {"status": "duplicate"}
    assert stored() == 2
    assert api.post(*sends[2]).status_code == 429
    # Another address and another endpoint are not affected.
    assert JsonClient("192.0.2.11").post(*sends[2]).status_code == 202
    other = "/api/v1/city-requests" if endpoint != "city-requests" else "/api/v1/reports"
    assert api.post(other, bodies(world)[other]).status_code == 202


@pytest.mark.django_db
def test_lost_cap_counters_count_only_todays_writes_of_the_address(world, writes_open, settings):
    """Counters started again from the database count this address's writes since midnight
    in TIME_ZONE: not yesterday's (an hour before that midnight is still today in UTC), not
    another address's."""
    import datetime as dt
    import zoneinfo

    from django.utils import timezone

    from beers.clients import address_hash

    writes_open.WRITE_DAILY_CAP = 2
    zone = zoneinfo.ZoneInfo(settings.TIME_ZONE)
    midnight = dt.datetime.combine(timezone.now().astimezone(zone).date(), dt.time(), zone)
    sender, other = address_hash("192.0.2.30"), address_hash("192.0.2.31")
    CityRequest.objects.create(
        address_hash=sender, body_fingerprint="yesterday", city="A",
        created_at=midnight - dt.timedelta(minutes=1),
    )  # fmt: skip
    CityRequest.objects.create(address_hash=other, body_fingerprint="other", city="B")
    cache.clear()
    api = JsonClient("192.0.2.30")
    body = bodies(world)["/api/v1/city-requests"]
    answers = [api.post("/api/v1/city-requests", {**body, "city": f"C{i}"}) for i in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 429]
    CityRequest.objects.create(address_hash=sender, body_fingerprint="today", city="D")
    cache.clear()  # now the database holds 3 of today's from the address: over the cap
    assert api.post("/api/v1/city-requests", {**body, "city": "Elsewhere"}).status_code == 429


@pytest.mark.django_db
def test_with_the_shipped_limits_every_endpoints_whole_cap_fits_in_a_minute(world, writes_open):
    """The burst limit stops floods; it must not answer 429 before the daily cap of
    decisions.md (20 per endpoint) is used up, even on every endpoint in the same minute."""
    from config import settings as shipped

    writes_open.WRITE_RATE_LIMIT = shipped.WRITE_RATE_LIMIT
    writes_open.WRITE_DAILY_CAP = shipped.WRITE_DAILY_CAP
    assert shipped.WRITE_DAILY_CAP == 20
    api = JsonClient("192.0.2.20")
    for endpoint in ("submissions", "city-requests", "reports"):
        path = path_of(world, endpoint)
        body = bodies(world)[path]
        field = {"submissions": "price", "city-requests": "city", "reports": "message"}[endpoint]
        answers = [
            api.post(path, {**body, field: 10 + i if field == "price" else f"n{i}"}).status_code
            for i in range(21)
        ]
        assert answers == [202] * 20 + [429], endpoint
    # The remaining four endpoints' caps would add 80 more in the same minute: still allowed.
    limit, period = parse_rate(shipped.WRITE_RATE_LIMIT)
    assert limit * 60 / period >= 7 * (shipped.WRITE_DAILY_CAP + 1)


@pytest.mark.django_db
def test_failed_writes_do_not_use_up_the_cap(api, world, writes_open):
    writes_open.WRITE_DAILY_CAP = 1
    body = bodies(world)["/api/v1/submissions"]
    assert api.post("/api/v1/submissions", {**body, "city": "curitiba"}).status_code == 422
    writes_open.TURNSTILE_SECRET_KEY = ALWAYS_FAIL
    assert api.post("/api/v1/submissions", body).status_code == 403
    writes_open.TURNSTILE_SECRET_KEY = "1x0000000000000000000000000000000AA"
    assert api.post("/api/v1/submissions", {**body, "price": "x"}).status_code == 400
    assert api.post("/api/v1/submissions", body).status_code == 202
    assert api.post("/api/v1/submissions", {**body, "price": 1}).status_code == 429
    # over the cap, an unknown city is the cap's 429 too (only a duplicate gets through)
    assert api.post("/api/v1/submissions", {**body, "city": "curitiba"}).status_code == 429
    assert api.post("/api/v1/submissions", body).json() == {"status": "duplicate"}


@pytest.mark.django_db
def test_burst_limit_over_all_writes(api, world, writes_open):
    writes_open.WRITE_RATE_LIMIT = "3/min"
    for i in range(3):
        assert (
            api.post("/api/v1/city-requests", {"city": f"Cidade {i}", "turnstile": "t"}).status_code
            == 202
        )
    response = api.post("/api/v1/reports", {"reason": "closed", "turnstile": "t"})
    assert response.status_code == 429
    assert response.json()["error"] == "rate_limited"
    assert 0 < int(response["Retry-After"]) <= 60


@pytest.mark.django_db
def test_a_daily_cap_of_zero_is_no_cap_as_status_says(api, client, world, writes_open):
    writes_open.WRITE_DAILY_CAP = 0
    assert client.get("/api/v1/status").json()["rateLimits"]["write"] is False
    for i in range(3):
        body = {"city": f"Cidade {i}", "turnstile": "t"}
        assert api.post("/api/v1/city-requests", body).status_code == 202


@pytest.mark.django_db
def test_a_flood_of_bad_bodies_meets_the_burst_limit_too(api, world, writes_open):
    """The burst limit comes before the body is read: invalid bodies (a menu photo to
    decode, say) cost their checks only up to the limit."""
    writes_open.WRITE_RATE_LIMIT = "2/min"
    answers = [api.post("/api/v1/menu-photos", {"junk": True}).status_code for _ in range(4)]
    assert answers == [400, 400, 429, 429]


@pytest.mark.django_db
def test_cap_counter_follows_the_forwarded_address_only_from_trusted_proxies(world, writes_open):
    writes_open.WRITE_DAILY_CAP = 1
    writes_open.TRUSTED_PROXY_CIDRS = ["10.0.0.0/8"]
    proxy = JsonClient("10.0.0.5")
    body = {"city": "Campinas", "turnstile": "t"}
    assert (
        proxy.post("/api/v1/city-requests", body, HTTP_CF_CONNECTING_IP="198.51.100.20").status_code
        == 202
    )
    assert (
        proxy.post(
            "/api/v1/city-requests",
            {**body, "city": "Outra"},
            HTTP_CF_CONNECTING_IP="198.51.100.21",
        ).status_code
        == 202
    )
    # Not a trusted peer: its forwarded header is ignored, the peer address is counted.
    stranger = JsonClient("203.0.113.99")
    assert (
        stranger.post(
            "/api/v1/city-requests", body, HTTP_CF_CONNECTING_IP="198.51.100.20"
        ).status_code
        == 202
    )
    assert (
        stranger.post(
            "/api/v1/city-requests",
            {**body, "city": "Outra"},
            HTTP_CF_CONNECTING_IP="198.51.100.22",
        ).status_code
        == 429
    )


# --- 503 ------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_no_secret_closes_every_write(api, world, writes_open, endpoint):
    writes_open.TURNSTILE_SECRET_KEY = ""
    path = path_of(world, endpoint)
    response = api.post(path, bodies(world)[path])
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert response["Retry-After"] == "3600"  # as every 503 of the OpenAPI description
    assert stored() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_degraded_switch_closes_every_write(api, world, writes_open, endpoint):
    switch_on(retry_after=300)
    path = path_of(world, endpoint)
    response = api.post(path, bodies(world)[path])
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert response["Retry-After"] == "300"
    assert stored() == 0
    assert Deal.objects.get(pk=world.deal.pk).confirmations == 0


@pytest.mark.django_db
def test_unreachable_database_closes_writes(api, world, writes_open, monkeypatch):
    monkeypatch.setattr(limits, "database_ok", lambda: False)
    response = api.post("/api/v1/city-requests", {"city": "Campinas", "turnstile": "t"})
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "Retry-After" in response


@pytest.mark.django_db
def test_get_is_405_json(api, world, writes_open):
    response = api.get("/api/v1/submissions")
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


@pytest.mark.django_db
def test_database_failing_mid_write_is_503_and_the_cap_slot_is_returned(
    api, world, writes_open, monkeypatch
):
    from django.db import OperationalError

    from submissions import services

    def broken(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, "city_request_create", broken)
    response = api.post("/api/v1/city-requests", {"city": "Campinas", "turnstile": "t"})
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "Retry-After" in response
    assert limits.cap_count("city-requests", _hash()) == 0


# --- the live answers follow the writes ---------------------------------------------------------


@pytest.mark.django_db
def test_a_cached_search_shows_a_confirmation_and_drops_a_suspended_price_at_once(
    world, writes_open, django_capture_on_commit_callbacks
):
    """The answers are cached for 10 minutes, but not past a change of their data."""

    def search() -> dict:
        response = Client().get("/api/v1/search", {"city": "sao-paulo"})
        assert response.status_code == 200
        return {d["id"]: d for d in response.json()["deals"]}

    assert search()[world.deal.pk]["confirmations"] == 0
    with django_capture_on_commit_callbacks(execute=True):
        path = f"/api/v1/deals/{world.deal.pk}/confirm"
        assert JsonClient("192.0.2.30").post(path, {"turnstile": "t"}).status_code == 202
    assert search()[world.deal.pk]["confirmations"] == 1
    for i in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            path = f"/api/v1/deals/{world.deal.pk}/dispute"
            assert JsonClient(f"192.0.2.{40 + i}").post(path, {"turnstile": "t"}).status_code == 202
    assert world.deal.pk not in search()


@pytest.mark.django_db
def test_a_confirmation_stales_only_its_citys_and_bars_answers(
    world, writes_open, django_capture_on_commit_callbacks, django_assert_num_queries
):
    """A confirmation in Recife leaves São Paulo's cached answers alone."""
    client = Client()
    sao_paulo = {"city": "sao-paulo"}
    assert client.get("/api/v1/search", sao_paulo).status_code == 200
    assert client.get(f"/api/v1/venues/{world.venue.pk}").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        path = f"/api/v1/deals/{world.other_deal.pk}/confirm"
        assert JsonClient("192.0.2.50").post(path, {"turnstile": "t"}).status_code == 202
    with django_assert_num_queries(0):
        assert client.get("/api/v1/search", sao_paulo).status_code == 200
        assert client.get(f"/api/v1/venues/{world.venue.pk}").status_code == 200
    recife = client.get("/api/v1/search", {"city": "recife"}).json()["deals"]
    assert [d["confirmations"] for d in recife] == [1]


@pytest.mark.django_db
def test_an_ipv6_sender_is_its_64_block(world, writes_open):
    """A subscriber holds a whole IPv6 /64: its addresses share the daily cap, another /64
    has its own; an IPv4-mapped address is its IPv4 address."""
    from beers.clients import address_hash

    writes_open.WRITE_DAILY_CAP = 2
    body = {"turnstile": "t"}
    answers = [
        JsonClient(f"2001:db8:1:2::{n}")
        .post("/api/v1/city-requests", {**body, "city": f"Cidade {n}"})
        .status_code
        for n in (1, 2, 3)
    ]
    assert answers == [202, 202, 429]
    other = JsonClient("2001:db8:1:3::1").post("/api/v1/city-requests", {**body, "city": "Outra"})
    assert other.status_code == 202
    assert address_hash("::ffff:203.0.113.7") == address_hash("203.0.113.7")
    assert address_hash("2001:db8:1:2::1") != address_hash("2001:db8:1:3::1")
