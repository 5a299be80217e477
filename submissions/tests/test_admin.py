"""Moderators can read every queued write; nobody edits one by hand."""

import pytest
from django.urls import reverse

from submissions.models import (
    BarOwnerMessage,
    CityRequest,
    DealConfirmation,
    DealDispute,
    MenuPhotoUpload,
    PriceSubmission,
    Report,
)

from .conftest import jpeg_data_uri


@pytest.mark.django_db
def test_admin_lists_and_shows_every_write(admin_client, api, world, writes_open):
    api.post(
        "/api/v1/submissions",
        {
            "city": "sao-paulo",
            "venue": {"id": world.venue.pk},
            "beer": None,
            "format_code": "garrafa_600",
            "price": 5,
            "email": "x@example.com",
            "consent": True,
            "turnstile": "t",
        },
    )
    api.post("/api/v1/city-requests", {"city": "Campinas", "turnstile": "t"})
    api.post(
        "/api/v1/bar-owners",
        {
            "city": "sao-paulo",
            "bar": "Bar",
            "topic": "other",
            "contact": "x@example.com",
            "consent": True,
            "turnstile": "t",
        },
    )
    api.post(
        "/api/v1/menu-photos",
        {"city": "sao-paulo", "venue": "bar-do-ze", "images": [jpeg_data_uri()], "turnstile": "t"},
    )
    api.post(f"/api/v1/deals/{world.deal.pk}/confirm", {"turnstile": "t"})
    api.post(f"/api/v1/deals/{world.deal.pk}/dispute", {"turnstile": "t"})
    api.post("/api/v1/reports", {"reason": "closed", "turnstile": "t"})
    for model in (
        PriceSubmission,
        CityRequest,
        BarOwnerMessage,
        MenuPhotoUpload,
        DealConfirmation,
        DealDispute,
        Report,
    ):
        meta = model._meta
        listing = admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        assert listing.status_code == 200, model
        assert b"x@example.com" not in listing.content
        row = model.objects.get()
        page = admin_client.get(
            reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[row.pk])
        )
        assert page.status_code == 200, model
        assert (
            admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_add")).status_code
            == 403
        )
