"""Writes of the outreach app: leads, and opting out of every contact."""

import datetime as dt

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.template.loader import render_to_string
from django.utils import timezone, translation

from beers.crypto import blind_index
from beers.models import Venue
from beers.selectors.render import venue_url

from .models import Lead, LeadStatus, OptedOutAddress
from .tokens import optout_url


class ConfirmationNotSent(Exception):
    """The confirmation e-mail could not be sent (retried by the task)."""


NO_CHANNEL = dict(by_email=False, by_whatsapp=False, by_instagram=False, by_phone=False)


def address_opted_out(email_index: str) -> bool:
    """Whether the person at this address opted out by a token (on any lead, deleted or
    edited since: OptedOutAddress). A move made in the admin is the moderators' to undo."""
    return bool(email_index) and OptedOutAddress.objects.filter(email_index=email_index).exists()


def lead_save(lead: Lead) -> Lead:
    """Save a lead, keeping the blind index in step with its e-mail; do_not_contact closes
    every channel. An opt-out is for good (interface.md: do_not_contact on every channel): a
    lead that opted out stays do_not_contact whatever the form says, and so does a lead, new
    or edited, at an address that opted out before."""
    lead.email_index = blind_index(lead.email) if lead.email else ""
    opted_out = lead.confirmation_due or lead.confirmation_sent_at is not None
    if opted_out or address_opted_out(lead.email_index):
        lead.status = LeadStatus.DO_NOT_CONTACT
    if lead.status == LeadStatus.DO_NOT_CONTACT:
        for flag, value in NO_CHANNEL.items():
            setattr(lead, flag, value)
        lead.opted_out_at = lead.opted_out_at or timezone.now()
    else:  # a moderator undid their own move
        lead.opted_out_at = None
    lead.save()
    return lead


@transaction.atomic
def lead_create(*, name: str, email: str, venue: Venue | None = None) -> Lead:
    return lead_save(Lead(name=name, email=email.strip(), venue=venue))


@transaction.atomic
def lead_opt_out(*, lead_id: int) -> bool:
    """Move the lead to do_not_contact on every channel, owing one confirmation e-mail
    (interface.md: from any state). A lead already moved there in the admin is owed its
    confirmation too, at the first opt-out by its token; a repeated token changes nothing
    (a confirmation is already owed or sent). True only for the one call that made the move:
    a conditional UPDATE, so concurrent opt-outs cannot both win (on PostgreSQL the second
    waits for the row lock, then finds the condition false)."""
    # The person's leads (this one, and those sharing its address) are locked first, in id
    # order: two opt-outs of sibling leads took their locks in opposite orders, and one of them
    # deadlocked (a 503 to a valid token). An invalid token (0) locks nothing, the same way.
    same_address = Lead.objects.filter(id=lead_id).exclude(email_index="").values("email_index")
    list(
        Lead.objects.filter(Q(id=lead_id) | Q(email_index__in=same_address))
        .select_for_update()
        .order_by("id")
        .values_list("id", flat=True)
    )
    email_index = (
        Lead.objects.filter(id=lead_id).values_list("email_index", flat=True).first() or ""
    )
    # The address opted out and was confirmed before (on a lead deleted or edited since, or
    # a lead given that address afterwards): one mailbox, one confirmation.
    confirmed = address_opted_out(email_index)
    moved = (
        Lead.objects.filter(id=lead_id)
        .filter(
            ~Q(status=LeadStatus.DO_NOT_CONTACT)
            | Q(confirmation_due=False, confirmation_sent_at__isnull=True)
        )
        .update(
            status=LeadStatus.DO_NOT_CONTACT,
            opted_out_at=timezone.now(),
            confirmation_sent_at=timezone.now() if confirmed else None,
            confirmation_due=not confirmed,
            optout_email=None if confirmed else F("email"),  # its confirmation goes there
            **NO_CHANNEL,
        )
    )
    if moved and email_index:
        OptedOutAddress.objects.get_or_create(email_index=email_index)
    if moved and not confirmed:
        # The same address on other leads (a bar listed twice): the person opted out, and this
        # lead's confirmation is theirs too, so their own tokens change nothing later (one
        # mailbox, one confirmation). A sibling whose own confirmation is under way is left.
        if email_index:
            Lead.objects.filter(email_index=email_index, confirmation_due=False).exclude(
                id=lead_id
            ).filter(
                ~Q(status=LeadStatus.DO_NOT_CONTACT) | Q(confirmation_sent_at__isnull=True)
            ).update(
                status=LeadStatus.DO_NOT_CONTACT,
                opted_out_at=Coalesce("opted_out_at", Value(timezone.now())),
                confirmation_sent_at=timezone.now(),
                **NO_CHANNEL,
            )
        from .tasks import optout_confirmation_send

        # robust: a broker or mail failure must not change the answer, which is the same for
        # every token (optout_confirmations_due sends a confirmation lost that way).
        transaction.on_commit(lambda: optout_confirmation_send.delay(lead_id), robust=True)
    return bool(moved)


