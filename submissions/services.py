"""Queued writes and the standing of prices (confirm, dispute).

Each ``*_create`` returns ``"received"`` when it stored the write and ``"duplicate"`` when the
same body from the same address is still waiting for review (nothing stored twice, also under
concurrent identical requests: the partial unique constraints decide).
"""

import datetime as dt
import hashlib
import hmac
import json
import logging
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from beers.answers import answers_changed
from beers.crypto import blind_index
from beers.errors import Issue, not_found, unprocessable
from beers.models import (
    CheckSource,
    City,
    Deal,
    Format,
    Venue,
)
from beers.selectors.published import published_deals
from beers.services import deal_record_check, standing_with_disputes
from beers.text import name_key
from outreach.links import menu_link_trusts

from .models import (
    PHOTO_STATES_OPEN,
    BarOwnerMessage,
    CityRequest,
    DealConfirmation,
    DealDispute,
    MenuPhoto,
    MenuPhotoUpload,
    PhotoState,
    PriceSubmission,
    Report,
    ReviewState,
)

logger = logging.getLogger(__name__)

RECEIVED = "received"
DUPLICATE = "duplicate"
# Left out of the duplicate test: a new token, or another e-mail, is still the same thing.
FINGERPRINT_IGNORES = frozenset({"turnstile", "email", "contact", "consent"})
PRIVATE_KEYS = frozenset({"turnstile", "email", "contact", "consent", "name"})
BIGINT_MAX = 2**63 - 1
# The "it's live" e-mail: its task retries for a few minutes, then the hourly
# submissions_notify_due every hour, until the daily purge takes the address this long after
# the decision (a relay down over a weekend still delivers).
NOTIFY_GRACE = dt.timedelta(days=3)
CONTACT_RETENTION = dt.timedelta(days=90)
PHOTO_RETENTION = dt.timedelta(days=7)


