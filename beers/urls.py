"""Site pages at the root: `/{city}`, `/{city}/{bar}`, and the same under `/en/`.

A city slug is lowercase letters and digits in groups joined by single hyphens, and never one
of the reserved first segments, so these patterns cannot shadow /admin/, /api/, /static/, /mcp
or the /en prefix. The last pattern gives any other address outside /api/ and /admin/ the
site's 404 (a missing /static/ file too), DEBUG or not.
"""

from django.urls import path, re_path

from . import views
from .models import SITE_SEGMENTS

SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*"
CITY = rf"(?!(?:{'|'.join(SITE_SEGMENTS)})(?:/|$))(?P<city>{SLUG})"
VENUE = rf"(?P<venue>{SLUG})"
EN = {"lang": "en"}

urlpatterns = [
    path("robots.txt", views.robots, name="robots"),
    path("", views.home, name="home"),
    path("en", views.home, EN, name="home-en"),
    re_path(rf"^en/{CITY}$", views.city_page, EN, name="city-en"),
    re_path(rf"^en/{CITY}/{VENUE}$", views.venue_page, EN, name="venue-en"),
    re_path(rf"^{CITY}$", views.city_page, name="city"),
    re_path(rf"^{CITY}/{VENUE}$", views.venue_page, name="venue"),
    # A page asked with a trailing slash (typed, or cut from a link): the page's own address.
    re_path(rf"^(?P<page>en|(?:en/)?{CITY}(?:/{VENUE})?)/$", views.without_slash),
    # Anything else outside /api/ and /admin/ (which answer their own 404s): the site's 404.
    re_path(r"^(?!(?:api|admin)(?:/|$)).*$", views.unknown_page),
]
