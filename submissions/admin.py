"""The moderators' review queues (pt-BR, phone-sized): each decision calls a review service.

Rows are never edited by hand: the change forms stay read-only and decisions go through
actions or a row's review page, which need the queue's "change" permission (the moderators
group has it). Every decision is written to Django's admin log (who, when, what). E-mails and
contacts are shown only on a row's own page, never in lists.
"""

import datetime as dt
import re
from decimal import Decimal

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Q, Window
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from beers import labels
from beers.admin import DealPriceColumns, brl
from beers.models import PRICE_MAX_CENTS, City, Deal, DealStatus
from beers.selectors.published import median_per_litre_by_format

from . import menu_photos, review
from .models import (
    BarOwnerMessage,
    CityRequest,
    DealConfirmation,
    DealDispute,
    DisputedDeal,
    MenuDraft,
    MenuPhotoUpload,
    PriceSubmission,
    Report,
    ReviewState,
)
from .services import price_cents

OUTLIER_FACTOR = 3
REJECT_REASONS = (
    _("preço improvável ou errado"),
    _("bar não encontrado"),
    _("cerveja ou formato não identificado"),
    _("repetido"),
    _("spam ou brincadeira"),
)


def web_link(link: str | None) -> str | None:
    """A sender's `link` as an address to open: only http(s). Any URI is accepted (interface.md),
    but another scheme (`javascript:`, `data:`) would run in the moderators' admin."""
    if link and link.split(":", 1)[0].lower() in ("http", "https"):
        return link
    return None


class ReadOnlyAdmin(admin.ModelAdmin):
    """No adding or editing by hand; decisions need the "change" permission ("review")."""

    list_per_page = 50

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_review_permission(self, request, obj=None) -> bool:
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")

    def _decide(self, request, obj, call, done: str) -> bool:
        """Run one review service; log the decision or tell the moderator why not."""
        try:
            call()
        except review.ReviewError as exc:
            self.message_user(request, f"#{obj.pk}: {exc}", messages.ERROR)
            return False
        self.log_change(request, obj, done)
        return True

    def _each(self, request, queryset, service, done: str, **kwargs) -> None:
        count = sum(
            self._decide(request, obj, lambda obj=obj: service(obj, **kwargs), done)
            for obj in queryset
        )
        if count:
            self.message_user(
                request,
                ngettext("%(n)d item: %(what)s.", "%(n)d itens: %(what)s.", count)
                % {"n": count, "what": done},
                messages.SUCCESS,
            )


# --- prices sent by visitors ------------------------------------------------------------------


class KindFilter(admin.SimpleListFilter):
    title = _("tipo de preço")
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        from beers.models import DealKind

        return DealKind.choices

    def queryset(self, request, queryset):
        if self.value() == "regular":
            return queryset.filter(Q(payload__kind="regular") | ~Q(payload__has_key="kind"))
        if self.value():
            return queryset.filter(payload__kind=self.value())
        return queryset


class OwnerFilter(admin.SimpleListFilter):
    title = _("enviado pelo dono do bar")
    parameter_name = "owner"

    def lookups(self, request, model_admin):
        return (("yes", _("sim")), ("no", _("não")))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(payload__is_owner=True)
        if self.value() == "no":
            return queryset.exclude(payload__is_owner=True)
        return queryset


class NewBarFilter(admin.SimpleListFilter):
    title = _("bar novo")
    parameter_name = "new_bar"

    def lookups(self, request, model_admin):
        return (("yes", _("bar novo")), ("no", _("bar já listado")))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(payload__venue__has_key="new")
        if self.value() == "no":
            return queryset.filter(payload__venue__has_key="id")
        return queryset


class AgeFilter(admin.SimpleListFilter):
    title = _("idade")
    parameter_name = "age"
    AGES = {"1": dt.timedelta(days=1), "7": dt.timedelta(days=7), "30": dt.timedelta(days=30)}

    def lookups(self, request, model_admin):
        return (
            ("1", _("últimas 24 h")),
            ("7", _("últimos 7 dias")),
            ("30", _("últimos 30 dias")),
            ("old", _("mais de 30 dias")),
        )

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() in self.AGES:
            return queryset.filter(created_at__gte=now - self.AGES[self.value()])
        if self.value() == "old":
            return queryset.filter(created_at__lt=now - self.AGES["30"])
        return queryset


