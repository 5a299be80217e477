"""Every bound of every write body: a valid and an invalid value on each side.

A case is (path, value, expected): path is dotted (``venue.new.lat``, ``schedules.0.days.2``);
value ``MISSING`` removes the key; expected is ``OK`` (202) or the issue path of a 400.
"""

import base64
import copy
import datetime as dt
import io
import json
import struct

import pytest
from PIL import Image

from .conftest import jpeg_data_uri

OK = "ok"
MISSING = object()


def put(body: dict, path: str, value) -> dict:
    body = copy.deepcopy(body)
    *parents, last = path.split(".")
    node = body
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    elif value is MISSING:
        node.pop(last, None)
    else:
        node[last] = value
    return body


NEW_VENUE = {"name": "Bar Novo", "lat": -23.5, "lng": -46.6, "kind": "bar", "on_site": True}
SCHEDULE = {"days": [1, 2, 3], "start": "17:00", "end": "20:00"}


def s(n: int, ch: str = "a") -> str:
    return ch * n


def common_turnstile_cases():
    return [
        ("turnstile", "t", OK),
        ("turnstile", s(2048), OK),
        ("turnstile", "", "turnstile"),
        ("turnstile", s(2049), "turnstile"),
        ("turnstile", 5, "turnstile"),
        ("turnstile", None, "turnstile"),
        ("turnstile", MISSING, "turnstile"),
        ("unknown_key", 1, "unknown_key"),
        ("non_field_errors", 1, "non_field_errors"),  # DRF's own key, sent as a field
    ]