def json_canonical(value):
    """Integral numbers as JSON integers (5.0 -> 5), at any depth: the same body gives the same
    bytes, and a stored payload holds the integers its schema promised (days, units)."""
    if isinstance(value, dict):
        return {str(k): json_canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def body_fingerprint(body: dict) -> str:
    """A keyed hash (HMAC-SHA256, ADDRESS_HASH_KEY) of the canonical JSON of the body, without
    verification and contacts: it finds a repeated write. Keyed, because the body may hold a
    name that the 90-day purge deletes: with a plain hash, the rest of the row in clear let
    anyone holding the table try names until one matched."""
    kept = {k: v for k, v in body.items() if k not in FINGERPRINT_IGNORES}
    text = json.dumps(
        json_canonical(kept), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    key = b"breja-body-fingerprint:" + settings.ADDRESS_HASH_KEY.encode()
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def reais_to_cents(value: float) -> int:
    """Reais to whole cents, half up."""
    return int((Decimal(str(value)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def price_cents(price: float) -> int:
    """A price in whole cents, half up; a positive price never becomes 0 cents."""
    return max(1, reais_to_cents(price))


def _store_once(model: type[models.Model], pending: models.Q, **fields) -> str:
    """Create the row unless an identical pending one exists (constraint-backed)."""
    same = model.objects.filter(
        pending, address_hash=fields["address_hash"], body_fingerprint=fields["body_fingerprint"]
    )
    if same.exists():
        return DUPLICATE
    try:
        with transaction.atomic():
            model.objects.create(**fields)
    except IntegrityError:
        if same.exists():
            return DUPLICATE
        raise
    return RECEIVED


def _active_city(slug: str) -> City | None:
    return City.objects.filter(slug=slug, active=True).first()


def _by_id(queryset, pk: int):
    if not 0 < pk <= BIGINT_MAX:
        return None
    return queryset.filter(pk=pk).first()


_PENDING = models.Q(state=ReviewState.PENDING)


@transaction.atomic
def submission_create(*, address_hash: str, body: dict, data: dict) -> str:
    """Queue a price for review: 422 for an unknown city, bar (in that city) or format."""
    issues: list[Issue] = []
    city = _active_city(data["city"])
    venue = None
    if city is None:
        issues.append(Issue("city", "Unknown city."))
    elif "id" in data["venue"]:
        venue = _by_id(Venue.objects.filter(city=city), data["venue"]["id"])
        if venue is None:
            issues.append(Issue("venue.id", "Unknown bar in this city."))
    fmt = Format.objects.filter(code=data["format_code"]).first()
    if fmt is None:
        issues.append(Issue("format_code", "Unknown format."))
    if issues:
        raise unprocessable("Unknown city, bar or format.", issues)
    email = data.get("email")
    return _store_once(
        PriceSubmission,
        _PENDING,
        address_hash=address_hash,
        body_fingerprint=body_fingerprint(body),
        city=city,
        venue=venue,
        format=fmt,
        payload=json_canonical({k: v for k, v in body.items() if k not in PRIVATE_KEYS}),
        email=email,
        email_index=blind_index(email) if email else "",
    )


@transaction.atomic
def city_request_create(*, address_hash: str, body: dict, data: dict) -> str:
    email = data.get("email")
    return _store_once(
        CityRequest,
        _PENDING,
        address_hash=address_hash,
        body_fingerprint=body_fingerprint(body),
        city=data["city"],
        city_key=name_key(data["city"])[:80],
        state_name=data.get("state", ""),
        email=email,
        email_index=blind_index(email) if email else "",
    )


@transaction.atomic
def bar_owner_message_create(*, address_hash: str, body: dict, data: dict) -> str:
    """The city, and the bar when a slug is given (422 when unknown; any bar of the city,
    closed ones too: an owner may write about a bar that closed)."""
    city = _active_city(data["city"])
    if city is None:
        raise unprocessable("Unknown city.", [Issue("city", "Unknown city.")])
    slug = data.get("venue", "")
    venue = Venue.objects.filter(city=city, slug=slug).first() if slug else None
    if slug and venue is None:
        raise unprocessable("Unknown bar.", [Issue("venue", "Unknown bar in this city.")])
    return _store_once(
        BarOwnerMessage,
        _PENDING,
        address_hash=address_hash,
        body_fingerprint=body_fingerprint(body),
        city=city,
        bar=data["bar"],
        venue_slug=slug,
        venue=venue,
        topic=data["topic"],
        message=data.get("message", ""),
        name=data.get("name"),
        contact=data["contact"],
        contact_index=blind_index(data["contact"]),
    )


@transaction.atomic
def menu_photo_upload_create(*, address_hash: str, body: dict, data: dict) -> str:
    """Keep the photos until they are read; reading is queued after the commit."""
    from .tasks import menu_photos_process

    city = _active_city(data["city"])
    venue = Venue.objects.filter(city=city, slug=data["venue"]).first() if city else None
    if city is None:
        raise unprocessable("Unknown city.", [Issue("city", "Unknown city.")])
    if venue is None:
        raise unprocessable("Unknown bar.", [Issue("venue", "Unknown bar in this city.")])
    fingerprint = body_fingerprint(body)
    # Still waiting for review: not read yet, or read into drafts a moderator has yet to
    # decide (the partial unique constraint covers the first, two requests racing included).
    waiting = models.Q(state__in=PHOTO_STATES_OPEN) | models.Q(
        state=PhotoState.DRAFTED, drafts__state=ReviewState.PENDING
    )
    same = MenuPhotoUpload.objects.filter(
        waiting, address_hash=address_hash, body_fingerprint=fingerprint
    )
    if same.exists():
        return DUPLICATE
    contact = data.get("contact")
    try:
        with transaction.atomic():
            upload = MenuPhotoUpload.objects.create(
                city=city,
                venue=venue,
                address_hash=address_hash,
                body_fingerprint=fingerprint,
                is_owner=data.get("is_owner"),
                trusted=menu_link_trusts(data.get("ref"), venue.pk),
                contact=contact,
                contact_index=blind_index(contact) if contact else "",
            )
    except IntegrityError:
        if same.exists():
            return DUPLICATE
        raise
    MenuPhoto.objects.bulk_create(
        MenuPhoto(upload=upload, position=i, jpeg=jpeg) for i, jpeg in enumerate(data["images"])
    )
    # robust: the upload is stored either way; a broker failure must not turn the 202 into
    # a 500 after the commit (the upload then waits in "received" for menu_photos_due).
    # Without a worker (`make run`) the in-process beat reads it instead, so the 202 does not
    # wait for the reading.
    if not settings.MENU_PHOTOS_IN_PROCESS:
        transaction.on_commit(lambda: menu_photos_process.delay(upload.pk), robust=True)
    return RECEIVED


def _public_deals():
    """The prices the public can name: deals.json's (published_deals) of an active city."""
    return published_deals().filter(city__active=True)


@transaction.atomic
def report_create(*, address_hash: str, body: dict, data: dict) -> str:
    """422 when the reported price or bar is unknown (or the price is not at that bar). One
    nothing public names is unknown: a bar of a city off the site, a price out of the open
    data (suspended, retired, at a closed bar), as confirm and dispute answer 404 for it (an
    audit told a hidden price's id from a missing one by the answer)."""
    issues: list[Issue] = []
    deal = venue = None
    if "deal" in data:
        deal = _by_id(_public_deals(), data["deal"])
        if deal is None:
            issues.append(Issue("deal", "Unknown price."))
    if "venue" in data:
        venue = _by_id(Venue.objects.filter(city__active=True), data["venue"])
        if venue is None:
            issues.append(Issue("venue", "Unknown bar."))
    if deal is not None and venue is not None and deal.venue_id != venue.pk:
        issues.append(Issue("deal", "This price is not at that bar."))
    if issues:
        raise unprocessable("Unknown price or bar.", issues)
    return _store_once(
        Report,
        _PENDING,
        address_hash=address_hash,
        body_fingerprint=body_fingerprint(body),
        deal=deal,
        venue=venue,
        reason=data["reason"],
        message=data.get("message", ""),
    )


def _deal_for_update(deal_id: int) -> tuple[Deal, City, dt.date, bool]:
    """(the price, locked; its city; the city-local day; whether it is public: one of
    deals.json's prices, in an active city), or 404 when there is no such price. The caller
    answers a repeat from the same address `duplicate` whatever the price became since
    (suspended by that very dispute, say), and 404 to anything else on a price nobody can see."""
    deal = _by_id(Deal.objects.select_for_update(of=("self",)), deal_id)
    if deal is None:
        raise not_found("Price not found.")
    # Asked once the lock is held, in a statement of its own: a subquery beside the lock would
    # read the snapshot from before the wait, missing the dispute that made the price suspended.
    public = _public_deals().filter(pk=deal.pk).exists()
    city = City.objects.get(pk=deal.city_id)
    return deal, city, city.local_now().date(), public


@transaction.atomic
def deal_confirm(*, deal_id: int, address_hash: str) -> str:
    """A confirmation: with no open disputes it is a check of the price (verified now) and one
    more confirmation (interface: "counts as a verification; confirmations rise"); while
    disputes are open it is kept but changes nothing. Once per address, price and city-local
    day (the interface's own bound: the same address may confirm again the next day); a
    repeat that day is a duplicate."""

    deal, city, day, public = _deal_for_update(deal_id)
    if DealConfirmation.objects.filter(deal=deal, address_hash=address_hash, day=day).exists():
        return DUPLICATE
    if not public:
        raise not_found("Price not found.")
    counted = deal.open_disputes == 0
    try:
        with transaction.atomic():
            DealConfirmation.objects.create(
                deal=deal, address_hash=address_hash, day=day, counted=counted
            )
    except IntegrityError:
        return DUPLICATE
    if counted:
        deal_record_check(deal=deal, source=CheckSource.CONFIRMATION)
        Deal.objects.filter(pk=deal.pk).update(confirmations=models.F("confirmations") + 1)
        answers_changed(city=city.slug, venue_id=deal.venue_id)
    return RECEIVED


@transaction.atomic
def deal_dispute(*, deal_id: int, address_hash: str, price: float | None = None) -> str:
    """A dispute: one more open dispute; 2 open → disputed, 3 → suspended (out of the
    rankings until a moderator decides). Once per address, price and city-local day (the
    interface's bound, as for confirmations); a repeat that day is a duplicate."""

    deal, city, day, public = _deal_for_update(deal_id)
    mine = DealDispute.objects.filter(deal=deal, address_hash=address_hash)
    if mine.filter(day=day).exists():
        return DUPLICATE
    if not public:
        raise not_found("Price not found.")
    try:
        with transaction.atomic():
            DealDispute.objects.create(
                deal=deal,
                address_hash=address_hash,
                day=day,
                price_cents=price_cents(price) if price is not None else None,
            )
    except IntegrityError:
        return DUPLICATE
    deal.open_disputes += 1
    deal.status = standing_with_disputes(deal.status, deal.open_disputes)
    deal.save(update_fields=["open_disputes", "status"])
    answers_changed(city=city.slug, venue_id=deal.venue_id)
    return RECEIVED


def contacts_purge(*, now: dt.datetime | None = None) -> dict[str, int]:
    """Delete bar-owner and menu-photo contacts older than 90 days, the e-mails of submissions
    left unreviewed that long, those of decided submissions and city requests that no
    notification took away within NOTIFY_GRACE (a relay
    that refused the address for good, a price deleted meanwhile; a price whose validity begins
    later keeps its sender's until NOTIFY_GRACE after it began), and menu photos older than a week
    that were never read (their upload is marked expired)."""
    now = now or timezone.now()
    contact_cutoff = now - CONTACT_RETENTION
    decided = models.Q(reviewed_at__lt=now - NOTIFY_GRACE, email__isnull=False) & ~models.Q(
        state=ReviewState.PENDING
    )
    # A price approved before its validity begins: its sender is told on that day
    # (review.submissions_notify_due), and the grace covers that message's retries.
    not_yet_told = models.Q(deal__valid_from__gte=(now - NOTIFY_GRACE).date())
    # A price nobody reviewed in 90 days will not be told live: its sender's e-mail goes with
    # the other contacts (a city request waits for its city, which is what it asks to hear).
    unreviewed = models.Q(state=ReviewState.PENDING, created_at__lt=contact_cutoff)
    counts = {
        "submission_emails": PriceSubmission.objects.filter(
            (decided & ~not_yet_told) | unreviewed, email__isnull=False
        ).update(email=None, email_index=""),
        "city_request_emails": CityRequest.objects.filter(decided).update(
            email=None, email_index=""
        ),
        "bar_owner_contacts": BarOwnerMessage.objects.filter(created_at__lt=contact_cutoff)
        .filter(models.Q(contact__isnull=False) | models.Q(name__isnull=False))
        .update(contact=None, name=None, contact_index=""),
        "menu_photo_contacts": MenuPhotoUpload.objects.filter(
            created_at__lt=contact_cutoff, contact__isnull=False
        ).update(contact=None, contact_index=""),
    }
    photo_cutoff = now - PHOTO_RETENTION
    with transaction.atomic():
        stale = MenuPhoto.objects.filter(created_at__lt=photo_cutoff)
        upload_ids = set(stale.values_list("upload_id", flat=True))
        counts["menu_photos"] = stale.delete()[0]
        counts["menu_uploads_expired"] = MenuPhotoUpload.objects.filter(
            pk__in=upload_ids, state__in=PHOTO_STATES_OPEN
        ).update(state=PhotoState.EXPIRED)
    return counts
