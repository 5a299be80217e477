"""Menu photos, read in the background into drafts for an automated reviewer.

`menu_photos_read` runs the OCR (submissions.ocr) on an upload's photos, outside any
transaction, then in one transaction: turns the lines that show a price into drafts
(submissions.menus), lets the automated reviewer approve those it may, deletes the photos and
marks the upload read (`drafted`, or `failed` when no photo could be read). An upload read
meanwhile by another worker is left alone. Each reading begun is counted first: the third
one that does not finish (the reader killed, out of memory say) is the last, and the upload is
failed and its photos deleted at the next.

The automated reviewer approves a draft at once only when the upload carried the bar's own
link token (`trusted`), the draft names a beer or a brand and a format, shows no offer the
reader cannot model, comes from a line the engine was sure of (submissions.ocr.SURE_SCORE),
and its price is inside the hard bounds: R$ 0,01 to R$ 10.000 (a price's bounds) and R$ 1 to
R$ 1.000 per litre (what a beer can cost; a misread digit falls outside).
Approving is a check of the bar's same plain price (same format, beer or brand, single unit,
regular, no schedules or dates) when it has one, else a new price. Every other draft waits
for a moderator (admin: approve, when it has a format, or reject).
"""

import datetime as dt
import logging
from collections import defaultdict

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from beers import labels
from beers.models import (
    PRICE_MAX_CENTS,
    Beer,
    Brand,
    CheckSource,
    Deal,
    DealStatus,
    Format,
    Venue,
    VenueStatus,
)
from beers.selectors.published import published_deals
from beers.services import deal_create, deal_record_check
from beers.text import name_key
from datasets.services import datasets_schedule_export

from . import menus, ocr
from .models import (
    PHOTO_STATES_OPEN,
    MenuDraft,
    MenuPhoto,
    MenuPhotoUpload,
    PhotoState,
    ReviewState,
)
from .review import ReviewError, _decide, _lock_pending

logger = logging.getLogger(__name__)

# R$ 1 to R$ 1.000 per litre, in cents.
PER_LITRE_CENTS = (100, 100_000)
# Readings of an upload begun before it is given up (failed, photos deleted).
MAX_READS = 3
# The note of a draft from a line the engine was not sure of (submissions.ocr.SURE_SCORE).
NOT_SURE = "read with little confidence"


def menu_catalogue() -> menus.Catalogue:
    return menus.Catalogue(
        beers=[(name_key(name), pk) for pk, name in Beer.objects.values_list("pk", "name")],
        brands=[(name_key(name), pk) for pk, name in Brand.objects.values_list("pk", "name")],
        formats=list(Format.objects.values_list("pk", "type", "volume_ml")),
    )


def within_hard_bounds(price_cents: int, fmt: Format) -> bool:
    """A single serving's price, and its price per litre as the files show it."""
    low, high = PER_LITRE_CENTS
    per_litre = labels.price_per_litre_cents(price_cents, 1, fmt.volume_ml, "regular")
    return 0 < price_cents <= PRICE_MAX_CENTS and low <= per_litre <= high


def menu_photos_read(*, upload_id: int) -> str | None:
    """Read an upload still open into drafts (see the module). Returns its new state, or None
    when there was nothing to read (read already, or not found)."""
    if _given_up(upload_id):
        return PhotoState.FAILED
    jpegs = list(
        MenuPhoto.objects.filter(upload_id=upload_id, upload__state__in=PHOTO_STATES_OPEN)
        .order_by("position")
        .values_list("jpeg", flat=True)
    )
    lines: list[ocr.Line] = []
    read = 0
    for jpeg in jpegs:
        try:
            lines += ocr.read_lines(bytes(jpeg))
            read += 1
        except ocr.Unreadable:
            logger.warning("menu photos: a photo of upload %s could not be read", upload_id)
    catalogue = menu_catalogue()
    drafts = []
    for line in lines:
        for draft in menus.read_menu([line.text], catalogue):
            if not line.sure:
                draft.notes.append(NOT_SURE)
            drafts.append(draft)
    with transaction.atomic():
        upload = _lock_open(upload_id)
        if upload is None:
            return None
        rows = MenuDraft.objects.bulk_create(
            MenuDraft(
                upload=upload,
                venue_id=upload.venue_id,
                position=i,
                text=draft.text,
                beer_id=draft.beer_id,
                brand_id=draft.brand_id,
                format_id=draft.format_id,
                price_cents=draft.price_cents,
                notes="; ".join(draft.notes)[:200],
            )
            for i, draft in enumerate(drafts)
        )
        approved = menu_drafts_auto_review(upload, rows) if upload.trusted else 0
        if approved:
            datasets_schedule_export()
        _processed(upload, PhotoState.DRAFTED if read else PhotoState.FAILED)
    logger.info(
        "menu photos: upload %s read: %d lines, %d drafts, %d approved",
        upload_id,
        len(lines),
        len(rows),
        approved,
    )
    return upload.state


