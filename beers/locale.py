"""Accept-Language chooses the admin's language, and nothing else's.

The site's pages take their language from the address (`/en/…`), the API from `lang`, and
the static files have none; Django's LocaleMiddleware would still add `Vary: Accept-Language`
to all of them, so a shared cache kept one copy per browser language of the same bytes.
"""

from django.conf import settings
from django.middleware.locale import LocaleMiddleware
from django.utils import translation

ADMIN_PREFIX = "/admin/"


class AdminLocaleMiddleware(LocaleMiddleware):
    def process_request(self, request):
        if request.path_info.startswith(ADMIN_PREFIX):
            return super().process_request(request)
        # the thread may have served the admin in another language just before
        translation.activate(settings.LANGUAGE_CODE)
        request.LANGUAGE_CODE = translation.get_language()
        return None

    def process_response(self, request, response):
        if request.path_info.startswith(ADMIN_PREFIX):
            return super().process_response(request, response)
        return response
