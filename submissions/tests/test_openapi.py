"""The OpenAPI description documents the writes as the interface gives them."""

import json

import pytest
from openapi_spec_validator import validate

WRITES = {
    "/api/v1/submissions": ("Submission", {202, 400, 403, 413, 422, 429, 503}),
    "/api/v1/city-requests": ("CityRequest", {202, 400, 403, 413, 429, 503}),
    "/api/v1/bar-owners": ("BarOwnerRequest", {202, 400, 403, 413, 422, 429, 503}),
    "/api/v1/menu-photos": ("MenuPhotoUpload", {202, 400, 403, 413, 422, 429, 503}),
    "/api/v1/deals/{id}/confirm": ("DealConfirm", {202, 400, 403, 404, 413, 429, 503}),
    "/api/v1/deals/{id}/dispute": ("DealDispute", {202, 400, 403, 404, 413, 429, 503}),
    "/api/v1/reports": ("Report", {202, 400, 403, 413, 422, 429, 503}),
}


@pytest.fixture(scope="module")
def openapi():
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema))


def test_description_is_valid_openapi_3_1(openapi):
    assert openapi["openapi"].startswith("3.1")
    validate(openapi)


def test_write_bodies_carry_the_interfaces_names(openapi):
    """interface.md names the bodies Submission, CityRequest, …: no `Request` suffix added."""
    schemas = openapi["components"]["schemas"]
    assert {body for body, _ in WRITES.values()} | {"NewVenue", "ScheduleDraft"} <= set(schemas)
    assert not [name for name in schemas if name.endswith("RequestRequest")]
    assert [name for name in schemas if name.endswith("Request")] == [
        "BarOwnerRequest",
        "CityRequest",
    ]
    # required text keeps the request-only minLength the split components carry
    assert schemas["Submission"]["properties"]["city"]["minLength"] == 1


@pytest.mark.parametrize("path", WRITES)
def test_every_write_is_documented_with_its_answers(openapi, path):
    component, statuses = WRITES[path]
    operation = openapi["paths"][path]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": f"#/components/schemas/{component}"}
    assert {int(s) for s in operation["responses"]} == statuses
    ok = operation["responses"]["202"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/Received"}
    for status in statuses - {202}:
        schema = operation["responses"][str(status)]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorResponse"}


def test_bodies_refuse_other_keys_at_every_level(openapi):
    schemas = openapi["components"]["schemas"]
    for name in (
        "Submission",
        "NewVenue",
        "ScheduleDraft",
        "VenueId",
        "VenueNew",
        "CityRequest",
        "BarOwnerRequest",
        "MenuPhotoUpload",
        "DealConfirm",
        "DealDispute",
        "Report",
    ):
        assert schemas[name]["additionalProperties"] is False, name


def test_bounds_are_in_the_description(openapi):
    schemas = openapi["components"]["schemas"]
    sub = schemas["Submission"]["properties"]
    assert sub["price"] == {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": 10000,
        "description": "in reais",
    }
    assert sub["units"]["minimum"] == 1 and sub["units"]["maximum"] == 50
    assert sub["schedules"]["maxItems"] == 14
    assert sub["beer"]["type"] == ["string", "null"]
    assert sub["city"]["pattern"] == "^[a-z0-9]+(-[a-z0-9]+)*$"
    assert schemas["VenueRef"]["oneOf"] == [
        {"$ref": "#/components/schemas/VenueId"},
        {"$ref": "#/components/schemas/VenueNew"},
    ]
    days = schemas["ScheduleDraft"]["properties"]["days"]
    assert (days["minItems"], days["maxItems"]) == (1, 7)
    assert (days["items"]["minimum"], days["items"]["maximum"]) == (0, 6)
    images = schemas["MenuPhotoUpload"]["properties"]["images"]
    assert (images["minItems"], images["maxItems"], images["items"]["maxLength"]) == (1, 3, 700000)
    consent = schemas["BarOwnerRequest"]["properties"]["consent"]
    ref = consent["allOf"][0]["$ref"].rsplit("/", 1)[1]
    assert schemas[ref]["enum"] == [True]
    params = openapi["paths"]["/api/v1/deals/{id}/confirm"]["post"]["parameters"]
    assert params[0]["schema"] == {"type": "integer", "minimum": 1}
