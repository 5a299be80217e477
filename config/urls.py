"""URLs: admin, the API under /api/v1/, the static datasets, the site pages."""

from django.contrib import admin
from django.core.exceptions import SuspiciousOperation
from django.http import HttpResponse, HttpResponseBadRequest, HttpResponseServerError
from django.urls import include, path

from beers.api.errors import is_api_path, json_error, suspicious_json
from beers.api.live import login_wait
from beers.views import not_found_page, path_lang
from outreach.urls import staff_urlpatterns


def admin_login(request, extra_context=None):
    """The admin's login, with sign-in attempts limited per client address
    (ADMIN_LOGIN_RATE_LIMIT): password guesses were unlimited (about 2 a second)."""
    if request.method == "POST":
        try:
            retry_after = login_wait(request)
        except Exception:  # the counters' store is down: no unlimited guessing meanwhile
            response = _plain_page(
                HttpResponse,
                "pt-BR",
                "Indisponível",
                "Não é possível entrar agora; tente de novo em um minuto.",
            )
            response.status_code = 503
            response["Retry-After"] = "60"
            return response
        if retry_after:
            response = _plain_page(
                HttpResponse,
                "pt-BR",
                "Muitas tentativas",
                "Tentativas de entrar demais deste endereço; tente de novo mais tarde.",
            )
            response.status_code = 429
            response["Retry-After"] = str(retry_after)
            return response
    return admin.site.login(request, extra_context)


urlpatterns = [
    path("admin/login/", admin_login),  # before the admin's own, which it wraps
    path("admin/", admin.site.urls),
    path("api/v1/", include("beers.api.urls")),
    path("api/v1/", include("submissions.api.urls")),
    path("api/v1/", include("outreach.urls")),
    path("api/admin/", include(staff_urlpatterns)),
    path("api/v1/", include("config.schema_urls")),
    # Dataset files last: they match /api/v1/{city}/{file}.
    path("api/v1/", include("datasets.urls")),
    path("", include("beers.urls")),
]


def _is_api(request) -> bool:
    return is_api_path(request.path)


def _lang(request) -> str:
    return path_lang(request.path)


def _plain_page(response_class, lang: str, title: str, text: str):
    """A page that needs nothing (no template, no database): the error handlers'."""
    return response_class(
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{title} · Breja</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"
    )


def handler400(request, exception=None):
    """Refused before any view (a Host not in ALLOWED_HOSTS, say): JSON under /api/."""
    if _is_api(request):
        if isinstance(exception, SuspiciousOperation):
            return suspicious_json(exception)
        return json_error(400, "Invalid request.")
    if _lang(request) == "en":
        return _plain_page(HttpResponseBadRequest, "en", "Bad request", "The request was refused.")
    return _plain_page(
        HttpResponseBadRequest, "pt-BR", "Requisição inválida", "A requisição foi recusada."
    )


def handler404(request, exception=None):
    if _is_api(request):
        return json_error(404, "Not found.")
    return not_found_page(request, _lang(request))


def handler500(request):
    if _is_api(request):
        return json_error(500, "Internal error.")
    if _lang(request) == "en":
        return _plain_page(
            HttpResponseServerError, "en", "Internal error", "Something went wrong on our side."
        )
    return _plain_page(
        HttpResponseServerError, "pt-BR", "Erro interno", "Algo deu errado do nosso lado."
    )
