"""The standing machine of a price (confirm, dispute) and the purge of private data."""

import datetime as dt

import pytest
from django.utils import timezone

from beers.errors import ApplicationError
from beers.models import Deal, PriceCheck
from beers.services import deal_record_check
from submissions import services
from submissions.models import (
    BarOwnerMessage,
    CityRequest,
    DealConfirmation,
    DealDispute,
    MenuPhoto,
    MenuPhotoUpload,
    PhotoState,
    PriceSubmission,
)

from .conftest import JsonClient

A, B, C, D = "a" * 64, "b" * 64, "c" * 64, "d" * 64


def reload(deal: Deal) -> Deal:
    return Deal.objects.get(pk=deal.pk)


@pytest.mark.django_db
def test_confirm_verifies_the_price_now_and_counts_one_confirmation(world):
    deal = world.fresh_deal(verified_at=timezone.now() - dt.timedelta(days=40))
    before = deal.verified_at
    assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "received"
    deal = reload(deal)
    assert deal.confirmations == 1
    assert deal.verified_at > before + dt.timedelta(days=39)
    check = PriceCheck.objects.filter(deal=deal).order_by("-checked_at").first()
    assert check.source == "confirmation" and check.price_cents == deal.price_cents
    assert DealConfirmation.objects.get(deal=deal).counted is True


@pytest.mark.django_db
def test_confirm_once_a_day_per_address_and_price(world):
    deal = world.fresh_deal()
    assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "received"
    assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "duplicate"
    assert services.deal_confirm(deal_id=deal.pk, address_hash=B) == "received"
    assert services.deal_confirm(deal_id=world.deal.pk, address_hash=A) == "received"
    assert reload(deal).confirmations == 2
    assert PriceCheck.objects.filter(deal=deal, source="confirmation").count() == 2


@pytest.mark.django_db
def test_the_day_is_the_city_local_day(world, monkeypatch):
    deal = world.fresh_deal()
    # 02:30 UTC on the 24th is still the 23rd in São Paulo (UTC-3).
    monkeypatch.setattr(timezone, "now", lambda: dt.datetime(2026, 11, 24, 2, 30, tzinfo=dt.UTC))
    services.deal_confirm(deal_id=deal.pk, address_hash=A)
    assert DealConfirmation.objects.get(deal=deal).day == dt.date(2026, 11, 23)
    monkeypatch.setattr(timezone, "now", lambda: dt.datetime(2026, 11, 24, 3, 30, tzinfo=dt.UTC))
    assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "received"


def next_day(monkeypatch, days: int = 1):
    later = timezone.now() + dt.timedelta(days=days)
    monkeypatch.setattr(timezone, "now", lambda: later)


@pytest.mark.django_db
def test_one_address_confirms_once_a_day_and_each_day_counts(world, monkeypatch):
    """Interface: confirm once a day per address and price; a confirm with no open disputes
    "counts as a verification; confirmations rise". The same address on three days reaches
    the confirmed label; a second confirm the same day is a duplicate."""
    deal = world.fresh_deal()
    assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "received"
    assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "duplicate"
    for days in (1, 2):
        next_day(monkeypatch, days)
        assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "received"
        assert services.deal_confirm(deal_id=deal.pk, address_hash=A) == "duplicate"
    deal = reload(deal)
    assert deal.confirmations == 3
    assert deal.verified_at > timezone.now() - dt.timedelta(minutes=1)  # verified today
    assert PriceCheck.objects.filter(deal=deal, source="confirmation").count() == 3
    # a new amount starts the count again
    next_day(monkeypatch, 3)
    deal_record_check(deal=reload(deal), source="moderator", price_cents=990)
    assert reload(deal).confirmations == 0
    next_day(monkeypatch, 4)
    services.deal_confirm(deal_id=deal.pk, address_hash=A)
    assert reload(deal).confirmations == 1


@pytest.mark.django_db
def test_one_address_disputes_once_a_day(world, monkeypatch):
    """Interface: dispute once a day per address and price; each day's dispute is one more
    open dispute (2 → disputed, 3 → out of the rankings), a second one the same day is a
    duplicate."""
    deal = world.fresh_deal()
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A) == "received"
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A, price=3) == "duplicate"
    assert (reload(deal).open_disputes, reload(deal).status) == (1, "published")
    next_day(monkeypatch, 1)
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A, price=3) == "received"
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A) == "duplicate"
    assert (reload(deal).open_disputes, reload(deal).status) == (2, "disputed")
    next_day(monkeypatch, 2)
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A) == "received"
    assert (reload(deal).open_disputes, reload(deal).status) == (3, "suspended")
    assert DealDispute.objects.filter(deal=deal).count() == 3