def _reply_to() -> list[str] | None:
    """Where a bar may answer the outreach e-mails (OUTREACH_REPLY_TO), if anywhere."""
    return [settings.OUTREACH_REPLY_TO] if settings.OUTREACH_REPLY_TO else None


def optout_confirmation_send(*, lead_id: int) -> bool:
    """Send the one confirmation e-mail of an opt-out. The send is claimed first (a
    conditional UPDATE), so retries and duplicate tasks never send twice; a failed send gives
    the claim back and raises, for the task to retry."""
    claimed = Lead.objects.filter(
        id=lead_id,
        status=LeadStatus.DO_NOT_CONTACT,
        confirmation_due=True,
        confirmation_sent_at__isnull=True,
    ).update(confirmation_sent_at=timezone.now(), confirmation_due=False)
    if not claimed:
        return False
    lead = Lead.objects.get(id=lead_id)
    try:
        with translation.override("pt-br"):
            context = {
                "lead": lead,
                "site_name": settings.SITE_NAME,
                "site_url": settings.SITE_URL,
                "reply_to": settings.OUTREACH_REPLY_TO,
            }
            subject = render_to_string("outreach/email/optout_subject.txt", context).strip()
            body = render_to_string("outreach/email/optout_body.txt", context)
        # the address that opted out (one a moderator gave the lead since is not asked)
        to = lead.optout_email or lead.email
        EmailMessage(subject, body, settings.DEFAULT_FROM_EMAIL, [to], reply_to=_reply_to()).send()
    except Exception as exc:
        Lead.objects.filter(id=lead_id).update(confirmation_sent_at=None, confirmation_due=True)
        # Mail errors may quote the recipient; what reaches the logs names only the lead.
        raise ConfirmationNotSent(f"lead {lead_id}: {type(exc).__name__}") from None
    Lead.objects.filter(id=lead_id).update(optout_email=None)
    return True


# A confirmation whose task was lost (the broker down at the opt-out, every retry failed) is
# sent by the hourly job once its task had time to run, within a week of the opt-out.
CONFIRMATION_GRACE = dt.timedelta(minutes=15)
CONFIRMATION_GIVE_UP = dt.timedelta(days=7)


def optout_confirmations_due(*, now: dt.datetime | None = None) -> int:
    """Hourly (Celery beat): enqueue the confirmations still owed (see CONFIRMATION_GRACE);
    returns how many. The send claims each one, so one already on its way is not sent twice."""
    from .tasks import optout_confirmation_send

    now = now or timezone.now()
    owed = Lead.objects.filter(
        status=LeadStatus.DO_NOT_CONTACT,
        confirmation_due=True,
        confirmation_sent_at__isnull=True,
        opted_out_at__lt=now - CONFIRMATION_GRACE,
        opted_out_at__gte=now - CONFIRMATION_GIVE_UP,
    ).values_list("id", flat=True)
    ids = list(owed)
    for lead_id in ids:
        optout_confirmation_send.delay(lead_id)
    return len(ids)


class InviteNotSent(Exception):
    """The invitation could not be sent (retried by the task); names only the lead."""


def lead_invite(*, lead_id: int) -> bool:
    """E-mail a new lead the invitation to check its bar's prices, with its opt-out link in
    the body and as RFC 8058 one-click headers. Only a `new` lead reached by e-mail is
    invited, once: the send is claimed by moving it to `contacted` (a conditional UPDATE), so
    repeated or concurrent tasks send once; a failed send gives the claim back and raises.
    An address that opted out on another lead is not written to (the lead follows it)."""
    lead = Lead.objects.filter(id=lead_id).first()
    if lead is None:
        return False
    if address_opted_out(lead.email_index):
        lead_save(lead)  # do_not_contact, as its address asked
        return False
    claimed = Lead.objects.filter(id=lead_id, status=LeadStatus.NEW, by_email=True).update(
        status=LeadStatus.CONTACTED
    )
    if not claimed:
        return False
    unsubscribe = optout_url(lead_id)
    try:
        with translation.override("pt-br"):
            venue = lead.venue
            context = {
                "lead": lead,
                "site_name": settings.SITE_NAME,
                "site_url": settings.SITE_URL,
                "venue_url": venue and venue_url(venue.city, venue, "pt-BR"),
                "optout_url": unsubscribe,
                "reply_to": settings.OUTREACH_REPLY_TO,
            }
            subject = render_to_string("outreach/email/invite_subject.txt", context).strip()
            body = render_to_string("outreach/email/invite_body.txt", context)
        EmailMessage(
            subject,
            body,
            settings.DEFAULT_FROM_EMAIL,
            [lead.email],
            reply_to=_reply_to(),
            headers={
                "List-Unsubscribe": f"<{unsubscribe}>",
                "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            },
        ).send()
    except Exception as exc:
        Lead.objects.filter(id=lead_id, status=LeadStatus.CONTACTED).update(status=LeadStatus.NEW)
        raise InviteNotSent(f"lead {lead_id}: {type(exc).__name__}") from None
    return True
