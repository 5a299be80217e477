"""The static dataset files in the OpenAPI description.

They are served by a plain Django view (datasets.views), which drf-spectacular does not see;
this postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]) adds their paths.
"""

from beers.selectors.queries import CITY_SLUG_RE

from .services import CITY_FILES, LICENSE, TOP_FILES

ENVELOPE = "DatasetEnvelope"
_ENVELOPE_SCHEMA = {
    "type": "object",
    "description": "Static dataset envelope (datasets.md names every file's other fields)",
    "properties": {
        "updated_at": {
            "type": "string",
            "format": "date-time",
            "description": "when the build read the data",
        },
        "license": {"type": "string", "const": LICENSE},
        "attribution": {"type": "string"},
        "items": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["updated_at", "license", "attribution"],
}
_TYPES = {
    ".json": ("application/json", {"$ref": f"#/components/schemas/{ENVELOPE}"}),
    ".csv": ("text/csv", {"type": "string"}),
    ".geojson": (
        "application/geo+json",
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "const": "FeatureCollection"},
                "features": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["type", "features"],
        },
    ),
}
_HEADERS = {
    "ETag": {"description": "strong validator of the file's bytes", "schema": {"type": "string"}},
    "Cache-Control": {"description": "public, max-age=300", "schema": {"type": "string"}},
    "Access-Control-Allow-Origin": {"description": "*", "schema": {"type": "string"}},
}


def _error(description: str, *, retry: bool = False) -> dict:
    response = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
    }
    if retry:
        response["headers"] = {"Retry-After": {"schema": {"type": "integer"}}}
    return response


def _operation(operation_id: str, summary: str, content: dict, parameters=()) -> dict:
    operation = {
        "operationId": operation_id,
        "summary": summary,
        "tags": ["datasets"],
        "responses": {
            "200": {"description": "the file (ODbL)", "headers": _HEADERS, "content": content},
            "304": {"description": "not modified (If-None-Match matched the ETag)"},
            "404": _error("no such dataset file (not_found)"),
            "503": _error("no export yet", retry=True),
        },
    }
    if parameters:
        operation["parameters"] = list(parameters)
    return operation


def _content(names) -> dict:
    content = {}
    for name in names:
        media, schema = _TYPES["." + name.rsplit(".", 1)[1]]
        content[media] = {"schema": schema}
    return content


def add_dataset_paths(result, generator, request, public):
    paths = result.setdefault("paths", {})
    for name in TOP_FILES:
        stem = name.split(".")[0]
        paths[f"/api/v1/{name}"] = {
            "get": _operation(
                f"getDataset{stem.title()}",
                f"Static dataset: {name} (datasets.md)",
                _content([name]),
            )
        }
    city = {
        "name": "city",
        "in": "path",
        "required": True,
        "description": "city slug",
        "schema": {"type": "string", "pattern": CITY_SLUG_RE.pattern},
        "example": "sao-paulo",
    }
    for name in CITY_FILES:
        stem, suffix = name.split(".")
        words = stem.replace("-", " ").title().replace(" ", "")
        paths[f"/api/v1/{{city}}/{name}"] = {
            "get": _operation(
                f"getCity{words}{suffix.title()}",
                f"Static dataset: {name} of a city (datasets.md)",
                _content([name]),
                parameters=(city,),
            )
        }
    result.setdefault("components", {}).setdefault("schemas", {})[ENVELOPE] = _ENVELOPE_SCHEMA
    return result