@pytest.mark.django_db
def test_disputes_mark_disputed_at_two_and_suspend_at_three(world):
    deal = world.fresh_deal()
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A, price=14.5) == "received"
    deal = reload(deal)
    assert (deal.open_disputes, deal.status) == (1, "published")
    services.deal_dispute(deal_id=deal.pk, address_hash=B)
    deal = reload(deal)
    assert (deal.open_disputes, deal.status) == (2, "disputed")
    services.deal_dispute(deal_id=deal.pk, address_hash=C)
    deal = reload(deal)
    assert (deal.open_disputes, deal.status) == (3, "suspended")
    assert DealDispute.objects.get(deal=deal, address_hash=A).price_cents == 1450
    # Out of the rankings: further confirms and disputes do not find it.
    with pytest.raises(ApplicationError) as exc:
        services.deal_dispute(deal_id=deal.pk, address_hash=D)
    assert exc.value.status == 404


@pytest.mark.django_db
def test_dispute_once_a_day_per_address(world):
    deal = world.fresh_deal()
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A) == "received"
    assert services.deal_dispute(deal_id=deal.pk, address_hash=A, price=3) == "duplicate"
    assert reload(deal).open_disputes == 1


@pytest.mark.django_db
def test_confirm_while_disputes_are_open_is_kept_but_changes_nothing(world):
    deal = world.fresh_deal()
    services.deal_dispute(deal_id=deal.pk, address_hash=A)
    services.deal_dispute(deal_id=deal.pk, address_hash=B)
    deal = reload(deal)
    assert deal.status == "disputed"
    checks = PriceCheck.objects.filter(deal=deal).count()
    assert services.deal_confirm(deal_id=deal.pk, address_hash=C) == "received"
    after = reload(deal)
    assert (after.confirmations, after.verified_at, after.status, after.open_disputes) == (
        deal.confirmations,
        deal.verified_at,
        "disputed",
        2,
    )
    assert PriceCheck.objects.filter(deal=deal).count() == checks
    assert DealConfirmation.objects.get(deal=deal).counted is False


@pytest.mark.django_db
def test_confirm_with_one_open_dispute_changes_nothing_either(world):
    deal = world.fresh_deal()
    services.deal_dispute(deal_id=deal.pk, address_hash=A)
    services.deal_confirm(deal_id=deal.pk, address_hash=B)
    assert reload(deal).confirmations == 0


@pytest.mark.django_db
def test_standing_through_the_api(world, writes_open):
    deal = world.fresh_deal()
    for i in range(3):
        client = JsonClient(f"198.51.100.{i + 1}")
        assert client.post(f"/api/v1/deals/{deal.pk}/confirm", {"turnstile": "t"}).json() == {
            "status": "received"
        }
        assert client.post(f"/api/v1/deals/{deal.pk}/confirm", {"turnstile": "t"}).json() == {
            "status": "duplicate"
        }
    assert reload(deal).confirmations == 3
    for i, status in enumerate(["published", "disputed", "suspended"]):
        client = JsonClient(f"198.51.100.{i + 1}")
        assert (
            client.post(
                f"/api/v1/deals/{deal.pk}/dispute", {"turnstile": "t", "price": 11}
            ).status_code
            == 202
        )
        assert reload(deal).status == status
    assert (
        JsonClient("198.51.100.9")
        .post(f"/api/v1/deals/{deal.pk}/confirm", {"turnstile": "t"})
        .status_code
        == 404
    )


@pytest.mark.parametrize(
    ("price", "cents"),
    [
        (0.01, 1),
        (0.001, 1),
        (12.345, 1235),
        (12.3449, 1234),
        (10000, 1_000_000),
        (9.9, 990),
    ],
)
def test_price_cents_rounds_half_up_and_never_to_zero(price, cents):
    assert services.price_cents(price) == cents


@pytest.mark.django_db
def test_contacts_purge_deletes_old_contacts_and_unread_photos(world, writes_open):
    old = timezone.now() - dt.timedelta(days=91)
    recent = timezone.now() - dt.timedelta(days=89)
    for created, n in ((old, 1), (recent, 2)):
        BarOwnerMessage.objects.create(
            address_hash=A,
            body_fingerprint=str(n),
            city=world.city,
            bar="Bar",
            topic="other",
            name="Zé",
            contact=f"ze{n}@example.com",
            contact_index="x",
            created_at=created,
        )
        upload = MenuPhotoUpload.objects.create(
            city=world.city,
            venue=world.venue,
            address_hash=A,
            body_fingerprint=str(n),
            contact="11999999999",
            created_at=created,
            state=PhotoState.AWAITING_OCR,
        )
        MenuPhoto.objects.create(upload=upload, position=0, jpeg=b"\xff\xd8", created_at=created)
    counts = services.contacts_purge()
    assert counts["bar_owner_contacts"] == 1 and counts["menu_photo_contacts"] == 1
    assert counts["menu_photos"] == 2  # a week is the most a photo waits
    assert sorted(BarOwnerMessage.objects.values_list("contact", flat=True), key=str) == [
        None,
        "ze2@example.com",
    ]
    assert BarOwnerMessage.objects.filter(name__isnull=True).count() == 1
    assert MenuPhotoUpload.objects.filter(contact__isnull=True).count() == 1
    assert set(MenuPhotoUpload.objects.values_list("state", flat=True)) == {"expired"}