def _lock_open(upload_id: int) -> MenuPhotoUpload | None:
    """The upload, locked, while it waits to be read (another worker's reading, read under
    the lock, wins)."""
    return (
        MenuPhotoUpload.objects.select_for_update()
        .filter(pk=upload_id, state__in=PHOTO_STATES_OPEN)
        .first()
    )


def _processed(upload: MenuPhotoUpload, state: str) -> None:
    """The upload read (or given up): its photos deleted (they are not kept), its state set."""
    MenuPhoto.objects.filter(upload=upload).delete()
    upload.state = state
    upload.processed_at = timezone.now()
    upload.save(update_fields=["state", "processed_at"])


def _given_up(upload_id: int) -> bool:
    """Count a reading of an open upload, in a transaction of its own (committed before the
    engine runs); after MAX_READS, the upload is failed and its photos deleted instead: a photo
    that brings its reader down (memory, a crash in the engine) is not read again at each
    restart, nor kept."""
    with transaction.atomic():
        upload = _lock_open(upload_id)
        if upload is None:
            return False  # read meanwhile, or gone: menu_photos_read finds nothing to read
        if upload.read_attempts < MAX_READS:
            upload.read_attempts += 1
            upload.save(update_fields=["read_attempts"])
            return False
        _processed(upload, PhotoState.FAILED)
    logger.warning("menu photos: upload %s given up after %d readings", upload_id, MAX_READS)
    return True


def menu_drafts_auto_review(upload: MenuPhotoUpload, drafts: list[MenuDraft]) -> int:
    """The automated reviewer, on a trusted upload's drafts: approves those it may (module
    docstring); returns how many. The others stay pending, with the reason noted."""
    approved = 0
    _lock_bar(upload.venue_id)
    closed = _bar_closed(upload.venue_id)  # once: every draft of an upload is of its bar
    formats = Format.objects.in_bulk({d.format_id for d in drafts if d.format_id})
    # The amounts the menu shows for each beer (or brand, or neither) and format: two amounts
    # are two beers the reader could not tell apart (a Pilsen and an IPA the catalogue lacks,
    # two beers of one brand), which would be taken for one price; the same line read twice
    # (two photos of a page) is one amount.
    amounts = defaultdict(set)
    for draft in drafts:
        if draft.format_id:
            amounts[_price_key(draft)].add(draft.price_cents)
    for draft in drafts:
        if draft.notes:
            continue  # the reader's own doubts (no format, no beer or brand, an offer)
        draft.format = formats[draft.format_id]
        same, note = None, ""
        if closed:
            note = BAR_CLOSED
        elif _same_price_suspended(draft):
            note = SAME_PRICE_SUSPENDED
        elif not within_hard_bounds(draft.price_cents, draft.format):
            note = "outside the hard bounds"
        elif len(amounts[_price_key(draft)]) > 1:
            note = "the menu shows several amounts for this beer and format"
        else:
            same, ambiguous = _same_price(draft)
            if ambiguous:
                note = "the bar has several prices this beer could be"
        if note:
            draft.decision_note = note
            draft.save(update_fields=["decision_note"])
            continue
        _approve(draft, same)
        approved += 1
    return approved


def _price_key(draft: MenuDraft) -> tuple:
    """What names the price a draft is of: its format and beer, else brand, else neither."""
    return draft.format_id, draft.beer_id, None if draft.beer_id else draft.brand_id


def _same_prices(draft: MenuDraft, deals: QuerySet[Deal] | None = None) -> QuerySet[Deal]:
    """The bar's plain prices (single, regular, no schedules or dates) of the draft's format
    and beer (or brand, or neither), newest check first: of the published set, or `deals`."""
    return (
        (published_deals() if deals is None else deals)
        .filter(
            venue_id=draft.venue_id,
            format_id=draft.format_id,
            beer_id=draft.beer_id,
            units=1,
            packaging="single",
            kind="regular",
            schedules=[],
            valid_from=None,
            valid_until=None,
        )
        .filter(**({} if draft.beer_id else {"brand_id": draft.brand_id}))
        .order_by("-verified_at", "-id")
    )


