"""OpenAPI 3.1 description and a browsable doc page."""

from django.urls import path
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView


class OpenApiJsonView(SpectacularJSONAPIView):
    """`application/json`, like every body of the interface (spectacular answers with
    `application/vnd.oai.openapi+json` unless asked otherwise)."""

    renderer_classes = [OpenApiJsonRenderer2, OpenApiJsonRenderer]

    def _get_version_parameter(self, request):
        """One description, version 1.0.0 (interface: Versioning): spectacular's `?version=`
        would write the caller's text into `info.version` ("1.0.0 (2)")."""
        return None


class ApiDocsView(SpectacularRedocView):
    """ReDoc from our static files (the sidecar), without the web fonts the stock page loads
    from Google: the page depends on no outside host."""

    template_name = "api/redoc.html"


urlpatterns = [
    path("openapi.json", OpenApiJsonView.as_view(), name="openapi"),
    path("docs", ApiDocsView.as_view(url_name="openapi"), name="api-docs"),
]
