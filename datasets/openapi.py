"""The static dataset files in the OpenAPI description.

They are served by a plain Django view (datasets.views), which drf-spectacular does not see;
this postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]) adds their paths.
"""

from beers.selectors.queries import CITY_SLUG_RE

from .services import CITY_FILES, TOP_FILES

_TYPES = {
    ".json": ("application/json", {"type": "object"}),
    ".csv": ("text/csv", {"type": "string"}),
    ".geojson": ("application/geo+json", {"type": "object"}),
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
    paths["/api/v1/{city}/{file}"] = {
        "get": _operation(
            "getCityDataset",
            "Static dataset: one file of a city (datasets.md)",
            _content(CITY_FILES),
            parameters=(
                {
                    "name": "city",
                    "in": "path",
                    "required": True,
                    "description": "city slug",
                    "schema": {"type": "string", "pattern": CITY_SLUG_RE.pattern},
                },
                {
                    "name": "file",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string", "enum": list(CITY_FILES)},
                },
            ),
        )
    }
    return result
