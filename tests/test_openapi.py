"""The OpenAPI 3.1 description: valid, complete, and the live API conforms to it."""

import json
import subprocess
import sys

import pytest
from openapi_spec_validator import validate

from datasets.services import CITY_FILES, datasets_export
from tests.conftest import make_deals


def test_openapi_document_is_valid_3_1(client, db):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"  # every body is JSON
    document = json.loads(response.content)
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == "1.0.0"
    for path in ("/api/v1/status", "/api/v1/search", "/api/v1/cheapest", "/api/v1/venues/{id}"):
        assert path in document["paths"], path
    # interface.md lists the description's own address among the endpoints
    itself = document["paths"]["/api/v1/openapi.json"]["get"]["responses"]["200"]
    assert list(itself["content"]) == ["application/json"]
    schemas = document["components"]["schemas"]
    # interface.md: search and cheapest answer a DealsResponse, of at most 50 prices, with
    # `local_time` (optional) only on cheapest; a bar's answer has no `local_time`
    assert schemas["DealsResponse"]["properties"]["deals"]["maxItems"] == 50
    assert "local_time" not in schemas["DealsResponse"].get("required", [])
    assert "local_time" in schemas["DealsResponse"]["properties"]
    assert "local_time" not in schemas["VenueResponse"]["properties"]
    for path in ("/api/v1/search", "/api/v1/cheapest"):
        answer = document["paths"][path]["get"]["responses"]["200"]["content"]
        assert answer["application/json"]["schema"] == {
            "$ref": "#/components/schemas/DealsResponse"
        }, path
    assert "CheapestResponse" not in schemas
    # a bar's answer holds every price it has in the rankings: no bound
    assert "maxItems" not in schemas["VenueResponse"]["properties"]["deals"]


def test_a_version_query_does_not_change_the_description(client, db):
    """Spectacular's `?version=` wrote the caller's text into `info.version`."""
    plain = client.get("/api/v1/openapi.json")
    for asked in ("2", "v1", "<b>x</b>"):
        response = client.get("/api/v1/openapi.json", {"version": asked})
        assert response.status_code == 200
        assert response.json()["info"]["version"] == "1.0.0"
        assert response.content == plain.content


def test_openapi_has_the_static_files_and_the_optout_page(client, db):
    """Plain Django views drf-spectacular does not see: added by postprocessing hooks."""
    document = json.loads(client.get("/api/v1/openapi.json").content)
    paths = document["paths"]
    for name in ("index.json", "cities.json", "catalog.json"):
        responses = paths[f"/api/v1/{name}"]["get"]["responses"]
        assert set(responses) == {"200", "304", "404", "503"}
    envelope = {"$ref": "#/components/schemas/DatasetEnvelope"}
    assert paths["/api/v1/index.json"]["get"]["responses"]["200"]["content"] == {
        "application/json": {"schema": envelope}
    }
    assert document["components"]["schemas"]["DatasetEnvelope"]["required"] == [
        "updated_at",
        "license",
        "attribution",
    ]
    # every file of a city has its own path, as interface.md lists them
    media = {"json": "application/json", "csv": "text/csv", "geojson": "application/geo+json"}
    for name in CITY_FILES:
        operation = paths[f"/api/v1/{{city}}/{name}"]["get"]
        assert set(operation["responses"]) == {"200", "304", "404", "503"}
        assert list(operation["responses"]["200"]["content"]) == [media[name.split(".")[1]]]
        assert [p["name"] for p in operation["parameters"]] == ["city"]
    assert "/api/v1/{city}/{file}" not in paths
    optout = paths["/api/v1/optout/{token}"]
    assert set(optout) >= {"get", "post"}
    token = optout["get"]["parameters"][0]
    assert token["schema"]["pattern"] == r"^[0-9]{1,9}\.[A-Za-z0-9_-]{43}$"
    assert "text/html" in optout["post"]["responses"]["200"]["content"]
    assert set(optout["post"]["responses"]) == {"200", "413", "429", "503"}  # 413: a big form
    assert set(optout["get"]["responses"]) == {"200", "429", "503"}


def test_every_429_and_503_says_retry_after(client, db):
    """interface.md: the live endpoints' 503 comes with Retry-After; so does every 429."""
    document = json.loads(client.get("/api/v1/openapi.json").content)
    seen = []
    for name, path in document["paths"].items():
        for method, operation in path.items():
            for status in ("429", "503"):
                response = operation.get("responses", {}).get(status)
                if response is not None:
                    seen.append((method, name, status))
                    assert "Retry-After" in response.get("headers", {}), (method, name, status)
    for expected in (
        ("get", "/api/v1/search", "503"),
        ("get", "/api/v1/cheapest", "429"),
        ("post", "/api/v1/submissions", "429"),
        ("post", "/api/v1/deals/{id}/confirm", "503"),
    ):
        assert expected in seen


def test_free_text_of_write_bodies_says_nul_is_refused(client, db, settings):
    """DRF refuses U+0000 in text (PostgreSQL cannot store it): the description says so, and
    a value its pattern refuses is the one the service refuses."""
    import re

    document = json.loads(client.get("/api/v1/openapi.json").content)
    report = document["components"]["schemas"]["Report"]["properties"]
    pattern = report["message"]["pattern"]
    assert report["turnstile"]["pattern"] == pattern
    assert re.fullmatch(pattern, "linha 1") and not re.fullmatch(pattern, "linha\x001")
    assert "pattern" not in report["reason"]  # a fixed set of values
    for name in ("Submission", "CityRequest", "BarOwnerRequest", "MenuPhotoUpload"):
        for key, prop in document["components"]["schemas"][name]["properties"].items():
            if prop.get("type") in ("string", ["string", "null"]):
                assert {"pattern", "format", "enum", "const"} & set(prop), (name, key)
    settings.TURNSTILE_SECRET_KEY = "1x0000000000000000000000000000000AA"  # always passes
    body = {"reason": "other", "message": "linha\x001", "turnstile": "t"}
    response = client.post("/api/v1/reports", body, content_type="application/json")
    assert response.status_code == 400
    assert [i["path"] for i in response.json()["issues"]] == ["message"]


def test_a_plain_options_request_gets_the_allowed_methods_only(client, db):
    response = client.options("/api/v1/submissions")
    assert response.status_code == 200
    assert response.json() == {}  # not DRF's view name, renderers and parsers
    assert set(response["Allow"].replace(" ", "").split(",")) == {"POST", "OPTIONS"}


def test_docs_page_renders(client, db):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    assert b"openapi.json" in response.content


@pytest.mark.live
@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_schemathesis_finds_no_failure_in_the_read_operations(live_server, bar, formats, settings):
    settings.READ_RATE_LIMIT = "off"
    make_deals(bar, formats, 5)
    make_deals(
        bar,
        formats,
        2,
        kind="happy_hour",
        schedules=[{"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"}],
    )
    datasets_export(progress=False)  # the static files answer 200 (503 before an export)

    def schemathesis(*selection: str) -> str:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "schemathesis.cli",
                "run",
                f"{live_server.url}/api/v1/openapi.json",
                "--checks",
                "all",
                "--include-method",
                "GET",
                *selection,
                "--max-examples",
                "40",
                "--seed",
                "1",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, result.stdout[-4000:]
        assert "passed" in result.stdout and "404 Not Found" not in result.stdout
        return result.stdout

    schemathesis("--mode", "all", "--exclude-path-regex", "optout")
    # The opt-out token has the interface's pattern, yet any other value gets the same page
    # (interface.md: unknown and invalid tokens are answered like valid ones): valid data only.
    schemathesis("--mode", "positive", "--include-path-regex", "optout")
