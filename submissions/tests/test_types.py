"""Every field of every body refuses every JSON type but its own (no coercion anywhere)."""

import pytest

from .conftest import jpeg_data_uri
from .test_bodies import NEW_VENUE, SCHEDULE, put

SAMPLES = {
    "string": "x",
    "integer": 3,
    "number": 3.5,
    "boolean": True,
    "null": None,
    "array": [],
    "object": {},
}


def wrong_types(accepted: str) -> list[str]:
    ok = set(accepted.split("|"))
    if "number" in ok:
        ok.add("integer")  # an integer is a number
    return [t for t in SAMPLES if t not in ok]


def cases(fields: dict[str, str], prefix: str = "") -> list[tuple[str, str]]:
    return [
        (prefix + name, wrong)
        for name, accepted in fields.items()
        for wrong in wrong_types(accepted)
    ]


SUBMISSION = {
    "city": "string",
    "venue": "object",
    "beer": "string|null",
    "format_code": "string",
    "price": "number",
    "units": "integer",
    "packaging": "string",
    "kind": "string",
    "open_bar_minutes": "integer",
    "schedules": "array",
    "valid_from": "string",
    "valid_until": "string",
    "conditions": "string",
    "service_charge_pct": "integer",
    "couvert": "number",
    "attributes": "array",
    "seen_in": "string",
    "link": "string",
    "observed_on": "string",
    "notes": "string",
    "is_owner": "boolean",
    "nickname": "string",
    "email": "string",
    "consent": "boolean",
    "turnstile": "string",
}
NEW_VENUE_TYPES = {
    "name": "string",
    "lat": "number",
    "lng": "number",
    "kind": "string",
    "on_site": "boolean",
    "address": "string",
    "instagram": "string",
    "opening_hours": "string",
}
SCHEDULE_TYPES = {"days": "array", "start": "string", "end": "string"}
CITY_REQUEST = {
    "city": "string",
    "state": "string",
    "email": "string",
    "consent": "boolean",
    "turnstile": "string",
}
BAR_OWNER = {
    "city": "string",
    "bar": "string",
    "venue": "string",
    "topic": "string",
    "message": "string",
    "name": "string",
    "contact": "string",
    "consent": "boolean",
    "turnstile": "string",
}
MENU_PHOTOS = {
    "city": "string",
    "venue": "string",
    "images": "array",
    "contact": "string",
    "is_owner": "boolean",
    "ref": "string",
    "consent": "boolean",
    "turnstile": "string",
}
DISPUTE = {"turnstile": "string", "price": "number"}
REPORT = {
    "deal": "integer",
    "venue": "integer",
    "reason": "string",
    "message": "string",
    "turnstile": "string",
}


def expect_400_at(api, path: str, body: dict, issue_path: str):
    response = api.post(path, body)
    assert response.status_code == 400, (issue_path, response.json())
    assert issue_path in [i["path"] for i in response.json()["issues"]], response.json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "wrong"),
    [
        *cases(SUBMISSION),
        *cases(NEW_VENUE_TYPES, "venue.new."),
        *cases(SCHEDULE_TYPES, "schedules.0."),
        *[("schedules.0.days.0", t) for t in wrong_types("integer")],
        *[("venue.id", t) for t in wrong_types("integer")],
        *[("schedules.0", t) for t in wrong_types("object")],
        *[("attributes.0", t) for t in wrong_types("string")],
    ],
)
def test_submission_field_types(api, world, writes_open, field, wrong):
    body = {
        "city": "sao-paulo",
        "venue": {"new": dict(NEW_VENUE)},
        "beer": None,
        "format_code": "garrafa_600",
        "price": 9,
        "turnstile": "t",
        "schedules": [dict(SCHEDULE)],
        "attributes": ["pe_na_areia"],
    }
    if field == "venue.id":
        body["venue"] = {"id": world.venue.pk}
    expect_400_at(api, "/api/v1/submissions", put(body, field, SAMPLES[wrong]), field)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "base", "field", "wrong"),
    [
        *[
            ("/api/v1/city-requests", {"city": "Campinas", "turnstile": "t"}, f, w)
            for f, w in cases(CITY_REQUEST)
        ],
        *[
            (
                "/api/v1/bar-owners",
                {
                    "city": "sao-paulo",
                    "bar": "Bar",
                    "topic": "other",
                    "contact": "12345",
                    "consent": True,
                    "turnstile": "t",
                },
                f,
                w,
            )
            for f, w in cases(BAR_OWNER)
        ],
        *[
            (
                "/api/v1/menu-photos",
                {"city": "sao-paulo", "venue": "bar-do-ze", "images": ["IMAGE"], "turnstile": "t"},
                f,
                w,
            )
            for f, w in [*cases(MENU_PHOTOS), *[("images.0", t) for t in wrong_types("string")]]
        ],
        *[
            ("/api/v1/deals/DEAL/confirm", {"turnstile": "t"}, f, w)
            for f, w in cases({"turnstile": "string"})
        ],
        *[("/api/v1/deals/DEAL/dispute", {"turnstile": "t"}, f, w) for f, w in cases(DISPUTE)],
        *[
            ("/api/v1/reports", {"reason": "closed", "turnstile": "t"}, f, w)
            for f, w in cases(REPORT)
        ],
    ],
)
def test_other_bodies_field_types(api, world, writes_open, path, base, field, wrong):
    path = path.replace("DEAL", str(world.deal.pk))
    if base.get("images") == ["IMAGE"]:
        base = {**base, "images": [jpeg_data_uri()]}
    expect_400_at(api, path, put(base, field, SAMPLES[wrong]), field)