SUBMISSION_CASES = [
    ("city", "sao-paulo", OK),
    ("city", "Sao-Paulo", "city"),
    ("city", "sao--paulo", "city"),
    ("city", "-sao", "city"),
    ("city", "sao-", "city"),
    ("city", "sao paulo", "city"),
    ("city", "sao-paulo\n", "city"),  # a pattern matches the whole string, "$" no newline
    ("city", "", "city"),
    ("city", 5, "city"),
    ("city", None, "city"),
    ("city", MISSING, "city"),
    # venue: exactly one of {id} / {new}
    ("venue", {"new": NEW_VENUE}, OK),
    ("venue", {}, "venue"),
    ("venue", {"id": "VENUE", "new": NEW_VENUE}, "venue"),
    ("venue", {"id": "VENUE", "extra": 1}, "venue.extra"),
    ("venue", {"id": "VENUE", "non_field_errors": 1}, "venue.non_field_errors"),
    ("venue", "bar-do-ze", "venue"),
    ("venue", 3, "venue"),
    ("venue", None, "venue"),
    ("venue", MISSING, "venue"),
    ("venue.id", 0, "venue.id"),
    ("venue.id", -1, "venue.id"),
    ("venue.id", "1", "venue.id"),
    ("venue.id", 1.5, "venue.id"),
    ("venue.id", True, "venue.id"),
    ("venue.id", None, "venue.id"),
    # beer: string|null, max 80
    ("beer", None, OK),
    ("beer", "", OK),
    ("beer", s(80), OK),
    ("beer", s(81), "beer"),
    ("beer", 5, "beer"),
    ("beer", MISSING, "beer"),
    ("format_code", s(41), "format_code"),
    ("format_code", 600, "format_code"),
    ("format_code", None, "format_code"),
    ("format_code", MISSING, "format_code"),
    # price: > 0, max 10000
    ("price", 0.01, OK),
    ("price", 10000, OK),
    ("price", 10000.0, OK),
    ("price", 7, OK),
    ("price", 0, "price"),
    ("price", -1, "price"),
    ("price", 10000.01, "price"),
    ("price", "12.5", "price"),
    ("price", True, "price"),
    ("price", None, "price"),
    ("price", MISSING, "price"),
    # units 1..50 integer
    ("units", 1, OK),
    ("units", 50, OK),
    ("units", 0, "units"),
    ("units", 51, "units"),
    ("units", "3", "units"),
    ("units", 3.5, "units"),
    ("units", True, "units"),
    ("units", None, "units"),
    *[("packaging", v, OK) for v in ("single", "balde", "torre", "combo", "dobro")],
    ("packaging", "caixa", "packaging"),
    ("packaging", 1, "packaging"),
    *[("kind", v, OK) for v in ("regular", "happy_hour", "promo", "combo", "open_bar")],
    ("kind", "Regular", "kind"),
    ("kind", None, "kind"),
    ("open_bar_minutes", 1, OK),
    ("open_bar_minutes", 1440, OK),
    ("open_bar_minutes", 0, "open_bar_minutes"),
    ("open_bar_minutes", 1441, "open_bar_minutes"),
    ("open_bar_minutes", "60", "open_bar_minutes"),
    # schedules: max 14 items of ScheduleDraft
    ("schedules", [], OK),
    ("schedules", [SCHEDULE] * 14, OK),
    ("schedules", [SCHEDULE] * 15, "schedules"),
    ("schedules", SCHEDULE, "schedules"),
    ("schedules", [{**SCHEDULE, "extra": 1}], "schedules.0.extra"),
    ("schedules", [{"days": [1], "start": "10:00"}], "schedules.0.end"),
    ("schedules", [{**SCHEDULE, "days": []}], "schedules.0.days"),
    ("schedules", [{**SCHEDULE, "days": [0, 1, 2, 3, 4, 5, 6]}], OK),
    ("schedules", [{**SCHEDULE, "days": [0, 1, 2, 3, 4, 5, 6, 0]}], "schedules.0.days"),
    ("schedules", [{**SCHEDULE, "days": [0, 6]}], OK),
    ("schedules", [{**SCHEDULE, "days": [1, 2, 7]}], "schedules.0.days.2"),
    ("schedules", [{**SCHEDULE, "days": [-1]}], "schedules.0.days.0"),
    ("schedules", [{**SCHEDULE, "days": ["1"]}], "schedules.0.days.0"),
    ("schedules", [{**SCHEDULE, "days": [True]}], "schedules.0.days.0"),
    ("schedules", [{**SCHEDULE, "days": 1}], "schedules.0.days"),
    ("schedules", [SCHEDULE, {**SCHEDULE, "start": "00:00"}], OK),
    ("schedules", [{**SCHEDULE, "start": "23:59"}], OK),
    ("schedules", [SCHEDULE, {**SCHEDULE, "start": "24:00"}], "schedules.1.start"),
    ("schedules", [{**SCHEDULE, "start": "9:00"}], "schedules.0.start"),
    ("schedules", [{**SCHEDULE, "start": "12:60"}], "schedules.0.start"),
    ("schedules", [{**SCHEDULE, "start": 1700}], "schedules.0.start"),
    ("schedules", [{**SCHEDULE, "end": "24:00"}], OK),
    ("schedules", [{**SCHEDULE, "end": "00:00"}], OK),
    ("schedules", [{**SCHEDULE, "end": "02:30"}], OK),
    ("schedules", [{**SCHEDULE, "end": "24:01"}], "schedules.0.end"),
    ("schedules", [{**SCHEDULE, "end": "25:00"}], "schedules.0.end"),
    ("schedules", [{**SCHEDULE, "end": "20:00:00"}], "schedules.0.end"),
    ("schedules", [{**SCHEDULE, "start": "12:00\n"}], "schedules.0.start"),
    ("schedules", [{**SCHEDULE, "end": "24:00\n"}], "schedules.0.end"),
    ("schedules", [{**SCHEDULE, "days": [1.0, 2]}], OK),  # stored as [1, 2]
    # dates
    ("valid_from", "2026-01-31", OK),
    ("valid_from", "2026-02-30", "valid_from"),
    ("valid_from", "2026-1-5", "valid_from"),
    ("valid_from", "20260105", "valid_from"),
    ("valid_from", "2026-01-05\n", "valid_from"),
    ("valid_from", "2026-01-05T00:00:00", "valid_from"),
    ("valid_from", 20260105, "valid_from"),
    ("valid_until", "2026-12-31", OK),
    ("valid_until", "2026-13-01", "valid_until"),
    ("observed_on", "2026-11-20", OK),
    ("observed_on", "ontem", "observed_on"),
    ("observed_on", None, "observed_on"),
    ("conditions", "", OK),
    ("conditions", s(280), OK),
    ("conditions", s(281), "conditions"),
    ("service_charge_pct", 0, OK),
    ("service_charge_pct", 30, OK),
    ("service_charge_pct", -1, "service_charge_pct"),
    ("service_charge_pct", 31, "service_charge_pct"),
    ("service_charge_pct", 10.5, "service_charge_pct"),
    ("couvert", 0, OK),
    ("couvert", 1000, OK),
    ("couvert", 12.5, OK),
    ("couvert", -0.01, "couvert"),
    ("couvert", 1000.01, "couvert"),
    ("couvert", "10", "couvert"),
    # attributes: max 4 of the four names
    ("attributes", [], OK),
    ("attributes", ["musica_ao_vivo", "transmite_jogos", "area_externa", "pe_na_areia"], OK),
    ("attributes", ["musica_ao_vivo"] * 5, "attributes"),
    ("attributes", ["musica_ao_vivo", "karaoke"], "attributes.1"),
    ("attributes", "musica_ao_vivo", "attributes"),
    *[("seen_in", v, OK) for v in ("menu", "poster", "instagram", "staff", "receipt", "other")],
    ("seen_in", "tv", "seen_in"),
    ("link", "https://example.com/cardapio", OK),
    ("link", "https://example.com/" + s(480), OK),
    ("link", "https://example.com/" + s(481), "link"),
    ("link", "not a uri", "link"),
    ("link", "example.com", "link"),
    ("link", "https://example.com/\n", "link"),
    ("link", "", "link"),
    # RFC 3986's grammar, not just its characters
    ("link", "http://host:port/", "link"),
    ("link", "http://a#b#c", "link"),
    ("link", "http://exa[mple.org/", "link"),
    ("link", "http://[1:2:3:4:5:6:7:8:9]/", "link"),
    ("link", "http://[::1]:8080/menu", OK),
    ("link", "urn:isbn:0451450523", OK),
    ("notes", s(500), OK),
    ("notes", s(501), "notes"),
    ("is_owner", True, OK),
    ("is_owner", False, OK),
    ("is_owner", "true", "is_owner"),
    ("is_owner", 1, "is_owner"),
    ("nickname", "ab", OK),
    ("nickname", s(40), OK),
    ("nickname", "a", "nickname"),
    ("nickname", "", "nickname"),
    ("nickname", s(41), "nickname"),
    ("consent", True, OK),
    ("consent", False, OK),
    ("consent", "yes", "consent"),
    *common_turnstile_cases(),
]

