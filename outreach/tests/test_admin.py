"""Leads in the admin: e-mail masked in the list, readable only on the change form."""

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model

from beers.crypto import blind_index
from outreach import services
from outreach.admin import mask_email
from outreach.models import LeadStatus

pytestmark = pytest.mark.django_db
EMAIL = "gerente@bardapraca.com.br"


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def lead():
    return services.lead_create(name="Bar da Praça", email=EMAIL)


def test_mask_email():
    assert mask_email("ana@boteco.com.br") == "a**@b*****.com.br"
    assert mask_email("x") == "x"


def test_list_shows_the_email_masked(staff, lead):
    html = staff.get("/admin/outreach/lead/").content.decode()
    assert "Bar da Praça" in html
    assert EMAIL not in html
    assert mask_email(EMAIL) in html


def test_change_form_shows_the_email_decrypted(staff, lead):
    html = staff.get(f"/admin/outreach/lead/{lead.id}/change/").content.decode()
    assert f'value="{EMAIL}"' in html


def test_search_by_exact_email_uses_the_blind_index(staff, lead):
    services.lead_create(name="Outro Bar", email="outro@example.com")
    html = staff.get("/admin/outreach/lead/", {"q": " Gerente@BarDaPraca.com.br"}).content.decode()
    assert "Bar da Praça" in html and "Outro Bar" not in html


def test_saving_keeps_the_index_and_closes_channels_on_do_not_contact(staff, lead):
    response = staff.post(
        f"/admin/outreach/lead/{lead.id}/change/",
        {
            "name": "Bar da Praça",
            "email": "novo@example.com",
            "venue": "",
            "status": LeadStatus.DO_NOT_CONTACT,
            "by_email": "on",
            "by_phone": "on",
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    lead.refresh_from_db()
    assert lead.email == "novo@example.com"
    assert lead.email_index == blind_index("novo@example.com")
    assert (lead.by_email, lead.by_phone) == (False, False)
    assert lead.opted_out_at is not None
    assert all(
        "novo@example.com" not in e.object_repr + e.change_message for e in LogEntry.objects.all()
    )