def submission_per_litre(sub: PriceSubmission) -> float | None:
    """Cents per litre of the sent price (None for open bars), as the generated column does."""
    payload = sub.payload
    if payload.get("kind") == "open_bar":
        return None
    return price_cents(payload["price"]) * 1000 / (payload.get("units", 1) * sub.format.volume_ml)


def median_comparison(per_litre: float | None, median: float | None) -> tuple[str, bool]:
    """'0,45 × mediana (R$ 20,00/L)' and whether it looks like a typo (< 1/3 or > 3 ×)."""
    if per_litre is None or not median:
        return "—", False
    ratio = per_litre / median
    text = _("%(ratio)s × a mediana (%(median)s/L)") % {
        "ratio": f"{ratio:.2f}".replace(".", ","),
        "median": brl(median),
    }
    return text, ratio < 1 / OUTLIER_FACTOR or ratio > OUTLIER_FACTOR


@admin.register(PriceSubmission)
class PriceSubmissionAdmin(ReadOnlyAdmin):
    list_display = [
        "review_link",
        "created_at",
        "city",
        "bar",
        "beer",
        "serving",
        "price",
        "per_litre",
        "vs_median",
        "state",
    ]
    list_display_links = None
    list_filter = ["state", "city", KindFilter, OwnerFilter, NewBarFilter, AgeFilter]
    list_select_related = ["city", "venue", "format"]
    ordering = ["-created_at", "-id"]
    exclude = ["email_index", "body_fingerprint", "address_hash"]
    actions = ["approve"]

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        rows = list(changelist.result_list)
        medians = median_per_litre_by_format(pairs={(s.city_id, s.format_id) for s in rows})
        for sub in rows:
            sub.median_per_litre = medians.get((sub.city_id, sub.format_id))
        return changelist

    @admin.display(description=_("revisar"), ordering="id")
    def review_link(self, obj: PriceSubmission):
        url = reverse("admin:submissions_pricesubmission_review", args=[obj.pk])
        return format_html('<a href="{}">#{}</a>', url, obj.pk)

    @admin.display(description=_("bar"))
    def bar(self, obj: PriceSubmission) -> str:
        new = review.submission_new_venue(obj)
        if new is not None and obj.venue_id is None:
            return format_html("{} <strong>({})</strong>", new["name"], _("novo"))
        return str(obj.venue or "—")

    @admin.display(description=_("cerveja"))
    def beer(self, obj: PriceSubmission) -> str:
        return obj.payload.get("beer") or "—"

    @admin.display(description=_("porção"))
    def serving(self, obj: PriceSubmission) -> str:
        payload = obj.payload
        label = labels.serving_label(
            fmt=obj.format,
            units=payload.get("units", 1),
            packaging=payload.get("packaging", "single"),
            lang="pt-BR",
        )
        kind = payload.get("kind", "regular")
        return label if kind == "regular" else f"{label} · {kind}"

    @admin.display(description=_("preço"))
    def price(self, obj: PriceSubmission) -> str:
        return brl(price_cents(obj.payload["price"]))

    @admin.display(description=_("preço por litro"))
    def per_litre(self, obj: PriceSubmission) -> str:
        value = submission_per_litre(obj)
        return f"{brl(value)}/L" if value is not None else "—"

    @admin.display(description=_("comparado à mediana"))
    def vs_median(self, obj: PriceSubmission):
        median = getattr(obj, "median_per_litre", None)
        text, outlier = median_comparison(submission_per_litre(obj), median)
        if outlier:
            return format_html('<strong style="color:#b00">⚠ {}</strong>', text)
        return text

    @admin.action(description=_("Aprovar os envios selecionados"), permissions=["review"])
    def approve(self, request, queryset):
        """Bulk approval of the plain cases; a new bar that looks like a listed one, a price far
        from the median, or a price its bar already lists (one approved in this same action
        included: a merge may be meant) is left for its review page."""
        for sub in queryset.exclude(state=ReviewState.PENDING):
            self.message_user(request, f"#{sub.pk}: {review.decided_message(sub)}", messages.ERROR)
        pending = queryset.filter(state=ReviewState.PENDING).select_related("format")
        medians = median_per_litre_by_format(pairs={(s.city_id, s.format_id) for s in pending})
        approvable = []
        for sub in pending:
            _text, outlier = median_comparison(
                submission_per_litre(sub), medians.get((sub.city_id, sub.format_id))
            )
            if outlier:
                self.message_user(
                    request,
                    _("#%(id)d: preço muito longe da mediana; revise na página do envio.")
                    % {"id": sub.pk},
                    messages.WARNING,
                )
            else:
                approvable.append(sub)

        def approve_one(sub: PriceSubmission) -> None:
            deal = review.submission_approve(submission_id=sub.pk, unless_listed=True)
            self._warn_if_never_ranked(request, deal)

        self._each(request, approvable, approve_one, str(_("aprovado")))

    def _warn_if_never_ranked(self, request, deal: Deal) -> None:
        """A price approved into the open data that no ranking will show: its sender is not
        told, so its moderator is."""
        if not City.objects.filter(pk=deal.city_id, active=True).exists():
            self.message_user(
                request,
                _(
                    "A cidade do preço #%(id)d não está ativa: ele só aparece quando ela for "
                    "ativada, e quem enviou só é avisado então."
                )
                % {"id": deal.pk},
                messages.WARNING,
            )
        elif review.deal_live_from(deal) is None:
            self.message_user(
                request,
                _(
                    "O preço #%(id)d está nos dados abertos, mas não entra no ranking "
                    "(visto há mais de 180 dias, fora da validade ou num lugar que não é "
                    "bar); quem enviou não será avisado."
                )
                % {"id": deal.pk},
                messages.WARNING,
            )

    def get_urls(self):
        return [
            path(
                "<int:pk>/review/",
                self.admin_site.admin_view(self.review_view),
                name="submissions_pricesubmission_review",
            ),
            *super().get_urls(),
        ]

    def _next_pending(self, after: PriceSubmission) -> str:
        nxt = (
            PriceSubmission.objects.filter(state=ReviewState.PENDING)
            .exclude(pk=after.pk)
            .order_by("-created_at", "-id")
            .first()
        )
        if nxt is None:
            return reverse("admin:submissions_pricesubmission_changelist")
        return reverse("admin:submissions_pricesubmission_review", args=[nxt.pk])

    def review_view(self, request, pk: int):
        """One submission, what it would become, and the three decisions."""
        if not self.has_review_permission(request):
            raise PermissionDenied
        sub = get_object_or_404(
            PriceSubmission.objects.select_related("city", "venue", "format"), pk=pk
        )
        if request.method == "POST" and sub.state == ReviewState.PENDING:
            done = self._review_post(request, sub)
            if done:
                return HttpResponseRedirect(self._next_pending(sub))
            return HttpResponseRedirect(request.path)
        if (
            request.method == "POST"
        ):  # decided since the page was shown (another tab, another moderator)
            self.message_user(request, review.decided_message(sub), messages.ERROR)
            return HttpResponseRedirect(request.path)
        medians = median_per_litre_by_format(pairs={(sub.city_id, sub.format_id)})
        per_litre = submission_per_litre(sub)
        comparison, outlier = median_comparison(
            per_litre, medians.get((sub.city_id, sub.format_id))
        )
        pending = sub.state == ReviewState.PENDING
        candidates = review.submission_merge_candidates(sub) if pending else []
        for deal in candidates:
            deal.price_text = brl(deal.price_cents)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Revisar envio #%(id)d") % {"id": sub.pk},
            "sub": sub,
            "pending": pending,
            "new_venue": review.submission_new_venue(sub),
            "twins": review.submission_twins(sub) if pending else [],
            "candidates": candidates,
            "bar": self.bar(sub),
            "beer": self.beer(sub),
            "serving": self.serving(sub),
            "price": self.price(sub),
            "per_litre": self.per_litre(sub),
            "comparison": comparison,
            "outlier": outlier,
            "reasons": REJECT_REASONS,
            "schedules": labels.schedule_text(sub.payload.get("schedules") or [], "pt-BR"),
            "link_href": web_link(sub.payload.get("link")),
        }
        return TemplateResponse(request, "admin/submissions/review_submission.html", context)

    def _review_post(self, request, sub: PriceSubmission) -> bool:
        decision = request.POST.get("decision")
        if decision == "approve":
            choice = request.POST.get("venue", "")
            medians = median_per_litre_by_format(pairs={(sub.city_id, sub.format_id)})
            _text, outlier = median_comparison(
                submission_per_litre(sub), medians.get((sub.city_id, sub.format_id))
            )
            if outlier and not request.POST.get("confirm_outlier"):
                self.message_user(
                    request,
                    _("O preço está muito longe da mediana: marque que conferiu antes de aprovar."),
                    messages.ERROR,
                )
                return False
            seen = request.POST.get("twins_seen", "").split(",")
            kwargs = {
                "create_venue": choice == "new",
                "twins_seen": {int(pk) for pk in seen if pk.isdigit()},
            }
            if choice.isdigit():
                kwargs["venue_id"] = int(choice)
            try:
                deal = review.submission_approve(submission_id=sub.pk, **kwargs)
            except review.TwinsFound as exc:
                self.message_user(request, str(exc), messages.WARNING)
                return False
            except review.ReviewError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                return False
            self.log_change(request, sub, f"aprovado: preço #{deal.pk} em {deal.venue.name}")
            self.message_user(request, _("Envio #%(id)d aprovado.") % {"id": sub.pk})
            self._warn_if_never_ranked(request, deal)
            return True
        if decision == "reject":
            # the typed reason, else the chosen one (a box left with spaces is left empty)
            reason = (
                request.POST.get("reason_text", "").strip()
                or request.POST.get("reason", "").strip()
            )
            call = lambda: review.submission_reject(submission_id=sub.pk, reason=reason)  # noqa: E731
            done = f"recusado: {reason}"
        elif decision == "merge":
            deal_id = request.POST.get("deal", "")
            if not deal_id.isdigit():
                self.message_user(request, _("Escolha o preço a atualizar."), messages.ERROR)
                return False
            call = lambda: review.submission_merge(submission_id=sub.pk, deal_id=int(deal_id))  # noqa: E731
            done = f"mesclado no preço #{deal_id}"
        else:
            self.message_user(request, _("Escolha uma decisão."), messages.ERROR)
            return False
        if self._decide(request, sub, call, done):
            self.message_user(request, _("Envio #%(id)d: %(done)s.") % {"id": sub.pk, "done": done})
            return True
        return False


