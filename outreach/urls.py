from django.urls import path

from . import views

urlpatterns = [
    # Anything after optout/ (slashes too): a malformed token gets the same page as a valid
    # one (no validity leak; interface: unknown, invalid and used tokens, the same answer).
    path("optout/<path:token>", views.optout, name="optout"),
]

# Under /api/admin/ (config/urls.py): staff endpoints.
staff_urlpatterns = [
    path("venues/<int:venue_id>/menu-link", views.MenuLinkApi.as_view(), name="menu-link"),
]