def _bar_closed(venue_id: int) -> bool:
    """A submission at a closed bar is refused; so is a menu draft (one query)."""
    return not Venue.objects.filter(pk=venue_id, status=VenueStatus.OPEN).exists()


def _same_price_suspended(draft: MenuDraft) -> bool:
    """Whether the bar's same price is out of the rankings until a moderator decides its
    disputes: a new price beside it would be listed next to it, the old amount first, once
    they are dismissed (one query)."""
    return _same_prices(draft, Deal.objects.filter(status=DealStatus.SUSPENDED)).exists()


BAR_CLOSED = "the bar is closed"
SAME_PRICE_SUSPENDED = "the bar's same price is out of the rankings until its disputes are decided"


def _lock_bar(venue_id: int) -> None:
    """Lets one transaction at a time find the bar's same prices and add to them (held until
    commit): two trusted uploads read at once, or two moderators approving drafts of one line,
    each found no price and each created it (two equal prices in 2 of 3 runs)."""
    Venue.objects.select_for_update(no_key=True).filter(pk=venue_id).first()


def _same_price(draft: MenuDraft) -> tuple[Deal | None, bool]:
    """(the bar's price the draft is a check of, or None: a new price; whether it is
    ambiguous). A draft naming its beer checks the newest of its same prices; one naming no
    beer only the one price it can be: with two or more, which one is a person's call (one
    query)."""
    same = _same_prices(draft)
    if draft.beer_id is not None:
        return same.first(), False
    candidates = list(same[:2])
    return (candidates[0] if len(candidates) == 1 else None), len(candidates) > 1


def _approve(draft: MenuDraft, same: Deal | None) -> Deal:
    """The draft as a check of `same` (_same_price), else as a new price."""
    if same is not None:
        deal = deal_record_check(
            deal=same, source=CheckSource.MENU_PHOTO, price_cents=draft.price_cents
        )
    else:
        deal = deal_create(
            venue=draft.venue,
            format=draft.format,
            price_cents=draft.price_cents,
            beer=draft.beer,
            brand=draft.brand,
            source=CheckSource.MENU_PHOTO,
        )
    _decide(draft, ReviewState.APPROVED, deal=deal)
    return deal


@transaction.atomic
def menu_draft_approve(*, draft_id: int) -> Deal:
    """A moderator approves a draft as read: it needs a format, and a price within a price's
    bounds (R$ 0,01 to R$ 10.000)."""
    draft = _lock_pending(MenuDraft, draft_id)
    if draft.format_id is None:
        raise ReviewError(_("Sem formato: não dá para aprovar; recuse o rascunho."))
    if draft.price_cents > PRICE_MAX_CENTS:
        raise ReviewError(_("Preço acima de R$ 10.000."))
    _lock_bar(draft.venue_id)
    if _bar_closed(draft.venue_id):
        raise ReviewError(_("Esse bar está marcado como fechado: reabra o bar antes."))
    if _same_price_suspended(draft):
        raise ReviewError(
            _("O mesmo preço deste bar está fora do ranking: decida as contestações dele antes.")
        )
    same, _ambiguous = _same_price(draft)  # ambiguous: None, approved as a new price
    if draft.beer_id is None and same is not None and same.price_cents != draft.price_cents:
        # A beer without a name at another amount is another price, not a new amount of the
        # bar's one (an IPA after the Pilsen of the same menu).
        same = None
    deal = _approve(draft, same)
    datasets_schedule_export()
    return deal


@transaction.atomic
def menu_draft_reject(*, draft_id: int, note: str = "") -> None:
    draft = _lock_pending(MenuDraft, draft_id)
    _decide(draft, ReviewState.REJECTED, note)


def menu_photos_due() -> int:
    """Uploads still waiting to be read after MENU_PHOTOS_GRACE_SECONDS (their task was lost:
    a broker down, every retry spent; or, in `make run`, none was queued): read now. Returns
    how many were read."""
    grace = dt.timedelta(seconds=settings.MENU_PHOTOS_GRACE_SECONDS)
    waiting = MenuPhotoUpload.objects.filter(
        state__in=PHOTO_STATES_OPEN, created_at__lte=timezone.now() - grace
    ).order_by("created_at")
    done = 0
    for upload_id in waiting.values_list("pk", flat=True):
        if menu_photos_read(upload_id=upload_id) is not None:
            done += 1
    return done