# --- city requests ----------------------------------------------------------------------------


@admin.register(CityRequest)
class CityRequestAdmin(ReadOnlyAdmin):
    list_display = ["city", "state_name", "asks", "state", "created_at", "activate_link"]
    list_display_links = ["city"]
    list_filter = ["state"]
    search_fields = ["city", "city_key"]
    exclude = ["email_index", "body_fingerprint", "address_hash"]
    actions = ["reject_as_unwanted"]

    def get_queryset(self, request):
        # Requests for the same city, however written, sit together with their count.
        return (
            self.model._default_manager.get_queryset()
            .annotate(asks=Window(Count("id"), partition_by=[F("city_key")]))
            .order_by(*self.get_ordering(request))
        )

    def get_ordering(self, request):
        return ["-asks", "city_key", "-created_at"]

    @admin.display(description=_("pedidos (mesma cidade)"))
    def asks(self, obj: CityRequest) -> int:
        return obj.asks

    @admin.display(description=_("ativar"))
    def activate_link(self, obj: CityRequest):
        if obj.state != ReviewState.PENDING:
            return "—"
        url = reverse("admin:submissions_cityrequest_activate", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, _("ativar cidade…"))

    @admin.action(description=_("Recusar (cidade fora dos planos)"), permissions=["review"])
    def reject_as_unwanted(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda req: review.city_request_reject(
                request_id=req.pk, reason="cidade fora dos planos"
            ),
            str(_("recusado")),
        )

    def get_urls(self):
        return [
            path(
                "<int:pk>/activate/",
                self.admin_site.admin_view(self.activate_view),
                name="submissions_cityrequest_activate",
            ),
            *super().get_urls(),
        ]

    def activate_view(self, request, pk: int):
        """Choose the city (created beforehand with its zone, centre and bairros), see the
        checklist, activate: everyone who asked is told."""
        if not self.has_review_permission(request):
            raise PermissionDenied
        ask = get_object_or_404(CityRequest, pk=pk)
        if request.method == "POST":
            city_id = request.POST.get("city", "")
            if city_id.isdigit():
                try:
                    count = review.city_activate(city_id=int(city_id), request_id=ask.pk)
                except review.ReviewError as exc:
                    self.message_user(request, str(exc), messages.ERROR)
                    return HttpResponseRedirect(f"{request.path}?city={city_id}")
                self.log_change(request, ask, f"cidade ativada: {city_id} ({count} pedidos)")
                self.message_user(
                    request,
                    ngettext(
                        "Cidade ativada; %(n)d pedido respondido.",
                        "Cidade ativada; %(n)d pedidos respondidos.",
                        count,
                    )
                    % {"n": count},
                )
                return HttpResponseRedirect(reverse("admin:submissions_cityrequest_changelist"))
            self.message_user(request, _("Escolha a cidade."), messages.ERROR)
        from beers.text import name_key

        cities = list(City.objects.order_by("active", "name"))
        chosen = None
        wanted = request.GET.get("city", "")
        for city in cities:
            if (wanted.isdigit() and city.pk == int(wanted)) or (
                not wanted and name_key(city.name) == ask.city_key
            ):
                chosen = city
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Ativar cidade: %(city)s") % {"city": ask.city},
            "ask": ask,
            "asks": CityRequest.objects.filter(
                city_key=ask.city_key, state=ReviewState.PENDING
            ).count(),
            "cities": cities,
            "chosen": chosen,
            "checklist": review.city_activation_checklist(chosen) if chosen else [],
            "ready": chosen is not None
            and all(ok for _l, ok in review.city_activation_checklist(chosen)),
        }
        return TemplateResponse(request, "admin/submissions/activate_city.html", context)


