"""Request bodies of the write endpoints, exactly as interface.md gives them.

Every object refuses keys it does not declare; every value must already have its JSON type
(see ``fields``). Cross-field rules (consent with an e-mail or contact, one of venue id/new)
are reported together with the field errors, one issue per problem.
"""

import datetime as dt
import re

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from beers.models import (
    HOUR_END_RE,
    HOUR_START_RE,
    INSTAGRAM_RE,
    SCHEDULES_MAX,
    SLUG_RE,
    VENUE_ATTRIBUTES,
    City,
    DealKind,
    Packaging,
    Venue,
    VenueKind,
)

from ..models import BarOwnerTopic, ReportReason
from .fields import (
    DATE_RE,
    CountedListField,
    JpegDataUriField,
    PriceField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictDateField,
    StrictEmailField,
    StrictFloatField,
    StrictIntegerField,
    StrictRegexField,
    StrictSerializer,
    StrictUriField,
    TrueField,
    VisibleTextField,
)

SLUG_MESSAGE = "Must be a slug: lowercase letters and digits, groups joined by single hyphens."
SEEN_IN = ("menu", "poster", "instagram", "staff", "receipt", "other")
REF_RE = r"^[A-Za-z0-9_-]{16}$"


def turnstile_field() -> StrictCharField:
    return StrictCharField(
        min_length=1, max_length=2048, help_text="human-verification token (Cloudflare Turnstile)"
    )


def city_slug_field() -> StrictRegexField:
    return StrictRegexField(SLUG_RE, SLUG_MESSAGE, help_text="city slug")


def venue_slug_field(help_text: str, **kwargs) -> StrictRegexField:
    """A bar's slug: the pattern and length of `Venue.slug` (a longer or other string names no
    bar, and is not stored)."""
    max_length = Venue._meta.get_field("slug").max_length
    return StrictRegexField(
        SLUG_RE, SLUG_MESSAGE, max_length=max_length, help_text=help_text, **kwargs
    )


def _date(value) -> dt.date | None:
    if isinstance(value, str) and DATE_RE.fullmatch(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None


# A price seen before this date is a typing slip (the year 1 would open a price-index month).
EARLIEST_OBSERVED = dt.date(2000, 1, 1)


def _city_today(slug) -> dt.date | None:
    """Today in the city (a price cannot have been seen after it); None for an unknown city,
    which the service refuses (422)."""
    if not isinstance(slug, str) or not re.fullmatch(SLUG_RE, slug):
        return None  # the city field says what is wrong with it (U+0000 cannot even be sought)
    city = City.objects.filter(slug=slug).first()
    return city.local_now().date() if city is not None else None


def consent_errors(data: dict, private_key: str, errors: dict) -> None:
    """Consent must be true whenever an e-mail or contact is given (`null` gives none: its
    field says it may not be null, and consent is not asked for as well)."""
    given = data.get(private_key) is not None
    if given and "consent" not in errors and data.get("consent") is not True:
        errors["consent"] = [
            f"Must be true when {'an e-mail' if private_key == 'email' else 'a contact'} is given."
        ]


class ScheduleDraftSerializer(StrictSerializer):
    days = serializers.ListField(
        child=StrictIntegerField(min_value=0, max_value=6),
        min_length=1,
        max_length=7,
        help_text="0 = Sunday … 6 = Saturday, city time",
    )
    start = StrictRegexField(HOUR_START_RE, "Must be HH:MM, hour 00 to 23.")
    end = StrictRegexField(
        HOUR_END_RE,
        "Must be HH:MM, hour 00 to 23, or 24:00.",
        help_text="earlier than start when it ends after midnight",
    )

    class Meta:
        ref_name = "ScheduleDraft"


class NewVenueSerializer(StrictSerializer):
    name = VisibleTextField(min_length=2, max_length=120)
    lat = StrictFloatField(min_value=-90, max_value=90)
    lng = StrictFloatField(min_value=-180, max_value=180)
    kind = StrictChoiceField(choices=VenueKind.values)
    on_site = StrictBooleanField(help_text="people can drink there")
    address = StrictCharField(max_length=200, required=False)
    instagram = StrictRegexField(
        INSTAGRAM_RE,
        "Must be 1 to 30 of lowercase letters, digits, '.' and '_'.",
        min_length=1,
        max_length=30,
        required=False,
    )
    opening_hours = StrictCharField(max_length=255, required=False)

    class Meta:
        ref_name = "NewVenue"


class VenueIdSerializer(StrictSerializer):
    id = StrictIntegerField(min_value=1, help_text="a bar already listed in the city")

    class Meta:
        ref_name = "VenueId"


class VenueNewSerializer(StrictSerializer):
    new = NewVenueSerializer()

    class Meta:
        ref_name = "VenueNew"


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="VenueRef",
        serializers=[VenueIdSerializer, VenueNewSerializer],
        resource_type_field_name=None,
    )
)
class VenueRefSerializer(StrictSerializer):
    """Either ``{id}`` or ``{new}``: exactly one of the two keys."""

    id = StrictIntegerField(min_value=1, required=False)
    new = NewVenueSerializer(required=False)

    def cross_errors(self, data: dict, errors: dict) -> None:
        if ("id" in data) == ("new" in data):
            errors.setdefault("non_field_errors", []).append(
                "Give exactly one of 'id' (a listed bar) or 'new' (a bar not yet listed)."
            )


