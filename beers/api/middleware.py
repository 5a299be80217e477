"""Every error under /api/ is a JSON ErrorResponse, whatever DEBUG says, never a stack trace."""

import logging

from .errors import json_error

logger = logging.getLogger(__name__)


class ApiErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            request.path.startswith("/api/")
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            converted = json_error(response.status_code, _MESSAGES.get(response.status_code, ""))
            for header in ("Retry-After", "Allow"):
                if header in response:
                    converted[header] = response[header]
            return converted
        return response

    def process_exception(self, request, exception):
        if request.path.startswith("/api/"):
            logger.exception("Unhandled error on %s", request.path)
            return json_error(500, "Internal error.")
        return None


_MESSAGES = {
    400: "Invalid request.",
    403: "Forbidden.",
    404: "Not found.",
    405: "Method not allowed.",
    413: "Request body too large.",
    500: "Internal error.",
}
