"""Leads: bars contacted by e-mail, and whether they may be contacted again."""

from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from beers.crypto import EncryptedTextField
from beers.models import Venue


class LeadStatus(models.TextChoices):
    NEW = "new", _("novo")
    CONTACTED = "contacted", _("contatado")
    REPLIED = "replied", _("respondeu")
    PARTNER = "partner", _("parceiro")
    DO_NOT_CONTACT = "do_not_contact", _("não contatar")


# A name goes into an e-mail's subject, where a line break cannot be written (Django refuses
# the message, and the invitation failed for good while the admin said it was queued).
one_line = RegexValidator(
    r"^[^\x00-\x1f\x7f]*\Z", _("Uma linha só: sem quebras de linha nem caracteres de controle.")
)


class Lead(models.Model):
    """A bar contacted by e-mail. The e-mail is stored encrypted; `email_index` (a keyed hash
    of it) finds a lead by address. `__str__` never shows the e-mail: the admin's history
    stores it."""

    venue = models.ForeignKey(
        Venue, on_delete=models.SET_NULL, null=True, blank=True, related_name="leads"
    )
    name = models.CharField(_("nome"), max_length=120, validators=[one_line])
    email = EncryptedTextField(_("e-mail"))
    email_index = models.CharField(max_length=64, db_index=True, editable=False)
    status = models.CharField(max_length=16, choices=LeadStatus.choices, default=LeadStatus.NEW)
    by_email = models.BooleanField(_("contato por e-mail"), default=True)
    by_whatsapp = models.BooleanField(_("contato por WhatsApp"), default=False)
    by_instagram = models.BooleanField(_("contato por Instagram"), default=False)
    by_phone = models.BooleanField(_("contato por telefone"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    opted_out_at = models.DateTimeField(_("saiu em"), null=True, blank=True)
    # Claimed by the one task that sends the opt-out confirmation (at most one e-mail).
    confirmation_sent_at = models.DateTimeField(null=True, blank=True, editable=False)
    # An opt-out by its token owes one confirmation until it is sent (a move made in the
    # admin owes none until the token is used): optout_confirmations_due sends what a lost
    # task did not.
    confirmation_due = models.BooleanField(default=False, editable=False)
    # The address that opted out, as it was then: its confirmation goes there, not to an
    # address the lead was given afterwards. Cleared once the confirmation is sent.
    optout_email = EncryptedTextField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("contato de bar")
        verbose_name_plural = _("contatos de bares")
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=LeadStatus.values), name="lead_status_valid"
            ),
            # Opted out means no channel at all.
            models.CheckConstraint(
                condition=~Q(status=LeadStatus.DO_NOT_CONTACT)
                | Q(by_email=False, by_whatsapp=False, by_instagram=False, by_phone=False),
                name="lead_do_not_contact_no_channel",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class OptedOutAddress(models.Model):
    """An e-mail address whose person opted out by a token (`email_index`, its keyed hash;
    never the address): kept apart from the leads, so that deleting or editing the lead that
    opted out does not make the address contactable again. No admin: an opt-out is for
    good."""

    email_index = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("endereço que saiu")
        verbose_name_plural = _("endereços que saíram")

    def __str__(self) -> str:
        return f"opted out {self.email_index[:8]}…"
