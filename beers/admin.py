"""Admin for moderators (pt-BR): cities, bairros, bars, the catalogue, prices and their checks.

Money shows in reais; the price per litre is read from the generated column, never recomputed
here. A price whose amount a moderator corrects gets a moderator check through the service,
like every other check. Slugs, format codes and a price's bar and format are part of public
links or of the price itself, so they are fixed once the row exists.
"""

from decimal import ROUND_HALF_UP, Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.utils.formats import number_format
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from datasets.services import datasets_schedule_export

from . import labels
from .models import (
    PRICE_MAX_CENTS,
    VENUE_ATTRIBUTES,
    Beer,
    Brand,
    CheckSource,
    City,
    Deal,
    DealStatus,
    Format,
    Neighbourhood,
    PriceCheck,
    Venue,
)
from .services import deal_record_check, neighbourhood_for_point

admin.site.site_header = _("Breja · moderação")
admin.site.site_title = _("Breja")
admin.site.index_title = _("Preços, bares e cidades")

CENT = Decimal("0.01")


def brl(cents: float | int | None) -> str:
    """Cents as reais the way people read them: 'R$ 1.234,50' (in pt-BR)."""
    if cents is None:
        return ""
    reais = (Decimal(repr(cents)) / 100).quantize(CENT, rounding=ROUND_HALF_UP)
    return f"R$ {number_format(reais, decimal_pos=2, force_grouping=True)}"


class RefreshesDatasetsMixin:
    """An edit here changes what the open datasets say (a renamed bar, a new boundary, a
    catalogue label) in ways the export's change fingerprint cannot see: ask for an export
    once the edit commits, as a moderation decision does."""

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        datasets_schedule_export()

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        datasets_schedule_export()

    def save_related(self, request, form, formsets, change):
        # After save_model, once per saved form: the row and its inlines (a bar's prices).
        super().save_related(request, form, formsets, change)
        datasets_schedule_export()


class SlugFixedOnChangeMixin:
    """Fields that other rows or public links rely on can be set once, then only read."""

    fixed_on_change: tuple[str, ...] = ("slug",)

    def get_readonly_fields(self, request, obj=None):
        fields = tuple(super().get_readonly_fields(request, obj))
        return fields + self.fixed_on_change if obj is not None else fields

    def get_prepopulated_fields(self, request, obj=None):
        return {} if obj is not None else super().get_prepopulated_fields(request, obj)


@admin.register(City)
class CityAdmin(RefreshesDatasetsMixin, SlugFixedOnChangeMixin, admin.ModelAdmin):
    list_display = ("name", "state", "slug", "timezone", "active")
    list_filter = ("active", "state", "timezone")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}

    def get_readonly_fields(self, request, obj=None):
        # A city goes live through its activation (checklist, and everyone who asked for it
        # is told), not by ticking a box; only an administrator may switch it by hand.
        fields = tuple(super().get_readonly_fields(request, obj))
        return fields if request.user.is_superuser else (*fields, "active")


@admin.register(Neighbourhood)
class NeighbourhoodAdmin(RefreshesDatasetsMixin, SlugFixedOnChangeMixin, admin.ModelAdmin):
    # A bairro's bars stay in their city: moved, it left them behind (São Paulo's answers and
    # files still named it, Recife's map held a polygon in São Paulo). Its slug filters.
    fixed_on_change = ("slug", "city")
    list_display = ("name", "city", "slug", "has_boundary")
    list_filter = ("city",)
    list_select_related = ("city",)
    search_fields = ("name", "slug", "city__name")
    autocomplete_fields = ("city",)
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(boolean=True, description=_("tem limite"))
    def has_boundary(self, obj: Neighbourhood) -> bool:
        return bool(obj.boundary)


class DealPriceColumns:
    """The price and price-per-litre columns every list of prices shows (read-only)."""

    @admin.display(description=_("preço"), ordering="price_cents")
    def price(self, obj: Deal) -> str:
        return brl(obj.price_cents)

    @admin.display(description=_("preço por litro"), ordering="price_per_litre")
    def per_litre(self, obj: Deal) -> str:
        return f"{brl(obj.price_per_litre)}/L" if obj.price_per_litre is not None else "—"


