from django.urls import path

from . import views

urlpatterns = [
    path("status", views.StatusApi.as_view(), name="status"),
    path("search", views.SearchApi.as_view(), name="search"),
    path("cheapest", views.CheapestApi.as_view(), name="cheapest"),
    # Any text: a malformed id is a 400 with issues, not an unmatched route.
    path("venues/<str:id>", views.VenueApi.as_view(), name="venue"),
]