# --- bar owners, reports, disputes ------------------------------------------------------------


@admin.register(BarOwnerMessage)
class BarOwnerMessageAdmin(ReadOnlyAdmin):
    list_display = ["id", "city", "bar", "venue", "topic", "message_start", "state", "created_at"]
    list_filter = ["state", "topic", "city"]
    list_select_related = ["city", "venue"]
    exclude = ["contact_index", "body_fingerprint", "address_hash"]
    actions = ["resolve", "close_venue"]

    @admin.display(description=_("mensagem"))
    def message_start(self, obj: BarOwnerMessage) -> str:
        return obj.message[:80]

    @admin.action(description=_("Marcar como resolvida"), permissions=["review"])
    def resolve(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda m: review.bar_owner_message_resolve(message_id=m.pk),
            str(_("resolvido")),
        )

    @admin.action(
        description=_("O bar fechou: tirar seus preços do ranking"), permissions=["review"]
    )
    def close_venue(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda m: review.bar_owner_message_close_venue(message_id=m.pk),
            str(_("bar marcado como fechado")),
        )


@admin.register(Report)
class ReportAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "reason",
        "deal",
        "venue",
        "message_start",
        "state",
        "created_at",
        "correct_link",
    ]
    list_filter = ["state", "reason"]
    list_select_related = ["deal__venue", "deal__format", "venue"]
    exclude = ["body_fingerprint", "address_hash"]
    actions = ["resolve", "dismiss", "close_venue", "hide_deal"]

    @admin.display(description=_("mensagem"))
    def message_start(self, obj: Report) -> str:
        return obj.message[:80]

    @admin.display(description=_("corrigir"))
    def correct_link(self, obj: Report):
        if obj.deal_id is None or obj.state != ReviewState.PENDING:
            return "—"
        url = reverse("admin:submissions_disputeddeal_correct", args=[obj.deal_id])
        return format_html('<a href="{}?report={}">{}</a>', url, obj.pk, _("corrigir preço…"))

    @admin.action(description=_("Resolvido (nada a mudar ou já corrigido)"), permissions=["review"])
    def resolve(self, request, queryset):
        self._each(
            request, queryset, lambda r: review.report_resolve(report_id=r.pk), str(_("resolvido"))
        )

    @admin.action(description=_("Descartar (relato sem fundamento)"), permissions=["review"])
    def dismiss(self, request, queryset):
        self._each(
            request, queryset, lambda r: review.report_dismiss(report_id=r.pk), str(_("descartado"))
        )

    @admin.action(
        description=_("O bar fechou: tirar seus preços do ranking"), permissions=["review"]
    )
    def close_venue(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda r: review.report_close_venue(report_id=r.pk),
            str(_("bar marcado como fechado")),
        )

    @admin.action(description=_("Retirar o preço relatado"), permissions=["review"])
    def hide_deal(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda r: review.report_hide_deal(report_id=r.pk),
            str(_("preço retirado")),
        )