class DealInline(DealPriceColumns, admin.TabularInline):
    """A bar's prices at a glance; each opens on its own page."""

    model = Deal
    fk_name = "venue"
    fields = (
        "format",
        "beer",
        "units",
        "packaging",
        "kind",
        "price",
        "per_litre",
        "status",
        "verified_at",
    )
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True
    ordering = ("price_per_litre", "id")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("format", "beer")


class VenueForm(forms.ModelForm):
    # Ticked, not typed as JSON ("null" in the JSON box was a 500).
    attributes = forms.MultipleChoiceField(
        label=_("atributos"),
        choices=[(code, labels.ATTRIBUTE_LABELS[code]) for code in VENUE_ATTRIBUTES],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )


@admin.register(Venue)
class VenueAdmin(RefreshesDatasetsMixin, SlugFixedOnChangeMixin, admin.ModelAdmin):
    form = VenueForm
    list_display = ("name", "city", "neighbourhood", "kind", "status", "on_site", "instagram")
    list_filter = ("status", "kind", "on_site", "city")
    list_select_related = ("city", "neighbourhood")
    search_fields = ("name", "slug", "address", "instagram", "neighbourhood__name")
    autocomplete_fields = ("city", "neighbourhood")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("created_at",)
    fieldsets = (
        (None, {"fields": ("city", "name", "slug", "kind", "on_site", "status")}),
        (_("onde"), {"fields": ("address", "lat", "lng", "neighbourhood")}),
        (_("detalhes"), {"fields": ("instagram", "opening_hours", "attributes", "created_at")}),
    )
    inlines = (DealInline,)
    # A bar's prices carry its city (Deal.city): a bar moved to another city would leave them
    # behind, listed under a city the bar is no longer in.
    fixed_on_change = ("slug", "city")

    def save_model(self, request, obj: Venue, form, change):
        if obj.neighbourhood_id is None:
            # Left blank: the bairro whose boundary holds the point, as for any new bar.
            obj.neighbourhood = neighbourhood_for_point(city=obj.city, lat=obj.lat, lng=obj.lng)
        super().save_model(request, obj, form, change)


@admin.register(Brand)
class BrandAdmin(RefreshesDatasetsMixin, SlugFixedOnChangeMixin, admin.ModelAdmin):
    list_display = ("name", "slug")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Beer)
class BeerAdmin(RefreshesDatasetsMixin, SlugFixedOnChangeMixin, admin.ModelAdmin):
    list_display = ("name", "brand", "slug")
    list_filter = ("brand",)
    list_select_related = ("brand",)
    search_fields = ("name", "slug", "brand__name")
    autocomplete_fields = ("brand",)
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Format)
class FormatAdmin(RefreshesDatasetsMixin, SlugFixedOnChangeMixin, admin.ModelAdmin):
    # Prices copy the volume of their format: code, type and volume never change.
    fixed_on_change = ("code", "type", "volume_ml")
    list_display = ("code", "label_pt", "label_en", "type", "volume_ml")
    list_filter = ("type",)
    search_fields = ("code", "label_pt", "label_en")
    ordering = ("type", "volume_ml")


class PriceCheckInline(admin.TabularInline):
    model = PriceCheck
    fields = ("checked_at", "price", "source")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False

    @admin.display(description=_("preço"), ordering="price_cents")
    def price(self, obj: PriceCheck) -> str:
        return brl(obj.price_cents)


class DealForm(forms.ModelForm):
    def clean_price_cents(self):
        cents = self.cleaned_data["price_cents"]
        if not 0 < cents <= PRICE_MAX_CENTS:
            raise forms.ValidationError(_("Entre R$ 0,01 e R$ 10.000,00."))
        return cents


