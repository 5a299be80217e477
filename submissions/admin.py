"""Moderators read the queued writes here (moderation actions are a later issue).

Read-only: rows change through services, never by editing fields. E-mails and contacts are
shown only on a row's own page, never in lists.
"""

from django.contrib import admin

from .models import (
    BarOwnerMessage,
    CityRequest,
    DealConfirmation,
    DealDispute,
    MenuPhotoUpload,
    PriceSubmission,
    Report,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    list_per_page = 50

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


@admin.register(PriceSubmission)
class PriceSubmissionAdmin(ReadOnlyAdmin):
    list_display = ["id", "city", "venue", "format", "state", "created_at"]
    list_filter = ["state", "city"]
    exclude = ["email_index", "body_fingerprint", "address_hash"]


@admin.register(CityRequest)
class CityRequestAdmin(ReadOnlyAdmin):
    list_display = ["id", "city", "state_name", "state", "created_at"]
    list_filter = ["state"]
    exclude = ["email_index", "body_fingerprint", "address_hash"]


@admin.register(BarOwnerMessage)
class BarOwnerMessageAdmin(ReadOnlyAdmin):
    list_display = ["id", "city", "bar", "topic", "state", "created_at"]
    list_filter = ["state", "topic", "city"]
    exclude = ["contact_index", "body_fingerprint", "address_hash"]


@admin.register(MenuPhotoUpload)
class MenuPhotoUploadAdmin(ReadOnlyAdmin):
    list_display = ["id", "city", "venue", "state", "is_owner", "created_at"]
    list_filter = ["state", "city"]
    exclude = ["contact_index", "body_fingerprint", "address_hash"]


@admin.register(DealConfirmation)
class DealConfirmationAdmin(ReadOnlyAdmin):
    list_display = ["id", "deal", "day", "counted", "created_at"]
    exclude = ["address_hash"]


@admin.register(DealDispute)
class DealDisputeAdmin(ReadOnlyAdmin):
    list_display = ["id", "deal", "day", "price_cents", "state", "created_at"]
    list_filter = ["state"]
    exclude = ["address_hash"]


@admin.register(Report)
class ReportAdmin(ReadOnlyAdmin):
    list_display = ["id", "reason", "deal", "venue", "state", "created_at"]
    list_filter = ["state", "reason"]
    exclude = ["body_fingerprint", "address_hash"]