class DisputeInline(admin.TabularInline):
    model = DealDispute
    fk_name = "deal"
    fields = ("day", "suggested", "state", "created_at")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False

    @admin.display(description=_("preço sugerido"))
    def suggested(self, obj: DealDispute) -> str:
        return brl(obj.price_cents) if obj.price_cents else "—"


def _suggested_cents(deal_ids: list[int]) -> dict[int, list[int]]:
    """The prices that pending disputes suggest, per price, oldest first (one query)."""
    out: dict[int, list[int]] = {}
    for deal_id, cents in (
        DealDispute.objects.filter(
            deal_id__in=deal_ids, state=ReviewState.PENDING, price_cents__isnull=False
        )
        .order_by("id")
        .values_list("deal_id", "price_cents")
    ):
        out.setdefault(deal_id, []).append(cents)
    return out


class _DisputedChangeList(ChangeList):
    """Loads the suggested prices of the whole page at once (not one query per row)."""

    def get_results(self, request):
        super().get_results(request)
        suggested = _suggested_cents([deal.pk for deal in self.result_list])
        for deal in self.result_list:
            deal.suggested_cents = suggested.get(deal.pk, [])


@admin.register(DisputedDeal)
class DisputedDealAdmin(DealPriceColumns, ReadOnlyAdmin):
    """Prices with open disputes (disputed: still ranked; suspended: out until decided)."""

    list_display = [
        "id",
        "venue",
        "city",
        "format",
        "price",
        "per_litre",
        "suggested",
        "status",
        "open_disputes",
        "verified_at",
        "correct_link",
    ]
    list_filter = ["status", "city"]
    list_select_related = ["venue", "city", "format"]
    fields = [
        "venue",
        "city",
        "format",
        "units",
        "packaging",
        "kind",
        "price_cents",
        "status",
        "open_disputes",
        "verified_at",
    ]
    inlines = [DisputeInline]
    actions = ["dismiss", "uphold"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(review.DISPUTES_WAITING)

    def _decided_since(self, request, queryset) -> None:
        """Prices ticked on the page whose disputes were decided since (in another tab, by
        another moderator) have left the queue, and so the action's queryset: said, not
        skipped without a word."""
        ticked = {int(pk) for pk in request.POST.getlist(ACTION_CHECKBOX_NAME) if pk.isdigit()}
        for pk in sorted(ticked - {deal.pk for deal in queryset}):
            self.message_user(
                request,
                _("#%(id)d: as contestações deste preço já foram decididas.") % {"id": pk},
                messages.ERROR,
            )

    def get_changelist(self, request, **kwargs):
        return _DisputedChangeList

    @admin.display(description=_("sugerido nas contestações"))
    def suggested(self, obj: Deal) -> str:
        cents = getattr(obj, "suggested_cents", None)
        if cents is None:  # outside the list page
            cents = _suggested_cents([obj.pk]).get(obj.pk, [])
        return ", ".join(brl(p) for p in cents) or "—"

    @admin.display(description=_("corrigir"))
    def correct_link(self, obj: Deal):
        url = reverse("admin:submissions_disputeddeal_correct", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, _("corrigir preço…"))

    @admin.action(
        description=_("Descartar as contestações: o preço volta ao ranking"), permissions=["review"]
    )
    def dismiss(self, request, queryset):
        self._decided_since(request, queryset)
        self._each(
            request,
            queryset,
            lambda d: review.deal_disputes_dismiss(deal_id=d.pk),
            str(_("contestações descartadas")),
        )

    @admin.action(
        description=_("Aceitar as contestações: esconder o preço"), permissions=["review"]
    )
    def uphold(self, request, queryset):
        self._decided_since(request, queryset)
        self._each(
            request,
            queryset,
            lambda d: review.deal_disputes_uphold(deal_id=d.pk),
            str(_("contestações aceitas, preço retirado")),
        )

    def get_urls(self):
        return [
            path(
                "<int:pk>/correct/",
                self.admin_site.admin_view(self.correct_view),
                name="submissions_disputeddeal_correct",
            ),
            *super().get_urls(),
        ]

    def correct_view(self, request, pk: int):
        """Set a price's right amount (from a dispute or a report): a moderator check."""
        if not self.has_review_permission(request):
            raise PermissionDenied
        deal = get_object_or_404(
            Deal.objects.select_related("venue", "format", "city").exclude(
                status=DealStatus.RETIRED
            ),
            pk=pk,
        )
        report_id = request.GET.get("report") or request.POST.get("report") or ""
        if request.method == "POST":
            cents = _amount_cents(request.POST.get("price") or "")
            if cents is None:
                self.message_user(
                    request,
                    _("Preço inválido: em reais, até dois decimais (12,90)."),
                    messages.ERROR,
                )
                return HttpResponseRedirect(request.get_full_path())
            try:
                review.deal_correct(
                    deal_id=deal.pk,
                    price_cents=cents,
                    report_id=int(report_id) if report_id.isdigit() else None,
                )
            except review.ReviewError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                return HttpResponseRedirect(request.get_full_path())
            self.log_change(request, deal, f"preço corrigido para {brl(cents)}")
            self.message_user(request, _("Preço corrigido: %(p)s.") % {"p": brl(cents)})
            return HttpResponseRedirect(reverse("admin:submissions_disputeddeal_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Corrigir preço #%(id)d") % {"id": deal.pk},
            "deal": deal,
            "price": brl(deal.price_cents),
            "report_id": report_id,
            "suggested": self.suggested(deal),
        }
        return TemplateResponse(request, "admin/submissions/correct_deal.html", context)


AMOUNT_RE = re.compile(r"[0-9]+(\.[0-9]{1,2})?")


def _amount_cents(raw: str) -> int | None:
    """A moderator's amount in reais ("9,90", "9.90", "R$ 1.500,00") in cents, or None unless
    it is a number above zero in reais and cents ("-1" became R$ 0,01 and "inf" a 500; "9,999"
    became R$ 10,00 and "1.500", R$ 1.500 to a Brazilian, R$ 1,50). One above R$ 10.000 stays
    above it, for deal_correct to refuse with the bounds."""
    text = raw.strip().removeprefix("R$").strip()
    if "," in text:  # the Brazilian way: dots group thousands, the comma starts the cents
        text = text.replace(".", "").replace(",", ".")
    if not AMOUNT_RE.fullmatch(text):  # digits and cents only: "1e3" was R$ 1.000,00
        return None
    value = Decimal(text)
    if value <= 0:
        return None
    return price_cents(value) if value * 100 <= PRICE_MAX_CENTS else PRICE_MAX_CENTS + 1


@admin.register(MenuPhotoUpload)
class MenuPhotoUploadAdmin(ReadOnlyAdmin):
    list_display = ["id", "city", "venue", "state", "is_owner", "trusted", "created_at"]
    list_filter = ["state", "trusted", "city"]
    exclude = ["contact_index", "body_fingerprint", "address_hash"]


@admin.register(MenuDraft)
class MenuDraftAdmin(ReadOnlyAdmin):
    """Menu lines read from photos that the automated reviewer left for a person."""

    list_display = [
        "id",
        "venue",
        "text",
        "beer",
        "brand",
        "format",
        "price",
        "notes",
        "decision_note",
        "state",
        "created_at",
    ]
    list_filter = ["state"]
    list_select_related = ["venue", "beer", "brand", "format"]
    actions = ["approve", "reject"]

    @admin.display(description=_("preço"), ordering="price_cents")
    def price(self, obj: MenuDraft) -> str:
        return brl(obj.price_cents)

    @admin.action(description=_("Aprovar como lido"), permissions=["review"])
    def approve(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda d: menu_photos.menu_draft_approve(draft_id=d.pk),
            str(_("aprovado")),
        )

    @admin.action(description=_("Recusar"), permissions=["review"])
    def reject(self, request, queryset):
        self._each(
            request,
            queryset,
            lambda d: menu_photos.menu_draft_reject(draft_id=d.pk),
            str(_("recusado")),
        )


@admin.register(DealConfirmation)
class DealConfirmationAdmin(ReadOnlyAdmin):
    list_display = ["id", "deal", "day", "counted", "created_at"]
    exclude = ["address_hash"]


@admin.register(DealDispute)
class DealDisputeAdmin(ReadOnlyAdmin):
    list_display = ["id", "deal", "day", "price_cents", "state", "created_at"]
    list_filter = ["state"]
    exclude = ["address_hash"]