def test_contacts_purge_is_scheduled_daily():
    from config.celery import app

    entry = app.conf.beat_schedule["contacts-purge"]
    assert entry["task"] == "submissions.tasks.contacts_purge"


def test_seconds_to_midnight_counts_real_seconds_across_a_clock_change(settings):
    from submissions.limits import seconds_to_midnight

    settings.TIME_ZONE = "America/New_York"  # clocks go back at 02:00 on 2026-11-01
    now = dt.datetime(2026, 11, 1, 4, 0, tzinfo=dt.UTC)  # 00:00 EDT
    assert seconds_to_midnight(now) == 25 * 3600
    settings.TIME_ZONE = "America/Sao_Paulo"
    assert seconds_to_midnight(dt.datetime(2026, 11, 24, 2, 0, tzinfo=dt.UTC)) == 3600
    # rounded up: waiting as long as told lands after midnight, not 0.47 s before it
    now = dt.datetime(2026, 11, 24, 2, 59, 58, 470000, tzinfo=dt.UTC)
    assert seconds_to_midnight(now) == 2


@pytest.mark.django_db
def test_contacts_purge_deletes_emails_no_notification_took_away(world):
    """The 'it's live' e-mail deletes the address once sent; when it never goes out (a relay
    refusing the address for good), the address goes 3 days after the decision, or 90 days
    after a price was sent when nobody reviewed it (it was kept for ever)."""
    now = timezone.now()
    rows = []
    for n, (state, decided_hours_ago) in enumerate(
        [("approved", 73), ("rejected", 73), ("merged", 73), ("approved", 71), ("pending", None)]
    ):
        reviewed = now - dt.timedelta(hours=decided_hours_ago) if decided_hours_ago else None
        rows.append(
            CityRequest.objects.create(
                address_hash=A,
                body_fingerprint=str(n),
                city=f"Cidade {n}",
                state=state,
                reviewed_at=reviewed,
                email=f"quem{n}@example.com",
                email_index="x",
            )
        )
    submission = PriceSubmission.objects.create(
        address_hash=A,
        body_fingerprint="s",
        city=world.city,
        format=world.deal.format,
        payload={},
        state="approved",
        reviewed_at=now - dt.timedelta(days=4),
        email="viu@example.com",
        email_index="x",
    )
    waiting = [
        PriceSubmission.objects.create(
            address_hash=A,
            body_fingerprint=f"w{days}",
            city=world.city,
            format=world.deal.format,
            payload={},
            created_at=now - dt.timedelta(days=days),
            email=f"espera{days}@example.com",
            email_index="x",
        )
        for days in (91, 89)
    ]
    counts = services.contacts_purge(now=now)
    assert counts["city_request_emails"] == 3 and counts["submission_emails"] == 2
    # unreviewed for 91 days: nobody will be told; 89 days: still waiting for a moderator
    assert [PriceSubmission.objects.get(pk=w.pk).email for w in waiting] == [
        None,
        "espera89@example.com",
    ]
    emails = {r.pk: CityRequest.objects.get(pk=r.pk).email for r in rows}
    assert [emails[r.pk] for r in rows] == [
        None,
        None,
        None,
        "quem3@example.com",  # decided 71 hours ago: the notification may still be retrying
        "quem4@example.com",  # pending
    ]
    submission.refresh_from_db()
    assert (submission.email, submission.email_index) == (None, "")


def test_a_body_fingerprint_is_keyed(settings):
    """The fingerprint stays after the purge deletes a bar owner's name: without the key,
    trying names against it must not work."""
    import hashlib
    import json

    body = {"city": "sao-paulo", "topic": "other", "name": "Mariana Oliveira", "turnstile": "t"}
    kept = json.dumps(
        {k: v for k, v in body.items() if k != "turnstile"},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    first = services.body_fingerprint(body)
    assert first != hashlib.sha256(kept.encode()).hexdigest()
    assert services.body_fingerprint({**body, "turnstile": "other"}) == first
    settings.ADDRESS_HASH_KEY = "another key"
    assert services.body_fingerprint(body) != first


@pytest.mark.django_db
def test_the_migration_forgets_the_plain_fingerprints_no_longer_compared(world):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("submissions.migrations.0004_forget_plain_fingerprints")
    decided = CityRequest.objects.create(
        address_hash=A, body_fingerprint="plain-1", city="Cidade", state="rejected"
    )
    waiting = CityRequest.objects.create(
        address_hash=A, body_fingerprint="plain-2", city="Cidade", state="pending"
    )
    migration.forget(apps, None)
    decided.refresh_from_db()
    waiting.refresh_from_db()
    assert (decided.body_fingerprint, waiting.body_fingerprint) == ("", "plain-2")
