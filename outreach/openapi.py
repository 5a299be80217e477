"""The opt-out page in the OpenAPI description: a plain Django view (outreach.views.optout),
added by a drf-spectacular postprocessing hook."""

from .tokens import TOKEN_RE

_HTML = {"text/html": {"schema": {"type": "string"}}}
_TOO_MANY = {
    "description": "too many requests (rate_limited)",
    "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
}
_UNAVAILABLE = {
    "description": "the database or the rate counters' store does not answer (unavailable); "
    "nothing was recorded, try again",
    "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
}
_TOKEN = {
    "name": "token",
    "in": "path",
    "required": True,
    "description": "from the e-mail; unknown, invalid and used tokens get the same answer",
    "schema": {"type": "string", "pattern": TOKEN_RE.pattern.replace("(", "").replace(")", "")},
}


# RFC 8058: mail clients POST this field, as a form (urlencoded or multipart).
_ONE_CLICK = {
    "type": "object",
    "properties": {"List-Unsubscribe": {"type": "string", "const": "One-Click"}},
}


def add_optout_paths(result, generator, request, public):
    result.setdefault("paths", {})["/api/v1/optout/{token}"] = {
        "get": {
            "operationId": "optoutPage",
            "parameters": [_TOKEN],
            "summary": "The opt-out page (pt-BR) with one button; changes nothing",
            "tags": ["optout"],
            "responses": {
                "200": {"description": "the page, the same for every token", "content": _HTML},
                "429": _TOO_MANY,
                "503": _UNAVAILABLE,
            },
        },
        "post": {
            "operationId": "optout",
            "parameters": [_TOKEN],
            "summary": "Opt out of every channel (the page's button, or RFC 8058 one-click)",
            "tags": ["optout"],
            "requestBody": {
                "required": False,
                "content": {
                    media: {"schema": _ONE_CLICK}
                    for media in ("application/x-www-form-urlencoded", "multipart/form-data")
                },
            },
            "responses": {
                "200": {
                    "description": "the same confirmation page for every token",
                    "content": _HTML,
                },
                "413": {
                    "description": "a form body over DATA_UPLOAD_MAX_MEMORY_SIZE "
                    "(payload_too_large)",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/ErrorResponse"}
                        }
                    },
                },
                "429": _TOO_MANY,
                "503": _UNAVAILABLE,
            },
        },
    }
    return result