NEW_VENUE_CASES = [
    ("name", "ab", OK),
    ("name", s(120), OK),
    ("name", "a", "name"),
    ("name", s(121), "name"),
    ("name", MISSING, "name"),
    ("lat", -90, OK),
    ("lat", 90, OK),
    ("lat", -90.0001, "lat"),
    ("lat", 90.0001, "lat"),
    ("lat", "-23.5", "lat"),
    ("lat", None, "lat"),
    ("lng", -180, OK),
    ("lng", 180, OK),
    ("lng", -180.0001, "lng"),
    ("lng", 180.0001, "lng"),
    ("lng", MISSING, "lng"),
    *[
        ("kind", v, OK)
        for v in (
            "bar",
            "boteco",
            "pub",
            "barraca",
            "restaurante",
            "deposito",
            "cervejaria",
            "outro",
        )
    ],
    ("kind", "balada", "kind"),
    ("on_site", False, OK),
    ("on_site", "true", "on_site"),
    ("on_site", 1, "on_site"),
    ("on_site", MISSING, "on_site"),
    ("address", s(200), OK),
    ("address", s(201), "address"),
    ("instagram", "a", OK),
    ("instagram", s(30), OK),
    ("instagram", "bar.do_ze9", OK),
    ("instagram", s(31), "instagram"),
    ("instagram", "", "instagram"),
    ("instagram", "Bar", "instagram"),
    ("instagram", "bar-do-ze", "instagram"),
    ("instagram", "@bar", "instagram"),
    ("instagram", "bar\n", "instagram"),
    ("opening_hours", s(255), OK),
    ("opening_hours", s(256), "opening_hours"),
    ("extra", 1, "extra"),
]

CITY_REQUEST_CASES = [
    ("city", "ab", OK),
    ("city", s(80), OK),
    ("city", "São José dos Campos", OK),
    ("city", "a", "city"),
    ("city", s(81), "city"),
    ("city", 5, "city"),
    ("city", MISSING, "city"),
    ("state", "SP", OK),
    ("state", s(40), OK),
    ("state", "S", "state"),
    ("state", s(41), "state"),
    ("state", None, "state"),
    ("consent", False, OK),
    *common_turnstile_cases(),
]

BAR_OWNER_CASES = [
    ("city", "sao-paulo", OK),
    ("city", "São Paulo", "city"),
    ("bar", "ab", OK),
    ("bar", s(120), OK),
    ("bar", "a", "bar"),
    ("bar", s(121), "bar"),
    ("bar", MISSING, "bar"),
    ("venue", "bar-do-ze", OK),
    ("venue", "Bar do Zé", "venue"),
    ("venue", "", "venue"),
    ("venue", s(141), "venue"),
    ("venue", 5, "venue"),
    *[("topic", v, OK) for v in ("sponsor", "prices", "correction", "removal", "other")],
    ("topic", "spam", "topic"),
    ("topic", MISSING, "topic"),
    ("message", s(1000), OK),
    ("message", s(1001), "message"),
    ("name", "ab", OK),
    ("name", s(80), OK),
    ("name", "a", "name"),
    ("name", s(81), "name"),
    ("contact", "12345", OK),
    ("contact", s(120), OK),
    ("contact", "1234", "contact"),
    ("contact", s(121), "contact"),
    ("contact", 11999999999, "contact"),
    ("contact", MISSING, "contact"),
    ("consent", False, "consent"),
    ("consent", "true", "consent"),
    ("consent", MISSING, "consent"),
    *common_turnstile_cases(),
]

