"""The OpenAPI description documents the writes as the interface gives them."""

import json

import pytest
from openapi_spec_validator import validate

WRITES = {
    "/api/v1/submissions": ("SubmissionRequest", {202, 400, 403, 413, 422, 429, 503}),
    "/api/v1/city-requests": ("CityRequestRequest", {202, 400, 403, 413, 429, 503}),
    "/api/v1/bar-owners": ("BarOwnerRequestRequest", {202, 400, 403, 413, 422, 429, 503}),
    "/api/v1/menu-photos": ("MenuPhotoUploadRequest", {202, 400, 403, 413, 422, 429, 503}),
    "/api/v1/deals/{id}/confirm": ("DealConfirmRequest", {202, 400, 403, 404, 413, 429, 503}),
    "/api/v1/deals/{id}/dispute": ("DealDisputeRequest", {202, 400, 403, 404, 413, 429, 503}),
    "/api/v1/reports": ("ReportRequest", {202, 400, 403, 413, 422, 429, 503}),
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
        "SubmissionRequest",
        "NewVenueRequest",
        "ScheduleDraftRequest",
        "VenueIdRequest",
        "VenueNewRequest",
        "CityRequestRequest",
        "BarOwnerRequestRequest",
        "MenuPhotoUploadRequest",
        "DealConfirmRequest",
        "DealDisputeRequest",
        "ReportRequest",
    ):
        assert schemas[name]["additionalProperties"] is False, name


def test_bounds_are_in_the_description(openapi):
    schemas = openapi["components"]["schemas"]
    sub = schemas["SubmissionRequest"]["properties"]
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
    assert schemas["VenueRefRequest"]["oneOf"] == [
        {"$ref": "#/components/schemas/VenueIdRequest"},
        {"$ref": "#/components/schemas/VenueNewRequest"},
    ]
    days = schemas["ScheduleDraftRequest"]["properties"]["days"]
    assert (days["minItems"], days["maxItems"]) == (1, 7)
    assert (days["items"]["minimum"], days["items"]["maximum"]) == (0, 6)
    images = schemas["MenuPhotoUploadRequest"]["properties"]["images"]
    assert (images["minItems"], images["maxItems"], images["items"]["maxLength"]) == (1, 3, 700000)
    consent = schemas["BarOwnerRequestRequest"]["properties"]["consent"]
    ref = consent["allOf"][0]["$ref"].rsplit("/", 1)[1]
    assert schemas[ref]["enum"] == [True]
    params = openapi["paths"]["/api/v1/deals/{id}/confirm"]["post"]["parameters"]
    assert params[0]["schema"] == {"type": "integer", "minimum": 1}
