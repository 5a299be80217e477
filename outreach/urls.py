from django.urls import path

from . import views

urlpatterns = [
    # Any segment: a malformed token gets the same page as a valid one (no validity leak).
    path("optout/<str:token>", views.optout, name="optout"),
]

# Under /api/admin/ (config/urls.py): staff endpoints.
staff_urlpatterns = [
    path("venues/<int:venue_id>/menu-link", views.MenuLinkApi.as_view(), name="menu-link"),
]