IMAGE = jpeg_data_uri()

MENU_PHOTO_CASES = [
    ("images", [IMAGE], OK),
    ("images", [IMAGE, jpeg_data_uri(color=(1, 2, 3)), jpeg_data_uri(color=(9, 9, 9))], OK),
    ("images", [], "images"),
    ("images", [IMAGE] * 4, "images"),
    ("images", IMAGE, "images"),
    ("images", [IMAGE, "data:image/png;base64,iVBORw0KGgo="], "images.1"),
    ("images", ["data:image/jpeg;base64,bm90IGEganBlZw=="], "images.0"),
    ("images", ["data:image/jpeg;base64,!!!"], "images.0"),
    ("images", ["data:image/jpeg;base64,"], "images.0"),
    ("images", ["data:image/jpeg;base64," + "A" * 699_977], "images.0"),
    ("images", [5], "images.0"),
    ("images", MISSING, "images"),
    ("venue", "bar-do-ze", OK),
    ("venue", 5, "venue"),
    ("venue", MISSING, "venue"),
    ("city", "SP", "city"),
    ("contact", "12345", "consent"),
    ("is_owner", True, OK),
    ("is_owner", "no", "is_owner"),
    ("ref", "abcdefghij_-0123", OK),
    ("ref", "abcdefghij_-012", "ref"),
    ("ref", "abcdefghij_-01234", "ref"),
    ("ref", "abcdefghij_-012!", "ref"),
    ("ref", "abcdefghij_-0123\n", "ref"),
    ("consent", True, OK),
    *common_turnstile_cases(),
]

DISPUTE_CASES = [
    ("price", 0.01, OK),
    ("price", 10000, OK),
    ("price", 0, "price"),
    ("price", 10000.01, "price"),
    ("price", "9.9", "price"),
    ("price", None, "price"),
    *common_turnstile_cases(),
]

REPORT_CASES = [
    ("deal", MISSING, OK),
    ("deal", 0, "deal"),
    ("deal", "1", "deal"),
    ("deal", 1.5, "deal"),
    ("venue", "VENUE", OK),
    ("venue", 0, "venue"),
    ("venue", True, "venue"),
    *[("reason", v, OK) for v in ("closed", "wrong_venue", "wrong_beer", "wrong_price", "other")],
    ("reason", "spam", "reason"),
    ("reason", MISSING, "reason"),
    ("message", s(500), OK),
    ("message", s(501), "message"),
    *common_turnstile_cases(),
]


def resolve(value, world):
    """Placeholders for ids that only exist once the world is built."""
    if value == "VENUE":
        return world.venue.pk
    if isinstance(value, dict):
        return {k: resolve(v, world) for k, v in value.items()}
    return value


def check(api, path: str, body: dict, expected: str):
    response = api.post(path, body)
    if expected == OK:
        assert response.status_code == 202, response.json()
        assert response.json() == {"status": "received"}
    else:
        assert response.status_code == 400, response.json()
        answer = response.json()
        assert answer["error"] == "invalid_request"
        assert expected in [issue["path"] for issue in answer["issues"]], answer
        for issue in answer["issues"]:
            assert set(issue) == {"path", "message"} and issue["message"]


def submission_body(world) -> dict:
    return {
        "city": "sao-paulo",
        "venue": {"id": world.venue.pk},
        "beer": "Brahma",
        "format_code": "garrafa_600",
        "price": 12.9,
        "turnstile": "tok",
    }


@pytest.mark.django_db
def test_observed_on_is_not_after_the_citys_today_nor_before_2000(api, world, writes_open):
    """A price cannot have been seen tomorrow in its city (whatever the date elsewhere), and
    the year 1 is a slip (it opened a price-index month "0001-01")."""
    today = world.city.local_now().date()
    cases = [
        (today.isoformat(), OK),
        ((today + dt.timedelta(days=1)).isoformat(), "observed_on"),
        ("2099-01-01", "observed_on"),
        ("2000-01-01", OK),
        ("1999-12-31", "observed_on"),
        ("0001-01-01", "observed_on"),
    ]
    for i, (day, expected) in enumerate(cases):
        body = {**submission_body(world), "observed_on": day, "notes": f"case {i}"}
        check(api, "/api/v1/submissions", body, expected)


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), SUBMISSION_CASES)
def test_submission_bounds(api, world, writes_open, path, value, expected):
    check(
        api,
        "/api/v1/submissions",
        put(submission_body(world), path, resolve(value, world)),
        expected,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), NEW_VENUE_CASES)
