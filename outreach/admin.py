"""Leads in the admin: the e-mail shows (decrypted) only on the change form, masked elsewhere;
search by exact e-mail goes through the blind index."""

from django import forms
from django.contrib import admin
from django.db import transaction

from beers.crypto import blind_index

from . import services
from .models import Lead, LeadStatus


def mask_email(email: str) -> str:
    """'ana@boteco.com.br' -> 'a**@b*****.com.br'."""
    local, _, domain = (email or "").partition("@")
    host, dot, rest = domain.partition(".")
    hide = lambda part: part[:1] + "*" * max(len(part) - 1, 0)  # noqa: E731
    return f"{hide(local)}@{hide(host)}{dot}{rest}" if domain else hide(local)


class LeadForm(forms.ModelForm):
    email = forms.EmailField(label="e-mail", max_length=200)

    class Meta:
        model = Lead
        fields = [
            "name",
            "email",
            "venue",
            "status",
            "by_email",
            "by_whatsapp",
            "by_instagram",
            "by_phone",
        ]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("status") == LeadStatus.DO_NOT_CONTACT:
            # do_not_contact closes every channel (a database constraint): untick them here
            # rather than refuse the form.
            cleaned.update(services.NO_CHANNEL)
        return cleaned


@admin.register(Lead)
class LeadAdmin(admin.ModelAdmin):
    form = LeadForm
    list_display = ["name", "masked_email", "venue", "status", "created_at", "opted_out_at"]
    list_filter = ["status"]
    search_fields = ["name"]
    raw_id_fields = ["venue"]
    readonly_fields = ["created_at", "opted_out_at"]
    actions = ["invite"]

    @admin.display(description="e-mail")
    def masked_email(self, lead: Lead) -> str:
        return mask_email(lead.email)

    def get_search_results(self, request, queryset, search_term):
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        if "@" in search_term:
            results |= queryset.filter(email_index=blind_index(search_term))
        return results, may_have_duplicates

    def save_model(self, request, obj, form, change):
        services.lead_save(obj)

    @admin.action(description="Enviar o convite por e-mail (contatos novos)")
    def invite(self, request, queryset):
        """Queue the invitation of each selected `new` lead reached by e-mail; the others are
        left as they are (each is written to once: lead_invite)."""
        from .tasks import lead_invite_send

        ids = list(
            queryset.filter(status=LeadStatus.NEW, by_email=True).values_list("id", flat=True)
        )
        for lead_id in ids:
            transaction.on_commit(
                lambda lead_id=lead_id: lead_invite_send.delay(lead_id), robust=True
            )
        skipped = queryset.count() - len(ids)
        self.message_user(
            request,
            f"{len(ids)} convite(s) na fila; {skipped} contato(s) não são novos ou não têm e-mail.",
        )
