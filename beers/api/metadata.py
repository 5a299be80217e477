"""What a plain OPTIONS request to the API answers: the `Allow` header and an empty object.

DRF's default metadata names the view's class and its renderers and parsers, which is no
part of the interface (the OpenAPI description at /api/v1/openapi.json is). CORS preflights
never reach it: django-cors-headers answers them first.
"""

from rest_framework.metadata import BaseMetadata


class AllowOnly(BaseMetadata):
    def determine_metadata(self, request, view) -> dict:
        return {}