def test_new_venue_bounds(api, world, writes_open, path, value, expected):
    body = {**submission_body(world), "venue": {"new": dict(NEW_VENUE)}}
    check(
        api,
        "/api/v1/submissions",
        put(body, f"venue.new.{path}", value),
        expected if expected == OK else f"venue.new.{expected}",
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("email", "consent", "expected"),
    [
        ("ana@example.com", True, OK),
        ("a@b.co", True, OK),
        ("a" * 64 + "@" + "x" * 61 + "." + "y" * 61 + ".example.com", True, OK),  # 200 chars
        ("a" * 64 + "@" + "x" * 62 + "." + "y" * 61 + ".example.com", True, "email"),  # 201
        ("a" * 65 + "@example.com", True, "email"),  # a local part is at most 64 (RFC 5321)
        ("ana@exämple.org", True, "email"),  # "email", not "idn-email"
        ("ana@xn--exmple-cua.org", True, OK),
        ("ana@[127.0.0.1]", True, "email"),  # only an address at a domain name
        ("ana@localhost", True, "email"),
        ("ana@example.123", True, "email"),
        ("ana@example.com", MISSING, "consent"),
        ("ana@example.com", False, "consent"),
        ("ana@example.com", "true", "consent"),
        ("not-an-email", True, "email"),
        ("", True, "email"),
        (None, True, "email"),
        (5, True, "email"),
    ],
)
def test_submission_email_needs_consent(api, world, writes_open, email, consent, expected):
    body = put(put(submission_body(world), "email", email), "consent", consent)
    check(api, "/api/v1/submissions", body, expected)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "body", "key"),
    [
        ("/api/v1/submissions", "submission", "email"),
        ("/api/v1/city-requests", "city", "email"),
        ("/api/v1/menu-photos", "menu", "contact"),
    ],
)
def test_a_null_contact_is_one_issue_not_a_consent_one_too(
    api, world, writes_open, path, body, key
):
    """`"email": null` got a second issue, consent "must be true when an e-mail is given"."""
    bodies = {
        "submission": submission_body(world),
        "city": {"city": "Campinas", "turnstile": "tok"},
        "menu": menu_photo_body(),
    }
    answer = api.post(path, {**bodies[body], key: None})
    assert answer.status_code == 400
    assert [issue["path"] for issue in answer.json()["issues"]] == [key]


@pytest.mark.django_db
def test_submission_validity_window_in_order(api, world, writes_open):
    body = {**submission_body(world), "valid_from": "2026-12-01", "valid_until": "2026-11-01"}
    check(api, "/api/v1/submissions", body, "valid_until")
    body["valid_until"] = "2026-12-01"
    check(api, "/api/v1/submissions", body, OK)


@pytest.mark.django_db
def test_submission_every_optional_field_at_once(api, world, writes_open):
    body = {
        **submission_body(world),
        "units": 3,
        "packaging": "balde",
        "kind": "happy_hour",
        "schedules": [SCHEDULE],
        "valid_from": "2026-11-01",
        "valid_until": "2026-12-31",
        "conditions": "só no balcão",
        "service_charge_pct": 10,
        "couvert": 15,
        "attributes": ["musica_ao_vivo"],
        "seen_in": "menu",
        "link": "https://x.example/a",
        "observed_on": "2026-11-20",
        "notes": "preço de happy hour",
        "is_owner": False,
        "nickname": "Zé",
        "email": "ze@example.com",
        "consent": True,
    }
    check(api, "/api/v1/submissions", body, OK)


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), CITY_REQUEST_CASES)
def test_city_request_bounds(api, world, writes_open, path, value, expected):
    check(
        api,
        "/api/v1/city-requests",
        put({"city": "Campinas", "turnstile": "tok"}, path, value),
        expected,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("email", "consent", "expected"),
    [
        ("ana@example.com", True, OK),
        ("ana@example.com", MISSING, "consent"),
        ("ana@example.com", False, "consent"),
        ("ana@", True, "email"),
    ],
)
def test_city_request_email_needs_consent(api, world, writes_open, email, consent, expected):
    body = put({"city": "Campinas", "turnstile": "tok", "email": email}, "consent", consent)
    check(api, "/api/v1/city-requests", body, expected)


def bar_owner_body() -> dict:
    return {
        "city": "sao-paulo",
        "bar": "Bar do Zé",
        "topic": "prices",
        "contact": "+55 11 99999-9999",
        "consent": True,
        "turnstile": "tok",
    }


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), BAR_OWNER_CASES)
def test_bar_owner_bounds(api, world, writes_open, path, value, expected):
    check(api, "/api/v1/bar-owners", put(bar_owner_body(), path, value), expected)


