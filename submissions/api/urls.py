from django.urls import path

from . import views

urlpatterns = [
    path("submissions", views.SubmissionCreateApi.as_view(), name="submission-create"),
    path("city-requests", views.CityRequestCreateApi.as_view(), name="city-request-create"),
    path("bar-owners", views.BarOwnerMessageCreateApi.as_view(), name="bar-owner-create"),
    path("menu-photos", views.MenuPhotoUploadCreateApi.as_view(), name="menu-photo-create"),
    # Any text: a malformed id is a 400 with issues, not an unmatched route.
    path("deals/<str:id>/confirm", views.DealConfirmApi.as_view(), name="deal-confirm"),
    path("deals/<str:id>/dispute", views.DealDisputeApi.as_view(), name="deal-dispute"),
    path("reports", views.ReportCreateApi.as_view(), name="report-create"),
]
