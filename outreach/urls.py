from django.urls import path, re_path

from . import views

urlpatterns = [
    # Anything after optout/ (slashes and line breaks too; `<path:>` stops at a newline): a
    # malformed token gets the same page as a valid one (no validity leak; interface:
    # unknown, invalid and used tokens, the same answer).
    re_path(r"^optout/(?P<token>[\s\S]+)\Z", views.optout, name="optout"),
]

# Under /api/admin/ (config/urls.py): staff endpoints.
staff_urlpatterns = [
    path("venues/<int:venue_id>/menu-link", views.MenuLinkApi.as_view(), name="menu-link"),
]
