"""OpenAPI 3.1 description and a browsable doc page."""

from django.urls import path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView

urlpatterns = [
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs", SpectacularRedocView.as_view(url_name="openapi"), name="api-docs"),
]