class SubmissionSerializer(StrictSerializer):
    city = city_slug_field()
    venue = VenueRefSerializer()
    beer = StrictCharField(max_length=80, allow_null=True, help_text="null means unknown beer")
    format_code = StrictCharField(max_length=40, help_text="a format from the catalog")
    price = PriceField(help_text="in reais")
    units = StrictIntegerField(min_value=1, max_value=50, required=False)
    packaging = StrictChoiceField(choices=Packaging.values, required=False)
    kind = StrictChoiceField(choices=DealKind.values, required=False)
    open_bar_minutes = StrictIntegerField(min_value=1, max_value=1440, required=False)
    schedules = ScheduleDraftSerializer(many=True, required=False, max_length=SCHEDULES_MAX)
    valid_from = StrictDateField(required=False)
    valid_until = StrictDateField(required=False, help_text="not earlier than valid_from")
    conditions = StrictCharField(max_length=280, required=False)
    service_charge_pct = StrictIntegerField(min_value=0, max_value=30, required=False)
    couvert = StrictFloatField(min_value=0, max_value=1000, required=False)
    attributes = serializers.ListField(
        child=StrictChoiceField(choices=list(VENUE_ATTRIBUTES)), max_length=4, required=False
    )
    seen_in = StrictChoiceField(choices=list(SEEN_IN), required=False)
    link = StrictUriField(max_length=500, required=False)
    observed_on = StrictDateField(
        required=False,
        help_text=(
            "city-local date the price was seen: not after today in the city, not before 2000-01-01"
        ),
    )
    notes = StrictCharField(max_length=500, required=False)
    is_owner = StrictBooleanField(required=False)
    nickname = StrictCharField(min_length=2, max_length=40, required=False)
    email = StrictEmailField(
        max_length=200,
        required=False,
        help_text=(
            "used only to tell the sender the price is live; an address at a domain name "
            "(name@example.org), unquoted"
        ),
    )
    consent = StrictBooleanField(required=False, help_text="required (true) with an e-mail")
    turnstile = turnstile_field()

    consent_with = "email"

    class Meta:
        ref_name = "Submission"

    def cross_errors(self, data: dict, errors: dict) -> None:
        consent_errors(data, self.consent_with, errors)
        start, end = _date(data.get("valid_from")), _date(data.get("valid_until"))
        if start and end and start > end and "valid_until" not in errors:
            errors["valid_until"] = ["Must not be earlier than valid_from."]
        observed = _date(data.get("observed_on"))
        if observed and "observed_on" not in errors:
            if observed < EARLIEST_OBSERVED:
                errors["observed_on"] = [f"Must not be before {EARLIEST_OBSERVED.isoformat()}."]
            elif (today := _city_today(data.get("city"))) and observed > today:
                errors["observed_on"] = ["Must not be after today in the city."]


class CityRequestSerializer(StrictSerializer):
    city = VisibleTextField(min_length=2, max_length=80, help_text="as written")
    state = VisibleTextField(
        min_length=2,
        max_length=40,
        required=False,
        help_text="as written (abbreviation or full name)",
    )
    email = StrictEmailField(
        max_length=200,
        required=False,
        help_text=(
            "used only to say the city is live, then deleted; an address at a domain name "
            "(name@example.org), unquoted"
        ),
    )
    consent = StrictBooleanField(required=False, help_text="required (true) with an e-mail")
    turnstile = turnstile_field()

    consent_with = "email"

    class Meta:
        ref_name = "CityRequest"

    def cross_errors(self, data: dict, errors: dict) -> None:
        consent_errors(data, self.consent_with, errors)


class BarOwnerRequestSerializer(StrictSerializer):
    city = city_slug_field()
    bar = VisibleTextField(min_length=2, max_length=120, help_text="as written")
    venue = venue_slug_field("the bar's slug, when the form came from its page", required=False)
    topic = StrictChoiceField(choices=BarOwnerTopic.values)
    message = StrictCharField(max_length=1000, required=False)
    name = VisibleTextField(min_length=2, max_length=80, required=False, help_text="who to ask for")
    contact = VisibleTextField(
        min_length=5, max_length=120, help_text="WhatsApp, phone or e-mail; deleted after 90 days"
    )
    consent = TrueField(help_text="must be true")
    turnstile = turnstile_field()

    class Meta:
        ref_name = "BarOwnerRequest"


class MenuPhotoUploadSerializer(StrictSerializer):
    city = city_slug_field()
    venue = venue_slug_field("the bar's slug in that city")
    images = CountedListField(child=JpegDataUriField(), min_length=1, max_length=3)
    contact = VisibleTextField(
        min_length=5,
        max_length=120,
        required=False,
        help_text="phone or e-mail; deleted after 90 days",
    )
    is_owner = StrictBooleanField(required=False)
    ref = StrictRegexField(
        REF_RE,
        "Must be exactly 16 of letters, digits, '_' and '-'.",
        min_length=16,
        max_length=16,
        required=False,
        help_text="the bar's own link token",
    )
    consent = StrictBooleanField(required=False, help_text="required (true) with a contact")
    turnstile = turnstile_field()

    consent_with = "contact"

    class Meta:
        ref_name = "MenuPhotoUpload"

    def cross_errors(self, data: dict, errors: dict) -> None:
        consent_errors(data, self.consent_with, errors)


class DealConfirmSerializer(StrictSerializer):
    turnstile = turnstile_field()

    class Meta:
        ref_name = "DealConfirm"


class DealDisputeSerializer(StrictSerializer):
    turnstile = turnstile_field()
    price = PriceField(required=False, help_text="what it costs now, in reais")

    class Meta:
        ref_name = "DealDispute"


class ReportSerializer(StrictSerializer):
    deal = StrictIntegerField(min_value=1, required=False, help_text="the price reported")
    venue = StrictIntegerField(min_value=1, required=False, help_text="the bar reported")
    reason = StrictChoiceField(choices=ReportReason.values)
    message = StrictCharField(max_length=500, required=False)
    turnstile = turnstile_field()

    class Meta:
        ref_name = "Report"
