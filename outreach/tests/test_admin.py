"""Leads in the admin: e-mail masked in the list, readable only on the change form."""

import pytest
from django.contrib.admin.models import LogEntry

from beers.crypto import blind_index
from outreach import services
from outreach.admin import mask_email
from outreach.models import Lead, LeadStatus

pytestmark = pytest.mark.django_db
EMAIL = "gerente@bardapraca.com.br"


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


def _post_lead(staff, path: str, **fields):
    data = {"name": "Bar da Praça", "email": EMAIL, "venue": "", "status": "contacted"}
    data |= {name: "on" for name in ("by_email", "by_phone")} | fields
    response = staff.post(path, data)
    assert response.status_code == 302, response.context["adminform"].form.errors


def test_an_opt_out_cannot_be_undone_in_the_admin(staff, lead):
    """The person's own opt-out (by their token) is for good: a moderator's form putting the
    lead back in contact saves do_not_contact with no channel."""
    assert services.lead_opt_out(lead_id=lead.id)
    _post_lead(staff, f"/admin/outreach/lead/{lead.id}/change/")
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT
    assert (lead.by_email, lead.by_phone) == (False, False)


def test_a_new_lead_at_an_address_that_opted_out_is_not_contacted(staff, lead):
    services.lead_opt_out(lead_id=lead.id)
    _post_lead(staff, "/admin/outreach/lead/add/", email=EMAIL.upper(), name="Bar da Praça 2")
    again = services.lead_create(name="Bar da Praça 3", email=EMAIL)
    for twin in (Lead.objects.get(name="Bar da Praça 2"), again):
        assert (twin.status, twin.by_email, twin.by_phone) == (
            LeadStatus.DO_NOT_CONTACT,
            False,
            False,
        )
    other = services.lead_create(name="Outro Bar", email="outro@example.com")
    assert (other.status, other.by_email) == (LeadStatus.NEW, True)


def test_a_move_made_in_the_admin_is_the_moderators_to_undo(staff, lead):
    _post_lead(staff, f"/admin/outreach/lead/{lead.id}/change/", status="do_not_contact")
    _post_lead(staff, f"/admin/outreach/lead/{lead.id}/change/")
    lead.refresh_from_db()
    assert (lead.status, lead.by_email, lead.opted_out_at) == (LeadStatus.CONTACTED, True, None)


@pytest.mark.parametrize("name", ["Bar Quebra\r\nBcc: evil@example.org", "Bar\tda Praça"])
def test_a_lead_name_is_one_line(staff, name):
    """It goes into the invitation's subject, which cannot carry a line break: the invitation
    then failed for good while the admin said it was queued."""
    data = {"name": name, "email": "novo@example.com", "venue": "", "status": "new"}
    response = staff.post("/admin/outreach/lead/add/", data | {"by_email": "on"})
    assert response.status_code == 200
    assert "name" in response.context["adminform"].form.errors
    assert not Lead.objects.filter(email_index=blind_index("novo@example.com")).exists()