def menu_photo_body() -> dict:
    return {"city": "sao-paulo", "venue": "bar-do-ze", "images": [IMAGE], "turnstile": "tok"}


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), MENU_PHOTO_CASES)
def test_menu_photo_bounds(api, world, writes_open, path, value, expected):
    check(api, "/api/v1/menu-photos", put(menu_photo_body(), path, value), expected)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("contact", "expected"),
    [
        ("12345", OK),
        (s(120), OK),
        ("1234", "contact"),
        (s(121), "contact"),
    ],
)
def test_menu_photo_contact_with_consent(api, world, writes_open, contact, expected):
    body = {**menu_photo_body(), "contact": contact, "consent": True}
    check(api, "/api/v1/menu-photos", body, expected)


@pytest.mark.django_db
def test_menu_photo_image_at_700000_chars_is_accepted_and_over_is_not(api, world, writes_open):
    prefix = "data:image/jpeg;base64,"
    raw = base64.b64decode(IMAGE[len(prefix) :])

    def padded(chars: int) -> str:
        # Bytes after the JPEG's end marker are ignored by decoders: pad to a given length.
        room = (chars - len(prefix)) // 4 * 3 - len(raw)
        return prefix + base64.b64encode(raw + b"\0" * room).decode()

    largest = padded(700_000)  # base64 comes in groups of 4: 699,999 characters
    assert len(largest) == 699_999
    check(api, "/api/v1/menu-photos", {**menu_photo_body(), "images": [largest]}, OK)
    too_long = padded(700_004)
    assert len(too_long) == 700_003
    check(api, "/api/v1/menu-photos", {**menu_photo_body(), "images": [too_long]}, "images.0")


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), common_turnstile_cases())
def test_confirm_bounds(api, world, writes_open, path, value, expected):
    check(
        api,
        f"/api/v1/deals/{world.deal.pk}/confirm",
        put({"turnstile": "tok"}, path, value),
        expected,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), DISPUTE_CASES)
def test_dispute_bounds(api, world, writes_open, path, value, expected):
    check(
        api,
        f"/api/v1/deals/{world.deal.pk}/dispute",
        put({"turnstile": "tok", "price": 13.5}, path, value),
        expected,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "value", "expected"), REPORT_CASES)
def test_report_bounds(api, world, writes_open, path, value, expected):
    body = {"deal": world.deal.pk, "reason": "wrong_price", "turnstile": "tok"}
    check(api, "/api/v1/reports", put(body, path, resolve(value, world)), expected)


@pytest.mark.django_db
@pytest.mark.parametrize("deal_id", ["0", "-1", "abc", "1.5", "01x", "%20", "1%0A"])
@pytest.mark.parametrize("action", ["confirm", "dispute"])
def test_malformed_deal_id_is_400(api, world, writes_open, deal_id, action):
    response = api.post(f"/api/v1/deals/{deal_id}/{action}", {"turnstile": "tok"})
    assert response.status_code == 400
    assert [i["path"] for i in response.json()["issues"]] == ["id"]


WRITE_PATHS = [
    "/api/v1/submissions",
    "/api/v1/city-requests",
    "/api/v1/bar-owners",
    "/api/v1/menu-photos",
    "/api/v1/deals/1/confirm",
    "/api/v1/deals/1/dispute",
    "/api/v1/reports",
]


@pytest.mark.django_db
@pytest.mark.parametrize("path", WRITE_PATHS)
@pytest.mark.parametrize(
    ("raw", "content_type"),
    [
        ("{", "application/json"),
        ("", "application/json"),
        ("[]", "application/json"),
        ("null", "application/json"),
        ('"text"', "application/json"),
        ("42", "application/json"),
        ('{"turnstile": NaN}', "application/json"),
        ('{"\\ud800": 1, "turnstile": "t"}', "application/json"),
        ('{"turnstile": "t", "city": {"\\udfff": 1}}', "application/json"),
        ('{"turnstile": "\\ud800"}', "application/json"),
        (b"\xff\xfe", "application/json"),
        ("turnstile=tok", "application/x-www-form-urlencoded"),
    ],
)
def test_body_not_a_json_object_is_400(api, world, writes_open, path, raw, content_type):
    response = api.post(path, raw=raw, content_type=content_type)
    assert response.status_code == 400
    answer = response.json()
    assert answer["error"] == "invalid_request" and answer["issues"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("application/json", 202),
        ("application/json; charset=utf-8", 202),
        ("Application/JSON", 202),
        ("application/vnd.breja+json", 202),
        (None, 202),  # declared nothing: read as JSON (docs/decisions.md)
        ("text/plain", 400),
        ("application/x-www-form-urlencoded", 400),
        ("multipart/form-data; boundary=x", 400),
        ("application/octet-stream", 400),
    ],
)
def test_which_declared_types_are_read_as_json(api, world, writes_open, content_type, status):
    raw = json.dumps({"city": "Campinas", "turnstile": "tok"})
    if content_type is None:
        response = api.client.generic("POST", "/api/v1/city-requests", raw, content_type="")
        assert response.wsgi_request.content_type == ""
    else:
        response = api.post("/api/v1/city-requests", raw=raw, content_type=content_type)
    assert response.status_code == status, response.content
    if status == 400:
        assert response.json()["issues"][0]["message"] == (
            "The body must be JSON (Content-Type: application/json)."
        )


