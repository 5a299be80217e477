from django.http import HttpResponse
from django.urls import path

from config.urls import urlpatterns as real


def ping(request):
    return HttpResponse(b'{"ok":true}', content_type="application/json")


urlpatterns = [path("bench/ping", ping), *real]
