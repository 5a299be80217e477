"""Review services: what each moderator decision does to the queued writes and to the prices.

The admin (submissions/admin.py) only collects the decision and calls one of these. Each runs
in one transaction with the queued row locked (a decision is taken once, even when two
moderators press the button together), asks for a fresh dataset export after the commit, and
enqueues the e-mails that tell senders their price or city is live. The e-mail address is
deleted by the same transaction that sends it (``*_notify_live``), or at once when there is
nothing to tell (rejection).
"""

import datetime as dt
import logging
import re
import zoneinfo
from collections.abc import Collection

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from beers import labels
from beers.models import (
    PRICE_MAX_CENTS,
    CheckSource,
    City,
    Deal,
    DealKind,
    DealStatus,
    Neighbourhood,
    Venue,
    VenueStatus,
)
from beers.selectors import render
from beers.selectors.published import published_deals
from beers.selectors.ranking import ranked_deals
from beers.selectors.twins import venue_find_twins
from beers.services import (
    beer_for_name,
    beer_named,
    deal_create,
    deal_record_check,
    deal_set_standing,
    venue_close,
    venue_create,
)
from beers.text import trimmed
from datasets.services import datasets_schedule_export

from .models import (
    BarOwnerMessage,
    CityRequest,
    DealDispute,
    PriceSubmission,
    Report,
    ReviewState,
)
from .services import price_cents, reais_to_cents

logger = logging.getLogger(__name__)

# Where Brazil's cities can be: a centre outside this box is a typo (or 0, 0).
BRAZIL_LAT = (-34.0, 5.5)
BRAZIL_LNG = (-74.5, -28.5)


class ReviewError(Exception):
    """A decision that cannot be taken as asked; the message is for the moderator."""


class TwinsFound(ReviewError):
    """The new bar of a submission looks like bars already listed: choose one, or say it is
    really a new bar."""

    def __init__(self, twins: list[Venue]):
        self.twins = twins
        super().__init__(
            _(
                "Já existe um bar parecido perto deste ponto: escolha o bar existente ou confirme "
                "que é um bar novo."
            )
        )


class ListedPriceFound(ReviewError):
    """A bulk approval of a price its bar already lists (one a merge may update): left for
    the submission's review page, which offers the merge."""

    def __init__(self, candidates: list[Deal]):
        self.candidates = candidates
        super().__init__(
            _(
                "O bar já tem este preço (#%(ids)s): revise na página do envio (atualizar o "
                "preço listado ou aprovar como outro)."
            )
            % {"ids": ", #".join(str(deal.pk) for deal in candidates[:5])}
        )


class NotificationNotSent(Exception):
    """The e-mail could not be sent; the address is kept for the retry. Never names it."""


def decided_message(row) -> str:
    """What a moderator is told of a decision on an item that was decided already."""
    return _("Este item já foi decidido (%(state)s).") % {"state": row.get_state_display()}


def _lock_pending(model, pk: int):
    row = model.objects.select_for_update().filter(pk=pk).first()
    if row is None:
        raise ReviewError(_("Item não encontrado."))
    if row.state != ReviewState.PENDING:
        raise ReviewError(decided_message(row))
    return row


def _decide(row, state: str, note: str = "", **fields) -> None:
    row.state = state
    row.reviewed_at = timezone.now()
    row.decision_note = (note or "")[:280]
    for name, value in fields.items():
        setattr(row, name, value)
    row.save()


# An e-mail address, or a phone number (8 digits or more, with the usual separators), in a
# nickname: an audit's sender typed an address there and the bar's page printed it.
_CONTACT_IN_NICKNAME = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+|(?:\+?\d[\s().-]*){8,}")


def _credit(payload: dict) -> str:
    """The name a price credits: the sender's nickname without the spaces or invisible
    characters around it (a nickname of spaces or zero-width spaces alone credits nobody,
    rather than "sent by   "). A nickname holding a contact credits nobody: the site would
    publish it."""
    nickname = trimmed(payload.get("nickname") or "")
    return "" if _CONTACT_IN_NICKNAME.search(nickname) else nickname


def _cents_or_none(value) -> int | None:
    """A couvert (0 to 1000 reais) in cents, half up: R$ 0,004 is 0 cents, unlike a price."""
    return None if value is None else reais_to_cents(value)