@pytest.mark.django_db
@pytest.mark.parametrize("path", WRITE_PATHS)
def test_validation_comes_before_verification(api, world, writes_open, path):
    writes_open.TURNSTILE_SECRET_KEY = "2x0000000000000000000000000000000AA"
    response = api.post(path, {"turnstile": "tok", "surprise": True})
    assert response.status_code == 400


def _progressive_jpeg(declared: tuple[int, int] | None = None, mode: str = "RGB") -> str:
    """A small progressive JPEG; with `declared`, its frame header claims that size."""
    buf = io.BytesIO()
    Image.new(mode, (16, 16), (200, 120, 30)[: len(mode)] if mode == "RGB" else 0).save(
        buf, "JPEG", progressive=True
    )
    raw = bytearray(buf.getvalue())
    if declared:
        sof = raw.index(b"\xff\xc2")  # start of frame, progressive
        raw[sof + 5 : sof + 9] = struct.pack(">HH", declared[1], declared[0])
    return "data:image/jpeg;base64," + base64.b64encode(bytes(raw)).decode()


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["RGB", "CMYK"])
# Pillow warns on opening a header this large; the field refuses it before any decoding
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_a_progressive_jpeg_declaring_a_huge_size_is_refused_before_decoding(
    api, world, writes_open, mode
):
    """A 1 KB progressive JPEG declaring 13377 × 13377 took seconds and over a gigabyte to
    decode, even at reduced scale: refused from its header."""
    bomb = _progressive_jpeg(declared=(13377, 13377), mode=mode)
    assert len(bomb) < 2000
    response = api.post("/api/v1/menu-photos", {**menu_photo_body(), "images": [bomb]})
    assert response.status_code == 400
    assert response.json()["issues"] == [
        {"path": "images.0", "message": "Must be at most 24 megapixels (18 in CMYK)."}
    ]
    check(api, "/api/v1/menu-photos", {**menu_photo_body(), "images": [_progressive_jpeg()]}, OK)


@pytest.mark.django_db
def test_a_baseline_jpeg_declaring_a_huge_size_is_refused_too(api, world, writes_open):
    """A baseline JPEG with a scan per channel keeps full-size coefficients like a
    progressive one: the size limit holds for every JPEG."""
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 120, 30)).save(buf, "JPEG")
    raw = bytearray(buf.getvalue())
    sof = raw.index(b"\xff\xc0")  # start of frame, baseline
    raw[sof + 5 : sof + 9] = struct.pack(">HH", 5000, 5000)  # 25 megapixels
    bomb = "data:image/jpeg;base64," + base64.b64encode(bytes(raw)).decode()
    response = api.post("/api/v1/menu-photos", {**menu_photo_body(), "images": [bomb]})
    assert response.status_code == 400
    assert response.json()["issues"][0]["message"] == "Must be at most 24 megapixels (18 in CMYK)."


def _scans(raw: bytes) -> list[bytes]:
    """The scans of a JPEG (each from its SOS marker to the next marker that is not a
    restart or stuffed byte)."""
    found, at = [], raw.index(b"\xff\xda")
    while at != -1:
        end = at + 2
        while not (raw[end] == 0xFF and raw[end + 1] not in (0x00, *range(0xD0, 0xD8))):
            end += 1
        found.append(raw[at:end])
        at = raw.find(b"\xff\xda", end)
    return found


@pytest.mark.django_db
def test_a_jpeg_repeating_a_scan_many_times_is_refused_before_decoding(api, world, writes_open):
    """Each scan of a progressive JPEG is decoded over the full-size coefficients: 136 KB
    repeating one refinement scan 1000 times took 16 s to check. At most 50 scans."""
    buf = io.BytesIO()
    Image.new("L", (64, 64), 128).save(buf, "JPEG", quality=50, progressive=True)
    raw = buf.getvalue()
    last = _scans(raw)[-1]
    end = raw.rindex(b"\xff\xd9")

    def with_scans(n: int) -> str:
        extra = n - len(_scans(raw))
        jpeg = raw[:end] + last * extra + raw[end:]
        return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()

    check(api, "/api/v1/menu-photos", {**menu_photo_body(), "images": [with_scans(50)]}, OK)
    response = api.post("/api/v1/menu-photos", {**menu_photo_body(), "images": [with_scans(51)]})
    assert response.status_code == 400
    assert response.json()["issues"] == [
        {"path": "images.0", "message": "Must hold at most 50 scans."}
    ]


