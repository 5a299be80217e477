"""Property-based: generated bodies (valid and invalid) never make a write answer 5xx, and every
answer matches the OpenAPI description (always-pass secret, in-process WSGI, rolled back)."""

import json

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from schemathesis import checks

from submissions.turnstile import ALWAYS_PASS


def _write_schema() -> dict:
    schema = json.loads(
        OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True))
    )
    writes = {
        path: item
        for path, item in schema["paths"].items()
        if "post" in item and "writes" in item["post"].get("tags", [])
    }
    return {**schema, "paths": writes}


schema = schemathesis.openapi.from_dict(_write_schema())
schema.app = WSGIHandler()


@pytest.fixture
def open_to_fuzzing(world, settings):
    settings.TURNSTILE_SECRET_KEY = ALWAYS_PASS
    settings.WRITE_RATE_LIMIT = "off"
    settings.WRITE_DAILY_CAP = 10**6
    settings.TRUSTED_PROXY_CIDRS = []
    # As django.test.Client does: keep the test's connection (and its transaction) open.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield world
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_writes_never_fail_with_a_server_error(case, open_to_fuzzing):
    response = case.call()
    assert response.status_code < 500, response.text
    # Not positive_data_acceptance: a well-formed slug of a city we do not have is a 422, and
    # valid_from after valid_until cannot be said in JSON Schema.
    case.validate_response(
        response,
        checks=[
            checks.not_a_server_error,
            checks.status_code_conformance,
            checks.content_type_conformance,
            checks.response_schema_conformance,
            checks.negative_data_rejection,
        ],
    )