def _date_or_none(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


def _verified_at(city: City, payload: dict) -> dt.datetime:
    """When the price was seen: midday (city time) of `observed_on`, never in the future."""
    now = timezone.now()
    observed = _date_or_none(payload.get("observed_on"))
    if observed is None:
        return now
    seen = dt.datetime.combine(observed, dt.time(12), tzinfo=zoneinfo.ZoneInfo(city.timezone))
    return min(seen, now)


# --- prices sent by visitors ------------------------------------------------------------------


def submission_new_venue(submission: PriceSubmission) -> dict | None:
    """The new bar a submission proposes (NewVenue), or None when it names a listed bar."""
    return submission.payload.get("venue", {}).get("new")


def submission_twins(submission: PriceSubmission) -> list[Venue]:
    """Listed bars that look like the submission's new bar (empty for a listed bar)."""
    new = submission_new_venue(submission)
    if new is None:
        return []
    return venue_find_twins(city=submission.city, name=new["name"], lat=new["lat"], lng=new["lng"])


def _same_beer(submission: PriceSubmission) -> Q:
    """The prices the submission's beer may be news of: that beer's, or (a brand's name
    alone) any of that brand's, and those naming no beer, of its brand or of none. Never a
    price of another beer the catalogue knows: an audit merged R$ 25,00 sent for a Heineken
    into a Stella Artois, credited to the Heineken's sender."""
    beer, brand, new = beer_named(submission.payload.get("beer"))
    unnamed = Q(beer__isnull=True) & (Q(brand__isnull=True) | Q(brand=brand))
    if beer is not None:
        return Q(beer=beer) | unnamed
    if brand is not None and new is None:  # "Brahma": any Brahma
        return Q(brand=brand) | unnamed
    return unnamed


def _at_its_bar(submission: PriceSubmission):
    """The live prices (published or disputed, at an open bar) of the submission's city and
    format at its bar, or at the bars that look like its new one."""
    if submission.venue_id is not None:
        venue_ids = [submission.venue_id]
    else:
        venue_ids = [v.pk for v in submission_twins(submission)]
    return published_deals().filter(
        venue_id__in=venue_ids, format_id=submission.format_id, city_id=submission.city_id
    )


def submission_merge_candidates(submission: PriceSubmission) -> list[Deal]:
    """Prices this submission may update (_at_its_bar, of its beer: _same_beer): a merge tells
    the sender the price is live. Cheapest per litre first."""
    return list(
        _at_its_bar(submission)
        .filter(_same_beer(submission))
        .select_related("venue", "beer", "brand", "format")
        .order_by("price_per_litre", "price_cents", "id")
    )


def submission_listed(submission: PriceSubmission) -> list[Deal]:
    """The merge candidates that are this very price (_at_its_bar): the same beer (or the brand
    named alone, or no name), units, packaging and kind; another amount is news of it. A beer
    the catalogue does not know yet has none."""
    beer, brand, new = beer_named(submission.payload.get("beer"))
    if new is not None:
        return []
    payload = submission.payload
    same = Q(beer=beer) if beer is not None else Q(beer__isnull=True, brand=brand)
    return list(
        _at_its_bar(submission)
        .filter(
            same,
            units=payload.get("units", 1),
            packaging=payload.get("packaging", "single"),
            kind=payload.get("kind", "regular"),
        )
        .order_by("id")
    )


def _venue_for(
    submission: PriceSubmission, venue_id: int | None, create_venue: bool, twins_seen: set[int]
) -> Venue:
    payload = submission.payload
    if venue_id is not None:
        venue = Venue.objects.filter(pk=venue_id, city_id=submission.city_id).first()
        if venue is None:
            raise ReviewError(_("Esse bar não existe nesta cidade."))
    elif submission.venue_id is not None:
        venue = submission.venue
    elif submission_new_venue(submission) is None:
        raise ReviewError(
            _(
                "O bar deste envio não existe mais: recuse o envio (quem enviou pode mandar de novo)."
            )
        )
    else:
        new = submission_new_venue(submission)
        # One new bar at a time in a city: two approvals at once both found no twin, and both
        # bars were listed (or both took one slug: a 500). A bar listed since the moderator
        # saw the page (twins_seen) is offered first: "a new bar" was said of the others.
        City.objects.select_for_update(no_key=True).filter(pk=submission.city_id).first()
        twins = submission_twins(submission)
        if twins and not (create_venue and {twin.pk for twin in twins} <= twins_seen):
            raise TwinsFound(twins)
        try:
            return venue_create(
                city=submission.city,
                name=new["name"],
                lat=new["lat"],
                lng=new["lng"],
                kind=new["kind"],
                on_site=new["on_site"],
                address=new.get("address", ""),
                instagram=new.get("instagram", ""),
                opening_hours=new.get("opening_hours", ""),
                attributes=payload.get("attributes") or [],
            )
        except ValidationError as exc:
            raise ReviewError(_("Bar inválido: %(errors)s") % {"errors": exc.messages}) from exc
    if venue.status != VenueStatus.OPEN:
        raise ReviewError(_("Esse bar está marcado como fechado: reabra o bar antes."))
    return venue


def _live_from(deal: Deal, city: City, today: dt.date) -> dt.date | None:
    """The first city-local day, from `today` on, that the price is in the rankings: today,
    the day its validity begins, or None when it will not be (not published, its bar closed or
    not a bar, its validity over)."""
    day = max(today, deal.valid_from or today)
    return day if ranked_deals(city=city, today=day).filter(pk=deal.pk).exists() else None


def deal_live_from(deal: Deal) -> dt.date | None:
    """The first city-local day, from today on, that the price is in the rankings, or None
    when it will not be (seen more than 180 days ago, its validity over, not at a bar)."""
    city = City.objects.get(pk=deal.city_id)
    return _live_from(deal, city, city.local_now().date())


def _notify_submission_later(submission: PriceSubmission, deal: Deal) -> None:
    """Tell the sender their price is live, after commit, if it is: in the rankings today
    (its check recent enough, its validity begun and not over). A price whose validity begins
    later keeps the e-mail until that day (submissions_notify_due tells them then). Otherwise
    there is nothing live to tell, and the e-mail is deleted now."""
    if not submission.email:
        return
    city = City.objects.get(pk=deal.city_id)
    if not city.active:
        return  # nothing of the city is public: told once it is (submissions_notify_due)
    today = city.local_now().date()
    day = _live_from(deal, city, today)
    if day is None:
        PriceSubmission.objects.filter(pk=submission.pk).update(email=None, email_index="")
        return
    if day > today:
        return
    from .tasks import submission_notify_live

    pk = submission.pk
    transaction.on_commit(lambda: submission_notify_live.delay(pk), robust=True)


def submissions_notify_due() -> dict[str, int]:
    """Hourly (Celery beat): every sender still holding an e-mail is told once their price or
    city is live. That covers prices approved before their validity began (told on its first
    city-local day) and messages whose send failed for longer than the task's own retries (a
    relay down for an hour): they are tried again every hour until the daily purge takes the
    address (services.NOTIFY_GRACE after the decision). The e-mail of a price that will not go
    live any more (retired, its bar closed, its validity over) is deleted. Returns how many of
    each (the tasks send once, whoever asks twice)."""
    from .tasks import city_request_notify_live, submission_notify_live

    counts = {"told": 0, "deleted": 0, "cities_told": 0}
    waiting = PriceSubmission.objects.filter(
        state__in=[ReviewState.APPROVED, ReviewState.MERGED],
        email__isnull=False,
        deal__isnull=False,
        # a city off the site is not public yet (or withdrawn): told once it is, or the purge
        # takes the address in time
        deal__city__active=True,
    ).select_related("deal__city")
    for submission in waiting.iterator():
        deal, city = submission.deal, submission.deal.city
        today = city.local_now().date()
        day = _live_from(deal, city, today)
        if day is None:
            PriceSubmission.objects.filter(pk=submission.pk).update(email=None, email_index="")
            counts["deleted"] += 1
        elif day == today:
            counts["told"] += _queue(submission_notify_live, submission.pk)
    # An approved city request's note is the slug of the city it was answered with.
    live = dict(City.objects.filter(active=True).values_list("slug", "pk"))
    asks = CityRequest.objects.filter(state=ReviewState.APPROVED, email__isnull=False)
    for pk, slug in asks.values_list("pk", "decision_note"):
        if slug in live:
            counts["cities_told"] += _queue(city_request_notify_live, pk, live[slug])
    return counts


def _queue(task, *args) -> int:
    """Queue a notification: 1, or 0 when it failed at once (a task run eagerly, as under
    `make run`, raises its send's failure here); the next hour tries again."""
    try:
        task.delay(*args)
    except Exception as exc:  # the task's own message names only the row
        logger.warning("%s%s not sent: %s", task.name, args, type(exc).__name__)
        return 0
    return 1


@transaction.atomic
def submission_approve(
    *,
    submission_id: int,
    venue_id: int | None = None,
    create_venue: bool = False,
    twins_seen: Collection[int] = (),
    unless_listed: bool = False,
) -> Deal:
    """The price goes live: its bar (listed, chosen, or created and placed in its bairro), its
    beer or brand, the price with its schedules and a first check; the sender's nickname is
    credited. A new bar that looks like a listed one raises TwinsFound unless the moderator
    chose a bar (`venue_id`) or confirmed a new one (`create_venue`) having seen every such
    bar (`twins_seen`: the ids the review page offered). With `unless_listed` (the list's bulk
    action), a price its bar already lists (submission_listed, as now: one approved a moment
    before included) raises ListedPriceFound: three reports of one price made three rows."""
    submission = _lock_pending(PriceSubmission, submission_id)
    if unless_listed:
        candidates = submission_listed(submission)
        if candidates:
            raise ListedPriceFound(candidates)
    payload = submission.payload
    venue = _venue_for(submission, venue_id, create_venue, set(twins_seen))
    beer, brand = beer_for_name(payload.get("beer"))
    deal = deal_create(
        venue=venue,
        format=submission.format,
        price_cents=price_cents(payload["price"]),
        beer=beer,
        brand=brand,
        units=payload.get("units", 1),
        packaging=payload.get("packaging", "single"),
        kind=payload.get("kind", "regular"),
        # minutes belong to an open bar (docs/decisions.md: null on every other price)
        open_bar_minutes=(
            payload.get("open_bar_minutes") if payload.get("kind") == DealKind.OPEN_BAR else None
        ),
        service_charge_pct=payload.get("service_charge_pct"),
        couvert_cents=_cents_or_none(payload.get("couvert")),
        conditions=payload.get("conditions", ""),
        valid_from=_date_or_none(payload.get("valid_from")),
        valid_until=_date_or_none(payload.get("valid_until")),
        schedules=payload.get("schedules") or [],
        verified_at=_verified_at(submission.city, payload),
        source=CheckSource.SUBMISSION,
        credit=_credit(payload),
    )
    _decide(submission, ReviewState.APPROVED, deal=deal, venue=venue)
    _notify_submission_later(submission, deal)
    datasets_schedule_export()
    return deal


@transaction.atomic
def submission_reject(*, submission_id: int, reason: str) -> None:
    """Refused, with the reason; the e-mail is deleted (there will be nothing to tell)."""
    if not reason.strip():
        raise ReviewError(_("Diga o motivo da recusa."))
    submission = _lock_pending(PriceSubmission, submission_id)
    _decide(submission, ReviewState.REJECTED, reason, email=None, email_index="")


MERGED_FIELDS = (
    "units",
    "packaging",
    "kind",
    "open_bar_minutes",
    "service_charge_pct",
    "conditions",
    "schedules",
)


@transaction.atomic
def submission_merge(*, submission_id: int, deal_id: int) -> Deal:
    """The submission is news of a price already listed: that price takes the sent amount and
    details and counts a check (verified now)."""
    submission = _lock_pending(PriceSubmission, submission_id)
    deal = Deal.objects.select_for_update().filter(pk=deal_id).first()
    if deal is None or deal.status == DealStatus.RETIRED:
        raise ReviewError(_("Preço não encontrado."))
    if not published_deals().filter(pk=deal.pk).exists():
        # suspended, or its bar closed: the sender would be told a hidden price is live
        raise ReviewError(_("Esse preço não está no ar; aprove o envio como um preço novo."))
    if deal.city_id != submission.city_id or deal.format_id != submission.format_id:
        raise ReviewError(_("Só dá para mesclar com um preço da mesma cidade e formato."))
    if not Deal.objects.filter(_same_beer(submission), pk=deal.pk).exists():
        raise ReviewError(_("Só dá para mesclar com um preço da mesma cerveja."))
    if submission.venue_id is not None and deal.venue_id != submission.venue_id:
        raise ReviewError(_("Só dá para mesclar com um preço do mesmo bar."))
    if submission.venue_id is None and deal.venue_id not in {
        v.pk for v in submission_twins(submission)
    }:
        raise ReviewError(_("Só dá para mesclar com um preço de um bar parecido com o novo."))
    payload = submission.payload
    seen_at = _verified_at(submission.city, payload)
    if deal.verified_at is not None and seen_at < deal.verified_at:
        # the price was checked after the sender saw it: its details would mix two offers
        raise ReviewError(
            _("Esse preço foi checado depois do que o envio viu; rejeite-o como desatualizado.")
        )
    changed = [name for name in MERGED_FIELDS if name in payload]
    for name in changed:
        setattr(deal, name, payload[name])
    if deal.kind != DealKind.OPEN_BAR and deal.open_bar_minutes is not None:
        deal.open_bar_minutes = None  # an open bar's minutes on a price that is not one
        changed = [*dict.fromkeys([*changed, "open_bar_minutes"])]
    for name, value in (
        ("couvert_cents", _cents_or_none(payload.get("couvert"))),
        ("valid_from", _date_or_none(payload.get("valid_from"))),
        ("valid_until", _date_or_none(payload.get("valid_until"))),
    ):
        if value is not None:
            setattr(deal, name, value)
            changed.append(name)
    if changed:
        deal.save(update_fields=changed)
    deal_record_check(
        deal=deal,
        source=CheckSource.SUBMISSION,
        price_cents=price_cents(payload["price"]),
        at=seen_at,
        credit=_credit(payload),
    )
    _decide(submission, ReviewState.MERGED, deal=deal)
    _notify_submission_later(submission, deal)
    datasets_schedule_export()
    return deal


def _send(*, to: str, template: str, context: dict) -> None:
    """One pt-BR e-mail, plain text and HTML, through Django's e-mail backend."""
    with translation.override("pt-br"):
        context = {"site_name": settings.SITE_NAME, "site_url": settings.SITE_URL, **context}
        subject = render_to_string(f"submissions/email/{template}_subject.txt", context).strip()
        text = render_to_string(f"submissions/email/{template}_body.txt", context)
        html = render_to_string(f"submissions/email/{template}_body.html", context)
    message = EmailMultiAlternatives(subject, text, settings.DEFAULT_FROM_EMAIL, [to])
    message.attach_alternative(html, "text/html")
    message.send()


def submission_notify_live(*, submission_id: int) -> bool:
    """Tell the sender the price is live, then delete the e-mail. The row stays locked while
    the message goes out, and the address is deleted in the same transaction, so concurrent or
    repeated tasks send once; a failed send keeps the address for the retry."""
    with transaction.atomic():
        submission = (
            PriceSubmission.objects.select_for_update()
            .filter(pk=submission_id, state__in=[ReviewState.APPROVED, ReviewState.MERGED])
            .first()
        )
        if submission is None or not submission.email or submission.deal_id is None:
            return False
        deal = Deal.objects.select_related("venue", "city", "format", "beer", "brand").get(
            pk=submission.deal_id
        )
        if not deal.city.active:  # withdrawn since it was queued: nothing is live to tell
            return False
        venue = deal.venue
        try:
            _send(
                to=submission.email,
                template="price_live",
                context={
                    "deal": deal,
                    "venue": venue,
                    "city": deal.city,
                    "serving": labels.serving_label(
                        fmt=deal.format, units=deal.units, packaging=deal.packaging, lang="pt-BR"
                    ),
                    "price": labels.money(deal.price_cents, "pt-BR"),
                    "url": render.venue_url(deal.city, venue, "pt-BR"),
                    "nickname": deal.credit,
                },
            )
        except Exception as exc:
            # Mail errors may quote the recipient: the log names only the row.
            raise NotificationNotSent(f"submission {submission_id}: {type(exc).__name__}") from None
        submission.email = None
        submission.email_index = ""
        submission.save(update_fields=["email", "email_index"])
    return True


# --- cities -----------------------------------------------------------------------------------


def city_activation_checklist(city: City) -> list[tuple[str, bool]]:
    """What a city needs before it goes live: its time zone, its centre, its bairros."""
    centre_ok = (
        BRAZIL_LAT[0] <= city.lat <= BRAZIL_LAT[1] and BRAZIL_LNG[0] <= city.lng <= BRAZIL_LNG[1]
    )
    hoods = Neighbourhood.objects.filter(city=city).exclude(boundary=None).count()
    return [
        (
            _("fuso horário (%(tz)s)") % {"tz": city.timezone},
            city.timezone in zoneinfo.available_timezones(),
        ),
        (_("centro no Brasil (%(lat)s, %(lng)s)") % {"lat": city.lat, "lng": city.lng}, centre_ok),
        (_("bairros com limite (%(n)d)") % {"n": hoods}, hoods > 0),
    ]


@transaction.atomic
def city_activate(*, city_id: int, request_id: int) -> int:
    """Put the city live and answer every pending request for the same (normalised) city
    name: each is approved and its sender told by e-mail. Refused until the checklist passes.
    Returns the number of requests answered."""
    city = City.objects.select_for_update().filter(pk=city_id).first()
    request = CityRequest.objects.filter(pk=request_id).first()
    if city is None or request is None:
        raise ReviewError(_("Cidade ou pedido não encontrado."))
    missing = [label for label, ok in city_activation_checklist(city) if not ok]
    if missing:
        raise ReviewError(
            _("A cidade ainda não está pronta: %(missing)s.") % {"missing": "; ".join(missing)}
        )
    if not city.active:
        city.active = True
        city.save(update_fields=["active"])
    asks = list(
        CityRequest.objects.select_for_update().filter(
            city_key=request.city_key, state=ReviewState.PENDING
        )
    )
    for ask in asks:
        _decide(ask, ReviewState.APPROVED, city.slug)
        if ask.email:
            from .tasks import city_request_notify_live

            pk = ask.pk
            transaction.on_commit(
                lambda pk=pk: city_request_notify_live.delay(pk, city.pk), robust=True
            )
    datasets_schedule_export()
    return len(asks)


@transaction.atomic
def city_request_reject(*, request_id: int, reason: str) -> None:
    if not reason.strip():
        raise ReviewError(_("Diga o motivo da recusa."))
    request = _lock_pending(CityRequest, request_id)
    _decide(request, ReviewState.REJECTED, reason, email=None, email_index="")


def city_request_notify_live(*, request_id: int, city_id: int) -> bool:
    """Tell who asked for the city that it is live, then delete the e-mail (as for prices)."""
    with transaction.atomic():
        request = (
            CityRequest.objects.select_for_update()
            .filter(pk=request_id, state=ReviewState.APPROVED)
            .first()
        )
        city = City.objects.filter(pk=city_id, active=True).first()
        if request is None or not request.email or city is None:
            return False
        try:
            _send(
                to=request.email,
                template="city_live",
                context={"city": city, "url": render.city_url(city, "pt-BR")},
            )
        except Exception as exc:
            raise NotificationNotSent(f"city request {request_id}: {type(exc).__name__}") from None
        request.email = None
        request.email_index = ""
        request.save(update_fields=["email", "email_index"])
    return True


# --- bar owners, reports, disputes ------------------------------------------------------------


@transaction.atomic
def bar_owner_message_resolve(*, message_id: int, note: str = "") -> None:
    message = _lock_pending(BarOwnerMessage, message_id)
    _decide(message, ReviewState.RESOLVED, note)


def _close(venue: Venue | None) -> Venue:
    if venue is None:
        raise ReviewError(_("Nenhum bar ligado a este item."))
    venue = Venue.objects.select_for_update().get(pk=venue.pk)
    venue_close(venue=venue)
    datasets_schedule_export()
    return venue


@transaction.atomic
def bar_owner_message_close_venue(*, message_id: int) -> Venue:
    """The owner says the bar closed: it and its prices leave the rankings."""
    message = _lock_pending(BarOwnerMessage, message_id)
    venue = _close(message.venue)
    _decide(message, ReviewState.RESOLVED, _("bar marcado como fechado"))
    return venue


@transaction.atomic
def report_resolve(*, report_id: int, note: str = "") -> None:
    report = _lock_pending(Report, report_id)
    _decide(report, ReviewState.RESOLVED, note)


@transaction.atomic
def report_dismiss(*, report_id: int, note: str = "") -> None:
    report = _lock_pending(Report, report_id)
    _decide(report, ReviewState.REJECTED, note)


@transaction.atomic
def report_close_venue(*, report_id: int) -> Venue:
    report = _lock_pending(Report, report_id)
    venue = _close(report.venue or (report.deal.venue if report.deal_id else None))
    _decide(report, ReviewState.RESOLVED, _("bar marcado como fechado"))
    return venue


@transaction.atomic
def report_hide_deal(*, report_id: int) -> Deal:
    """The reported price is wrong and nobody knows the right one: out of the rankings. The
    price is locked before its report, as deal_correct locks them: in the other order the two
    moderators' decisions deadlocked (a 500 for one of them)."""
    deal_id = Report.objects.filter(pk=report_id).values_list("deal_id", flat=True).first()
    deal = _lock_deal(deal_id) if deal_id is not None else None
    report = _lock_pending(Report, report_id)
    if deal is None:
        raise ReviewError(_("Nenhum preço ligado a este relato."))
    _close_disputes(deal, ReviewState.APPROVED)
    deal_set_standing(deal=deal, status=DealStatus.RETIRED)
    _decide(report, ReviewState.RESOLVED, _("preço retirado"))
    datasets_schedule_export()
    return deal


def _close_disputes(deal: Deal, state: str) -> int:
    return DealDispute.objects.filter(deal=deal, state=ReviewState.PENDING).update(
        state=state, reviewed_at=timezone.now()
    )


def _lock_deal(deal_id: int) -> Deal:
    deal = Deal.objects.select_for_update().filter(pk=deal_id).first()
    if deal is None:
        raise ReviewError(_("Preço não encontrado."))
    return deal


# A price whose disputes wait for a moderator's decision: disputed, out of the rankings, or
# with a dispute still open; never a retired one (its disputes were decided).
DISPUTES_WAITING = (
    Q(status__in=[DealStatus.DISPUTED, DealStatus.SUSPENDED]) | Q(open_disputes__gt=0)
) & ~Q(status=DealStatus.RETIRED)


def _lock_disputed(deal_id: int) -> Deal:
    """The price, locked, while its disputes wait for a decision: decided once (another
    moderator's decision, read under the lock, wins)."""
    deal = _lock_deal(deal_id)
    if not Deal.objects.filter(DISPUTES_WAITING, pk=deal.pk).exists():
        raise ReviewError(_("Este preço não tem contestações esperando decisão."))
    return deal


@transaction.atomic
def deal_disputes_dismiss(*, deal_id: int) -> Deal:
    """The disputes were wrong: the price is back in the rankings, its disputes closed."""
    deal = _lock_disputed(deal_id)
    _close_disputes(deal, ReviewState.REJECTED)
    deal_set_standing(deal=deal, status=DealStatus.PUBLISHED)
    datasets_schedule_export()
    return deal


@transaction.atomic
def deal_disputes_uphold(*, deal_id: int) -> Deal:
    """The disputes were right: the price is hidden (retired), its disputes closed."""
    deal = _lock_disputed(deal_id)
    _close_disputes(deal, ReviewState.APPROVED)
    deal_set_standing(deal=deal, status=DealStatus.RETIRED)
    datasets_schedule_export()
    return deal


@transaction.atomic
def deal_amount_set(*, deal_id: int, price_cents: int) -> Deal:
    """A moderator set a price's amount (its admin form): a moderator check at that amount,
    which restarts the confirmations; while its disputes wait, it decides them too, as the
    queue's "corrigir preço" does."""
    if Deal.objects.filter(DISPUTES_WAITING, pk=deal_id).exists():
        return deal_correct(deal_id=deal_id, price_cents=price_cents)
    deal = _lock_deal(deal_id)
    return deal_record_check(deal=deal, source=CheckSource.MODERATOR, price_cents=price_cents)


@transaction.atomic
def deal_correct(*, deal_id: int, price_cents: int, report_id: int | None = None) -> Deal:
    """The moderator knows the right amount: the price takes it with a moderator check and
    is back in the rankings (a linked report is resolved); its disputes are upheld, or
    dismissed when the amount stands (the price was right)."""
    if not 0 < price_cents <= PRICE_MAX_CENTS:
        raise ReviewError(_("Preço fora dos limites."))
    deal = _lock_deal(deal_id)
    if deal.status == DealStatus.RETIRED:
        raise ReviewError(_("Este preço foi retirado."))
    report = None
    if report_id is not None:
        report = _lock_pending(Report, report_id)
        if report.deal_id != deal.pk:
            raise ReviewError(_("Esse relato é sobre outro preço."))
    stands = price_cents == deal.price_cents
    _close_disputes(deal, ReviewState.REJECTED if stands else ReviewState.APPROVED)
    deal_set_standing(deal=deal, status=DealStatus.PUBLISHED)
    deal = deal_record_check(deal=deal, source=CheckSource.MODERATOR, price_cents=price_cents)
    if report is not None:
        _decide(report, ReviewState.RESOLVED, _("preço corrigido"))
    datasets_schedule_export()
    return deal