@pytest.mark.django_db
def test_too_many_images_is_one_issue_before_any_image_is_checked(
    api, world, writes_open, monkeypatch
):
    """The count first: 400,000 items took 11 s and a 43 MB answer when each was checked."""
    from submissions.api import fields

    def never(self, data):
        raise AssertionError("an image was checked")

    monkeypatch.setattr(fields.JpegDataUriField, "to_internal_value", never)
    response = api.post("/api/v1/menu-photos", {**menu_photo_body(), "images": ["x"] * 1000})
    assert response.status_code == 400
    assert response.json()["issues"] == [
        {"path": "images", "message": "Ensure this field has no more than 3 elements."}
    ]


@pytest.mark.django_db
def test_unknown_keys_are_named_twenty_at_most(api, world, writes_open):
    """Each unknown key is an issue, the first 20 of the body: 180,000 of them took 2.6 s and
    an 8 MB answer."""
    body = {**menu_photo_body(), **{f"k{i}": 0 for i in range(5000)}}
    response = api.post("/api/v1/menu-photos", body)
    assert response.status_code == 400
    assert [i["path"] for i in response.json()["issues"]] == [f"k{i}" for i in range(20)]


@pytest.mark.django_db
def test_a_field_breaking_two_rules_is_one_issue(api, world, writes_open):
    """decisions.md: one `issues` item per bad parameter, whatever rules it breaks."""
    response = api.post("/api/v1/menu-photos", {**menu_photo_body(), "ref": "short"})
    assert response.status_code == 400
    issues = response.json()["issues"]
    assert [i["path"] for i in issues] == ["ref"]
    assert "16" in issues[0]["message"]


def _text_leaves(body, prefix=()):
    """Paths of every text value of a body, as the issues name them (`venue.new.name`)."""
    if isinstance(body, dict):
        for key, value in body.items():
            yield from _text_leaves(value, (*prefix, key))
    elif isinstance(body, str):
        yield prefix


def _nul_bodies():
    new_bar = {
        "name": "Bar Novo",
        "kind": "bar",
        "address": "Rua A, 1",
        "lat": -23.55,
        "lng": -46.63,
        "neighbourhood": "Pinheiros",
        "instagram": "barnovo",
    }
    yield (
        "/api/v1/submissions",
        lambda world: {
            **submission_body(world),
            "conditions": "até 20h",
            "nickname": "ana",
            "observed_on": "2026-11-01",
        },
    )
    yield (
        "/api/v1/submissions",
        lambda world: {
            **submission_body(world),
            "venue": {"new": new_bar},
        },
    )
    yield (
        "/api/v1/city-requests",
        lambda world: {
            "city": "Campinas",
            "email": "ana@example.com",
            "consent": True,
            "turnstile": "tok",
        },
    )
    yield "/api/v1/bar-owners", lambda world: bar_owner_body()
    yield (
        "/api/v1/menu-photos",
        lambda world: {
            **{k: v for k, v in menu_photo_body().items() if k != "images"},
            "images": [IMAGE],
            "contact": "12345",
            "consent": True,
        },
    )
    yield "/api/v1/deals/{deal}/dispute", lambda world: {"turnstile": "tok", "price": 13.5}
    yield (
        "/api/v1/reports",
        lambda world: {
            "deal": world.deal.pk,
            "reason": "wrong_price",
            "turnstile": "tok",
        },
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "make"), list(_nul_bodies()))
def test_u0000_in_any_text_of_a_write_is_400_at_its_path(api, world, writes_open, path, make):
    """PostgreSQL's text cannot hold U+0000: a body carrying one is refused where it is, and
    nothing looks it up first (a submission's city was sought for its date check: 500)."""
    body = make(world)
    url = path.format(deal=world.deal.pk)
    checked = 0
    for leaf in _text_leaves({k: v for k, v in body.items() if k != "images"}):
        broken = json.loads(json.dumps(body))
        holder = broken
        for key in leaf[:-1]:
            holder = holder[key]
        holder[leaf[-1]] = holder[leaf[-1]][:1] + "\x00" + holder[leaf[-1]][1:]
        check(api, url, broken, ".".join(leaf))
        checked += 1
    assert checked