@admin.register(Deal)
class DealAdmin(RefreshesDatasetsMixin, DealPriceColumns, admin.ModelAdmin):
    form = DealForm
    list_display = (
        "id",
        "venue",
        "city",
        "beer_or_brand",
        "format",
        "units",
        "packaging",
        "kind",
        "price",
        "per_litre",
        "status",
        "verified_at",
        "confirmations",
        "open_disputes",
    )
    list_display_links = ("id", "venue")
    list_filter = ("status", "kind", "packaging", "format__type", "city", "verified_at")
    list_select_related = ("venue", "city", "beer", "brand", "format")
    search_fields = (
        "=id",
        "venue__name",
        "venue__slug",
        "beer__name",
        "brand__name",
        "format__code",
    )
    autocomplete_fields = ("beer", "brand")
    date_hierarchy = "verified_at"
    ordering = ("-verified_at", "-id")
    readonly_fields = (
        "venue",
        "city",
        # the standing moves only through the disputes queue and reports (submissions.review)
        "status",
        "format",
        "volume_ml",
        "per_litre",
        "verified_at",
        "created_at",
        "confirmations",
        "open_disputes",
    )
    fieldsets = (
        (None, {"fields": ("venue", "city", "status")}),
        (_("o que"), {"fields": ("beer", "brand", "format", "volume_ml", "units", "packaging")}),
        (
            _("preço"),
            {
                "fields": (
                    "kind",
                    "price_cents",
                    "per_litre",
                    "open_bar_minutes",
                    "service_charge_pct",
                    "couvert_cents",
                    "conditions",
                )
            },
        ),
        (_("quando"), {"fields": ("valid_from", "valid_until", "schedules")}),
        (
            _("checagens"),
            {"fields": ("verified_at", "created_at", "confirmations", "open_disputes")},
        ),
    )
    inlines = (PriceCheckInline,)
    actions = ("record_check",)

    def has_add_permission(self, request):
        # Prices arrive through submissions and their review, which record the first check.
        return False

    @admin.display(description=_("cerveja"), ordering="beer__name")
    def beer_or_brand(self, obj: Deal) -> str:
        return str(obj.beer or obj.brand or "—")

    def save_model(self, request, obj: Deal, form, change):
        corrected = change and "price_cents" in form.changed_data
        if corrected:
            # The new amount goes through a check, which also restarts the confirmations.
            amount, obj.price_cents = obj.price_cents, form.initial["price_cents"]
        super().save_model(request, obj, form, change)
        if corrected:
            from submissions.review import deal_amount_set

            deal_amount_set(deal_id=obj.pk, price_cents=amount)

    @admin.action(description=_("Registrar checagem: preço conferido hoje"), permissions=["change"])
    def record_check(self, request, queryset):
        """A moderator checked these prices today (an old one comes back to the rankings).
        Prices whose disputes wait are left to the disputes queue, retired ones stay so."""
        checked = 0
        for deal in queryset.filter(status=DealStatus.PUBLISHED, open_disputes=0):
            deal_record_check(deal=deal, source=CheckSource.MODERATOR)
            self.log_change(request, deal, _("Checagem registrada: preço conferido hoje."))
            checked += 1
        if checked:
            datasets_schedule_export()
        skipped = queryset.count() - checked
        self.message_user(
            request,
            ngettext("%d preço checado.", "%d preços checados.", checked) % checked
            + (
                " "
                + ngettext(
                    "%d com contestações ou retirado ficou de fora.",
                    "%d com contestações ou retirados ficaram de fora.",
                    skipped,
                )
                % skipped
                if skipped
                else ""
            ),
            messages.SUCCESS,
        )


@admin.register(PriceCheck)
class PriceCheckAdmin(admin.ModelAdmin):
    """History of checks: read-only, every check comes from a service."""

    list_display = ("checked_at", "price_of", "price", "source")
    list_filter = ("source", "checked_at")
    list_select_related = ("deal__venue", "deal__format")
    search_fields = ("=deal__id", "deal__venue__name")
    date_hierarchy = "checked_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    # A check goes with its price (deleting the price or its bar, whose confirmation lists
    # it), never alone: a price's last check is its `verified_at`, and the price index reads
    # the checks (an audit deleted four and the files disagreed with each other). Deleting
    # stays *permitted* for a superuser, or deleting a price would be refused for its checks.
    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def delete_view(self, request, object_id, extra_context=None):
        raise PermissionDenied

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "show_delete": False}
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description=_("preço"), ordering="price_cents")
    def price(self, obj: PriceCheck) -> str:
        return brl(obj.price_cents)

    @admin.display(description=_("de"), ordering="deal_id")
    def price_of(self, obj: PriceCheck) -> str:
        deal = obj.deal
        return f"#{deal.pk} {deal.venue} · {deal.format.label_pt}"
