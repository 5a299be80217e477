"""The invitation e-mail of a new lead: sent once, with its opt-out link as RFC 8058 headers."""

import pytest
from django.test import Client

from beers.models import City, Venue
from outreach import services
from outreach.models import Lead, LeadStatus
from outreach.tokens import optout_url

pytestmark = pytest.mark.django_db
EMAIL = "dono@bar-da-esquina.com.br"


@pytest.fixture
def venue():
    city = City.objects.create(
        slug="recife", name="Recife", state="PE", timezone="America/Recife", lat=-8.05, lng=-34.9
    )
    return Venue.objects.create(
        city=city, slug="bar-da-esquina", name="Bar da Esquina", kind="bar", lat=-8.05, lng=-34.9
    )


def invite(staff, django_capture_on_commit_callbacks, *leads):
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(
            "/admin/outreach/lead/",
            {"action": "invite", "_selected_action": [lead.id for lead in leads]},
        )
    assert response.status_code == 302


def test_a_new_lead_is_invited_once_with_a_one_click_opt_out(
    staff, venue, mailoutbox, django_capture_on_commit_callbacks
):
    lead = services.lead_create(name="Bar da Esquina", email=EMAIL, venue=venue)
    invite(staff, django_capture_on_commit_callbacks, lead)
    invite(staff, django_capture_on_commit_callbacks, lead)  # contacted now: not again

    (mail,) = mailoutbox
    assert mail.to == [EMAIL]
    assert mail.extra_headers["List-Unsubscribe"] == f"<{optout_url(lead.id)}>"
    assert mail.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert optout_url(lead.id) in mail.body
    assert "/recife/bar-da-esquina" in mail.body
    assert Lead.objects.get(id=lead.id).status == LeadStatus.CONTACTED

    # the mail client's one-click POST to that address opts the lead out
    path = optout_url(lead.id).split("://", 1)[1].split("/", 1)[1]
    with django_capture_on_commit_callbacks(execute=True):
        Client().post(f"/{path}", {"List-Unsubscribe": "One-Click"})
    assert Lead.objects.get(id=lead.id).status == LeadStatus.DO_NOT_CONTACT
    assert len(mailoutbox) == 2  # the confirmation


def test_only_new_leads_reached_by_e_mail_are_invited(
    staff, mailoutbox, django_capture_on_commit_callbacks
):
    leads = [services.lead_create(name=f"Bar {n}", email=f"bar{n}@example.com") for n in range(4)]
    Lead.objects.filter(id=leads[1].id).update(status=LeadStatus.REPLIED)
    Lead.objects.filter(id=leads[2].id).update(by_email=False, by_phone=True)
    services.lead_opt_out(lead_id=leads[3].id)
    mailoutbox.clear()  # the opt-out's confirmation
    invite(staff, django_capture_on_commit_callbacks, *leads)
    assert [m.to for m in mailoutbox] == [["bar0@example.com"]]


def test_an_address_that_opted_out_on_another_lead_is_not_written_to(
    staff, mailoutbox, django_capture_on_commit_callbacks
):
    first = services.lead_create(name="Bar da Esquina", email=EMAIL)
    twin = services.lead_create(name="Bar da Esquina (filial)", email=EMAIL.upper())
    services.lead_opt_out(lead_id=first.id)
    mailoutbox.clear()
    assert Lead.objects.get(id=twin.id).status == LeadStatus.DO_NOT_CONTACT
    # a twin left new by other means (an old row) is still not written to
    Lead.objects.filter(id=twin.id).update(status=LeadStatus.NEW, by_email=True)
    assert services.lead_invite(lead_id=twin.id) is False
    assert mailoutbox == []
    assert Lead.objects.get(id=twin.id).status == LeadStatus.DO_NOT_CONTACT


def test_a_failed_send_gives_the_lead_back_for_the_retry(mailoutbox, monkeypatch):
    lead = services.lead_create(name="Bar da Esquina", email=EMAIL)

    def down(*args, **kwargs):
        raise ConnectionRefusedError(f"relay refused {EMAIL}")

    monkeypatch.setattr("django.core.mail.EmailMessage.send", down)
    with pytest.raises(services.InviteNotSent) as caught:
        services.lead_invite(lead_id=lead.id)
    assert EMAIL not in str(caught.value)
    assert Lead.objects.get(id=lead.id).status == LeadStatus.NEW
    monkeypatch.undo()
    assert services.lead_invite(lead_id=lead.id) is True
    assert services.lead_invite(lead_id=lead.id) is False
    assert len(mailoutbox) == 1
