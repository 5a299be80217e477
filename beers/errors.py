"""Errors the services and selectors raise; the API maps them to ErrorResponse."""

from dataclasses import dataclass, field


@dataclass
class Issue:
    path: str
    message: str


@dataclass
class ApplicationError(Exception):
    """An answer that is not a success, with its documented status and code."""

    status: int
    code: str
    message: str = ""
    issues: list[Issue] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"


SHOWN_CHARS = 60


def shown(value: str) -> str:
    """A value the client sent, as an error message repeats it: cut to SHOWN_CHARS (a city
    slug of 10,000 characters came back whole in its 404)."""
    return value if len(value) <= SHOWN_CHARS else value[: SHOWN_CHARS - 1] + "…"


def not_found(message: str) -> ApplicationError:
    return ApplicationError(404, "not_found", message)


def invalid(issues: list[Issue], message: str = "Invalid request.") -> ApplicationError:
    return ApplicationError(400, "invalid_request", message, issues)


def unprocessable(message: str, issues: list[Issue] | None = None) -> ApplicationError:
    return ApplicationError(422, "unprocessable", message, issues or [])
