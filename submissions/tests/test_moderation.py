"""The review queues driven through the real admin views, as a moderator (not a superuser),
with the effects read back through the public API."""

import datetime as dt

import pytest
from django.contrib.admin.models import LogEntry
from django.core import mail
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from beers.models import (
    CheckSource,
    City,
    Deal,
    DealStatus,
    Neighbourhood,
    PriceCheck,
    Venue,
)
from beers.services import deal_create, deal_record_check
from submissions.models import (
    BarOwnerMessage,
    CityRequest,
    DealConfirmation,
    DealDispute,
    PriceSubmission,
    Report,
    ReviewState,
)
from submissions.moderators import GROUP_NAME, moderator_create
from submissions.tests.conftest import JsonClient

pytestmark = pytest.mark.django_db

HOOD = {
    "type": "Polygon",
    "coordinates": [
        [[-46.70, -23.57], [-46.68, -23.57], [-46.68, -23.54], [-46.70, -23.54], [-46.70, -23.57]]
    ],
}


@pytest.fixture
def moderator(db):
    return moderator_create(username="ana", email="ana@example.org", password="Cerveja-gelada-42")


@pytest.fixture
def mod(moderator):
    client = Client()
    client.force_login(moderator)
    return client


@pytest.fixture
def hood(world):
    return Neighbourhood.objects.create(
        city=world.city, slug="vila-madalena", name="Vila Madalena", boundary=HOOD
    )


def submit(api, world, **overrides) -> PriceSubmission:
    body = {
        "city": "sao-paulo",
        "venue": {"id": world.venue.pk},
        "beer": "Brahma",
        "format_code": "garrafa_600",
        "price": 9.9,
        "turnstile": "t",
        **overrides,
    }
    response = api.post("/api/v1/submissions", body)
    assert response.status_code == 202, response.content
    return PriceSubmission.objects.order_by("-id").first()


def search(client, **params) -> list[dict]:
    cache.clear()  # one cache period later
    response = client.get("/api/v1/search", {"city": "sao-paulo", **params})
    assert response.status_code == 200, response.content
    return response.json()["deals"]


def review_url(sub) -> str:
    return reverse("admin:submissions_pricesubmission_review", args=[sub.pk])


def decide(mod, sub, **data):
    return mod.post(review_url(sub), data)


# --- the group ---------------------------------------------------------------------------------


def test_moderator_is_staff_in_the_group_with_no_delete_or_user_permissions(moderator, mod):
    assert moderator.is_staff and not moderator.is_superuser
    assert list(moderator.groups.values_list("name", flat=True)) == [GROUP_NAME]
    perms = moderator.get_all_permissions()
    assert "submissions.change_pricesubmission" in perms
    assert "beers.change_deal" in perms
    assert not [p for p in perms if ".delete_" in p]
    assert not [p for p in perms if p.startswith("auth.")]
    assert mod.get(reverse("admin:auth_user_changelist")).status_code == 403
    assert mod.get(reverse("admin:submissions_pricesubmission_changelist")).status_code == 200


def test_createmoderator_makes_a_staff_user_who_can_log_in(db, monkeypatch):
    monkeypatch.setenv("DJANGO_MODERATOR_PASSWORD", "Cerveja-gelada-42")
    call_command("createmoderator", "bia", "--email", "bia@example.org", "--noinput")
    client = Client()
    response = client.post(
        reverse("admin:login"),
        {"username": "bia", "password": "Cerveja-gelada-42", "next": "/admin/"},
    )
    assert response.status_code == 302
    assert client.get("/admin/submissions/pricesubmission/").status_code == 200
    # Run again: same user, still only in the group.
    call_command("createmoderator", "bia", "--noinput")
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username="bia")
    assert user.email == "bia@example.org" and user.groups.get().name == GROUP_NAME


def test_a_staff_user_outside_the_group_cannot_review(world, api, writes_open):
    from django.contrib.auth import get_user_model

    staff = get_user_model().objects.create_user("zé", password="x", is_staff=True)
    client = Client()
    client.force_login(staff)
    sub = submit(api, world)
    assert client.post(review_url(sub), {"decision": "approve"}).status_code == 403
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING


# --- the submissions queue --------------------------------------------------------------------


def test_queue_shows_price_per_litre_and_flags_a_price_far_from_the_median(
    mod, world, api, writes_open
):
    # The city's garrafa_600 prices: 12,90 (world) → median R$ 21,50/L.
    submit(api, world, price=12.5)
    submit(api, world, price=1.5)  # 2,50 /L: a typo, surely
    page = mod.get(reverse("admin:submissions_pricesubmission_changelist")).content.decode()
    assert "R$ 20,83/L" in page  # 12,50 / 0,6 L
    assert "0,97 × a mediana (R$ 21,50/L)" in page
    assert "⚠ 0,12 × a mediana (R$ 21,50/L)" in page
    assert page.count("⚠") == 1


def test_queue_filters_new_bar_owner_kind_and_age(mod, world, api, writes_open):
    listed = submit(api, world)
    new = submit(
        api,
        world,
        venue={
            "new": {"name": "Bar Novo", "lat": -23.6, "lng": -46.6, "kind": "bar", "on_site": True}
        },
        is_owner=True,
        kind="happy_hour",
        schedules=[{"days": [1, 2], "start": "17:00", "end": "19:00"}],
    )
    PriceSubmission.objects.filter(pk=listed.pk).update(
        created_at=timezone.now() - dt.timedelta(days=40)
    )
    url = reverse("admin:submissions_pricesubmission_changelist")

    def ids(**params):
        response = mod.get(url, params)
        assert response.status_code == 200
        return {row.pk for row in response.context["cl"].result_list}

    assert ids() == {listed.pk, new.pk}
    assert ids(new_bar="yes") == {new.pk}
    assert ids(new_bar="no") == {listed.pk}
    assert ids(owner="yes") == {new.pk}
    assert ids(kind="happy_hour") == {new.pk}
    assert ids(kind="regular") == {listed.pk}
    assert ids(age="7") == {new.pk}
    assert ids(age="old") == {listed.pk}
    assert ids(city__id__exact=world.other.pk) == set()


def test_approve_a_price_for_a_listed_bar(mod, moderator, world, api, writes_open):
    sub = submit(api, world, price=7.5, nickname="Cervejeiro", beer="Original")
    assert "Original" not in [d["beer"] for d in search(Client())]
    response = decide(mod, sub, decision="approve")
    assert response.status_code == 302
    sub.refresh_from_db()
    assert sub.state == ReviewState.APPROVED and sub.deal is not None
    deal = sub.deal
    assert (deal.venue_id, deal.price_cents, deal.credit) == (world.venue.pk, 750, "Cervejeiro")
    assert deal.checks.get().source == CheckSource.SUBMISSION
    deals = search(Client())
    assert deals[0]["beer"] == "Original" and deals[0]["price_brl"] == 7.5
    assert deals[0]["price_per_litre_brl"] == 12.5
    venue = Client().get(f"/api/v1/venues/{world.venue.pk}").json()
    assert 7.5 in [d["price_brl"] for d in venue["deals"]]
    entry = LogEntry.objects.get(object_id=str(sub.pk))
    assert entry.user == moderator and entry.is_change()
    assert "aprovado" in entry.get_change_message()


def test_an_earlier_observation_is_verified_and_first_seen_at_noon_of_its_day(
    mod, world, api, writes_open
):
    """datasets/README.md: a price's `created_at` is when it was first seen, its first check."""
    day = world.city.local_now().date() - dt.timedelta(days=12)
    sub = submit(api, world, price=7.5, observed_on=day.isoformat())
    decide(mod, sub, decision="approve")
    deal = Deal.objects.get(pk=PriceSubmission.objects.get(pk=sub.pk).deal_id)
    noon = dt.datetime.combine(day, dt.time(12), tzinfo=world.city.tz)
    assert deal.verified_at == deal.created_at == deal.checks.get().checked_at == noon


def test_a_nickname_is_credited_trimmed_and_spaces_alone_credit_nobody(
    mod, world, api, writes_open
):
    sub = submit(api, world, price=7.5, nickname="  Lu  ")
    decide(mod, sub, decision="approve")
    sub.refresh_from_db()
    assert sub.deal.credit == "Lu"
    sub = submit(api, world, price=8.5, nickname="   ", notes="outra")
    decide(mod, sub, decision="merge", deal=sub.deal_id or world.deal.pk)
    assert Deal.objects.get(pk=world.deal.pk).credit == ""


@pytest.mark.parametrize(
    ("nickname", "credit"),
    [
        ("\u200b\u200b", ""),  # zero-width spaces
        ("\u3164\u3164", ""),  # Hangul fillers
        ("\u2060\ufeff\u200e", ""),  # word joiner, BOM, direction mark
        ("\u200bLu\u00a0", "Lu"),
        ("Zé\u200dMaria", "Zé\u200dMaria"),  # a joiner between letters stays
        # a contact is never published (the bar's page printed an address)
        ("zq7@example.com", ""),
        ("Lu lu@bar.com.br", ""),
        ("+55 11 98765-4321", ""),
        ("(11) 9876-5432", ""),
        ("@lu_bebe", "@lu_bebe"),
        ("Lu 2024", "Lu 2024"),
    ],
)
def test_a_nickname_that_prints_as_nothing_credits_nobody(
    mod, world, api, writes_open, nickname, credit
):
    sub = submit(api, world, price=7.5, nickname=nickname)
    decide(mod, sub, decision="approve")
    sub.refresh_from_db()
    assert sub.deal.credit == credit


def test_approve_a_new_bar_places_it_in_its_bairro_with_schedules(
    mod, world, hood, api, writes_open
):
    sub = submit(
        api,
        world,
        venue={
            "new": {
                "name": "Empório da Vila",
                "lat": -23.555,
                "lng": -46.69,
                "kind": "bar",
                "on_site": True,
                "instagram": "emporio",
            }
        },
        kind="happy_hour",
        schedules=[{"days": [1, 2, 3], "start": "17:00", "end": "20:00"}],
        attributes=["musica_ao_vivo"],
    )
    assert decide(mod, sub, decision="approve", venue="new").status_code == 302
    venue = Venue.objects.get(name="Empório da Vila")
    assert venue.neighbourhood == hood and venue.attributes == ["musica_ao_vivo"]
    deal = Deal.objects.get(venue=venue)
    assert deal.kind == "happy_hour" and deal.schedules[0]["start"] == "17:00"
    answer = Client().get(f"/api/v1/venues/{venue.pk}").json()
    assert answer["venue"]["neighbourhood"] == "Vila Madalena"
    assert [d["kind"] for d in answer["deals"]] == ["happy_hour"]
    assert "Empório da Vila" in [d["venue"] for d in search(Client(), kind="happy_hour")]


def test_approved_body_with_integral_floats_and_underscores_is_served_and_exported(
    mod, world, hood, api, writes_open, tmp_path
):
    """JSON Schema integers may be written 1.0: they are stored as integers, so the schedule
    labels, the rankings and the export work; names with '_' give valid slugs; a couvert of
    R$ 0,004 is 0 cents (only a price is at least 1 cent)."""
    sub = submit(
        api,
        world,
        venue={
            "new": {
                "name": "Adega_do_Tião",
                "lat": -23.555,
                "lng": -46.69,
                "kind": "bar",
                "on_site": True,
            }
        },
        beer="Skol_Beats",
        units=2.0,
        couvert=0.004,
        kind="happy_hour",
        schedules=[{"days": [1.0, 2], "start": "17:00", "end": "20:00"}],
    )
    assert sub.payload["schedules"][0]["days"] == [1, 2]
    assert type(sub.payload["units"]) is int
    assert decide(mod, sub, decision="approve", venue="new").status_code == 302
    deal = Deal.objects.get(venue__name="Adega_do_Tião")
    assert (deal.venue.slug, deal.beer.slug) == ("adega-do-tiao", "skol-beats")
    assert deal.schedules[0]["days"] == [1, 2] and deal.units == 2 and deal.couvert_cents == 0
    assert "Adega_do_Tião" in [d["venue"] for d in search(Client(), kind="happy_hour")]
    from datasets.services import datasets_export

    datasets_export(directory=tmp_path, progress=False)
    assert b'"days":[1,2]' in (tmp_path / "sao-paulo" / "deals.json").read_bytes()


def test_a_new_bar_near_a_listed_one_with_a_similar_name_offers_the_listed_one(
    mod, world, api, writes_open
):
    # "Bar do Zé" is listed at (-23.55, -46.63); someone sends "Boteco do Ze" 40 m away.
    sub = submit(
        api,
        world,
        venue={
            "new": {
                "name": "Boteco do Ze",
                "lat": -23.5503,
                "lng": -46.6302,
                "kind": "boteco",
                "on_site": True,
            }
        },
    )
    page = mod.get(review_url(sub)).content.decode()
    assert "Já existe um bar parecido" in page and f'value="{world.venue.pk}"' in page
    # A careless approval without a choice creates nothing.
    response = decide(mod, sub, decision="approve")
    assert response.status_code == 302 and response.url == review_url(sub)
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING
    assert Venue.objects.filter(city=world.city).count() == 1
    # The offered bar is the default choice.
    decide(mod, sub, decision="approve", venue=str(world.venue.pk))
    assert Venue.objects.filter(city=world.city).count() == 1
    assert PriceSubmission.objects.get(pk=sub.pk).deal.venue == world.venue


def test_a_bar_listed_after_the_page_was_opened_is_offered_before_a_new_one(
    mod, world, api, writes_open
):
    """A page opened before the twin existed said "new" with no choice to make: the approval
    then listed the bar a second time (boteco-sequencial and boteco-sequencial-2)."""
    new = {"name": "Boteco Sequencial", "lat": -23.58, "lng": -46.66, "kind": "bar"}
    first = submit(api, world, venue={"new": {**new, "on_site": True}})
    page = mod.get(review_url(first)).content.decode()
    assert 'name="twins_seen" value=""' in page and "Já existe" not in page
    second = submit(api, world, venue={"new": {**new, "on_site": True}}, price=10.5)
    decide(mod, second, decision="approve", venue="new", twins_seen="")
    listed = Venue.objects.get(name="Boteco Sequencial")
    # The first page, sent as it was: the bar listed meanwhile is offered, nothing is created.
    response = decide(mod, first, decision="approve", venue="new", twins_seen="")
    assert response.status_code == 302 and response.url == review_url(first)
    assert PriceSubmission.objects.get(pk=first.pk).state == ReviewState.PENDING
    assert f'value="{listed.pk}"' in mod.get(review_url(first)).content.decode()
    # Having seen it, the moderator may still say it is another bar.
    decide(mod, first, decision="approve", venue="new", twins_seen=str(listed.pk))
    assert Venue.objects.filter(name="Boteco Sequencial").count() == 2


def test_a_far_away_bar_with_the_same_name_is_not_a_twin(mod, world, api, writes_open):
    sub = submit(
        api,
        world,
        venue={
            "new": {
                "name": "Bar do Zé",
                "lat": -23.60,
                "lng": -46.70,
                "kind": "bar",
                "on_site": True,
            }
        },
    )
    decide(mod, sub, decision="approve", venue="new")
    assert Venue.objects.filter(city=world.city, name="Bar do Zé").count() == 2


def test_a_price_far_from_the_median_needs_an_explicit_check(mod, world, api, writes_open):
    sub = submit(api, world, price=129.0)  # 10 × the median: a misplaced comma
    decide(mod, sub, decision="approve")
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING
    decide(mod, sub, decision="approve", confirm_outlier="1")
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.APPROVED


def test_reject_with_a_reason_deletes_the_email_and_changes_no_ranking(
    mod, moderator, world, api, writes_open
):
    sub = submit(api, world, price=5.0, email="quem@example.org", consent=True)
    before = search(Client())
    decide(mod, sub, decision="reject", reason="spam ou brincadeira")
    sub.refresh_from_db()
    assert (sub.state, sub.decision_note) == (ReviewState.REJECTED, "spam ou brincadeira")
    assert sub.email is None and sub.email_index == ""
    assert search(Client()) == before
    assert mail.outbox == []
    assert LogEntry.objects.get(object_id=str(sub.pk)).user == moderator


def test_a_reject_needs_a_reason(mod, world, api, writes_open):
    sub = submit(api, world)
    decide(mod, sub, decision="reject", reason=" ")
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING


def test_a_reason_chosen_is_taken_when_the_box_beside_it_holds_only_spaces(
    mod, world, api, writes_open
):
    sub = submit(api, world)
    decide(mod, sub, decision="reject", reason="repetido", reason_text="   ")
    sub.refresh_from_db()
    assert (sub.state, sub.decision_note) == (ReviewState.REJECTED, "repetido")
    typed = submit(api, world, price=6.0)
    decide(mod, typed, decision="reject", reason="repetido", reason_text=" foto de outro bar ")
    typed.refresh_from_db()
    assert typed.decision_note == "foto de outro bar"


def test_merge_updates_the_listed_price_and_counts_a_check(mod, world, api, writes_open):
    sub = submit(api, world, price=11.0, nickname="Lu")
    checks = world.deal.checks.count()
    page = mod.get(review_url(sub)).content.decode()
    assert f'name="deal" value="{world.deal.pk}"' in page
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    deal = Deal.objects.get(pk=world.deal.pk)
    assert deal.price_cents == 1100 and deal.credit == "Lu"
    assert deal.checks.count() == checks + 1
    sub.refresh_from_db()
    assert (sub.state, sub.deal_id) == (ReviewState.MERGED, deal.pk)
    prices = [d["price_brl"] for d in search(Client()) if d["venue"] == "Bar do Zé"]
    assert prices == [11.0]
    assert Deal.objects.filter(venue=world.venue).count() == 1


def test_the_credit_follows_the_amount(mod, world, api, writes_open):
    """A nickname is credited for the amount its sender saw: the same amount checked again
    keeps it, another amount without a nickname (a merge, a moderator's correction, a
    trusted menu) leaves the price uncredited, one with a nickname credits that one."""
    sub = submit(api, world, price=11.0, nickname="Lu")
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    sub = submit(api, world, price=11.0, notes="vi de novo")  # the same amount, no nickname
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    assert Deal.objects.get(pk=world.deal.pk).credit == "Lu"
    sub = submit(api, world, price=12.0, notes="subiu")  # another amount, no nickname
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.price_cents, deal.credit) == (1200, "")
    sub = submit(api, world, price=12.0, nickname="Bia", notes="confere")
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    assert Deal.objects.get(pk=world.deal.pk).credit == "Bia"
    deal_record_check(
        deal=Deal.objects.get(pk=world.deal.pk), source="menu_photo", price_cents=1350
    )
    assert Deal.objects.get(pk=world.deal.pk).credit == ""


def test_merge_keeps_open_bar_minutes_off_a_price_that_is_not_one(mod, world, api, writes_open):
    sub = submit(api, world, price=11.0, open_bar_minutes=60)
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.kind, deal.price_cents, deal.open_bar_minutes) == ("regular", 1100, None)


def test_merge_refuses_a_price_of_another_bar(mod, world, api, writes_open):
    sub = submit(api, world)
    decide(mod, sub, decision="merge", deal=str(world.other_deal.pk))
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING
    assert Deal.objects.get(pk=world.other_deal.pk).price_cents == 1500


def test_merge_only_into_a_live_price_since_the_sender_is_told_it_is_live(
    mod, world, api, writes_open
):
    sub = submit(api, world, price=9.9, email="quem@example.org", consent=True)
    Deal.objects.filter(pk=world.deal.pk).update(status=DealStatus.SUSPENDED)
    assert f'value="{world.deal.pk}"' not in mod.get(review_url(sub)).content.decode()
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING
    assert Deal.objects.get(pk=world.deal.pk).price_cents != 990
    assert mail.outbox == []
    # a bar closed since: the same
    Deal.objects.filter(pk=world.deal.pk).update(status=DealStatus.PUBLISHED)
    Venue.objects.filter(pk=world.venue.pk).update(status="closed")
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING


def test_an_observation_older_than_the_last_check_is_not_merged(mod, world, api, writes_open):
    """A price seen in 2020 would take today's place (and mix two offers' details)."""
    Deal.objects.filter(pk=world.deal.pk).update(verified_at=timezone.now())
    before = Deal.objects.get(pk=world.deal.pk)
    sub = submit(api, world, price=49.5, units=5, observed_on="2020-01-01")
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.verified_at, deal.price_cents, deal.units) == (
        before.verified_at,
        before.price_cents,
        before.units,
    )
    assert deal.checks.count() == before.checks.count()
    assert [d["venue"] for d in search(Client())].count("Bar do Zé") == 1


def test_an_older_check_joins_the_history_only(world):
    """deal_record_check: a check older than the last one moves neither the date nor the
    amount back."""
    deal = Deal.objects.get(pk=world.deal.pk)
    last = deal.verified_at
    deal_record_check(
        deal=deal, source=CheckSource.MODERATOR, price_cents=500, at=last - dt.timedelta(days=30)
    )
    deal.refresh_from_db()
    assert (deal.verified_at, deal.price_cents) == (last, 1290)
    assert deal.checks.filter(price_cents=500).exists()


def test_a_new_amount_starts_the_confirmations_again(mod, world, api, writes_open):
    Deal.objects.filter(pk=world.deal.pk).update(confirmations=3)
    sub = submit(api, world, price=world.deal.price_cents / 100)  # the same amount: kept
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    assert Deal.objects.get(pk=world.deal.pk).confirmations == 3
    sub = submit(api, world, price=9.9, nickname="outro")
    decide(mod, sub, decision="merge", deal=str(world.deal.pk))
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.price_cents, deal.confirmations) == (990, 0)


def test_a_decided_submission_cannot_be_decided_again(mod, world, api, writes_open):
    sub = submit(api, world)
    decide(mod, sub, decision="approve")
    decide(mod, sub, decision="approve")
    decide(mod, sub, decision="reject", reason="repetido")
    assert Deal.objects.filter(venue=world.venue).count() == 2
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.APPROVED


def test_bulk_approve_from_the_queue_skips_twins_and_outliers(mod, world, api, writes_open):
    plain = submit(api, world, price=10.0)
    outlier = submit(api, world, price=1.0)
    twin = submit(
        api,
        world,
        venue={
            "new": {
                "name": "Bar do Ze",
                "lat": -23.5501,
                "lng": -46.6301,
                "kind": "bar",
                "on_site": True,
            }
        },
    )
    response = mod.post(
        reverse("admin:submissions_pricesubmission_changelist"),
        {"action": "approve", "_selected_action": [plain.pk, outlier.pk, twin.pk]},
    )
    assert response.status_code == 302
    states = dict(PriceSubmission.objects.values_list("pk", "state"))
    assert states == {plain.pk: "approved", outlier.pk: "pending", twin.pk: "pending"}
    assert 10.0 in [d["price_brl"] for d in search(Client())]


def test_bulk_approve_leaves_a_price_its_bar_lists_for_its_review_page(
    mod, world, api, writes_open
):
    """An audit sent one price three times (two addresses, 4.5 and 4.500001) and bulk
    approval listed it three times at one bar: a report of a listed price may be an update,
    which only the review page offers (merge)."""
    twice = [
        submit(api, world, price=4.5),
        submit(JsonClient("203.0.113.8"), world, price=4.5),
        submit(api, world, price=4.500001),
    ]
    other = submit(api, world, beer="Heineken", price=12.0)
    response = mod.post(
        reverse("admin:submissions_pricesubmission_changelist"),
        {"action": "approve", "_selected_action": [s.pk for s in [*twice, other]]},
        follow=True,
    )
    states = dict(PriceSubmission.objects.values_list("pk", "state"))
    # The bar's price naming no beer (world.deal) is another price: the Heineken went live.
    assert states[other.pk] == "approved"
    assert sorted(states[s.pk] for s in twice) == ["approved", "pending", "pending"]
    rest = [s for s in twice if states[s.pk] == "pending"]
    brahma = Deal.objects.filter(venue=world.venue, beer__name="Brahma")
    assert brahma.count() == 1
    said = [str(m) for m in response.context["messages"]]
    assert sum(f"#{brahma.get().pk}" in m for m in said) == 2, said
    # Its review page still offers the merge, and approving it as another price works there.
    page = mod.get(review_url(rest[0]))
    assert brahma.get() in page.context["candidates"]
    # A price already listed before the action is left too.
    again = submit(api, world, price=4.6)
    mod.post(
        reverse("admin:submissions_pricesubmission_changelist"),
        {"action": "approve", "_selected_action": [again.pk]},
    )
    assert PriceSubmission.objects.get(pk=again.pk).state == "pending"
    assert brahma.count() == 1


# --- e-mail -----------------------------------------------------------------------------------


def test_approval_tells_the_sender_once_in_portuguese_and_deletes_the_email(
    mod, world, api, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    sub = submit(api, world, email="quem@example.org", consent=True, nickname="Lu")
    with django_capture_on_commit_callbacks(execute=True):
        decide(mod, sub, decision="approve")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["quem@example.org"]
    assert "já está no ar" in message.subject
    assert "Bar do Zé" in message.body and "R$ 9,90" in message.body
    assert "/sao-paulo/bar-do-ze" in message.body
    html, mime = message.alternatives[0]
    assert mime == "text/html" and "<strong>R$ 9,90</strong>" in html
    sub.refresh_from_db()
    assert sub.email is None and sub.email_index == ""
    # A repeated task finds nothing to send.
    from submissions.tasks import submission_notify_live

    assert submission_notify_live.apply(args=[sub.pk]).get() is False
    assert len(mail.outbox) == 1


def test_the_live_email_names_the_serving_and_the_price_as_the_site_does(
    mod, world, api, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """A bucket of 6 reads as the bar's page has it ("Balde com 6 × garrafa 600 ml"), not
    'Garrafa 600 ml × 6', and the price is the site's money ('R$ 59,90')."""
    sub = submit(
        api,
        world,
        email="quem@example.org",
        consent=True,
        price=59.9,
        units=6,
        packaging="balde",
        notes="balde",
    )
    with django_capture_on_commit_callbacks(execute=True):
        decide(mod, sub, decision="approve")
    (message,) = mail.outbox
    assert "Balde com 6 × garrafa 600 ml: R$ 59,90" in message.body, message.body
    html, _mime = message.alternatives[0]
    assert "Balde com 6 × garrafa 600 ml: <strong>R$ 59,90</strong>" in html


def test_a_failed_send_keeps_the_email_for_the_retry(world, api, writes_open, mod, monkeypatch):
    from submissions import review

    sub = submit(api, world, email="quem@example.org", consent=True)
    decide(mod, sub, decision="approve")

    def down(*args, **kwargs):
        raise ConnectionRefusedError("quem@example.org refused")

    monkeypatch.setattr("django.core.mail.EmailMultiAlternatives.send", down)
    with pytest.raises(review.NotificationNotSent) as caught:
        review.submission_notify_live(submission_id=sub.pk)
    assert "quem@example.org" not in str(caught.value)
    assert PriceSubmission.objects.get(pk=sub.pk).email == "quem@example.org"
    monkeypatch.undo()
    assert review.submission_notify_live(submission_id=sub.pk) is True
    assert len(mail.outbox) == 1
    assert PriceSubmission.objects.get(pk=sub.pk).email is None


def _mail_down(monkeypatch):
    def down(*args, **kwargs):
        raise ConnectionRefusedError("relay down")

    monkeypatch.setattr("django.core.mail.EmailMultiAlternatives.send", down)


def test_a_send_that_failed_past_its_retries_is_tried_again_every_hour(
    world, api, writes_open, mod, celery_eager, django_capture_on_commit_callbacks, monkeypatch
):
    """The relay is down through the task's own retries: the sender keeps their e-mail (the
    purge too, within NOTIFY_GRACE) and the hourly task tells them once the relay is back."""
    from submissions import review, services

    sub = submit(api, world, email="quem@example.org", consent=True)
    _mail_down(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        decide(mod, sub, decision="approve")  # the eager task gave up
    # still down an hour later: run eagerly, the task fails at once and nothing counts
    assert review.submissions_notify_due() == {"told": 0, "deleted": 0, "cities_told": 0}
    services.contacts_purge(now=timezone.now() + dt.timedelta(days=2))
    assert PriceSubmission.objects.get(pk=sub.pk).email == "quem@example.org"
    assert mail.outbox == []

    monkeypatch.undo()
    assert review.submissions_notify_due() == {"told": 1, "deleted": 0, "cities_told": 0}
    assert [m.to for m in mail.outbox] == [["quem@example.org"]]
    assert PriceSubmission.objects.get(pk=sub.pk).email is None
    assert review.submissions_notify_due() == {"told": 0, "deleted": 0, "cities_told": 0}
    assert len(mail.outbox) == 1


def test_a_price_approved_before_its_validity_begins_is_told_on_its_first_day(
    mod, world, api, writes_open, celery_eager, django_capture_on_commit_callbacks, monkeypatch
):
    """São Paulo (UTC-3): a price valid from the day after tomorrow is not live when approved;
    the sender keeps their e-mail (the daily purge too) until the hourly task tells them on
    that city-local day, once."""
    from submissions import review, services

    today = world.city.local_now().date()
    starts = today + dt.timedelta(days=2)
    sub = submit(api, world, email="quem@example.org", consent=True, valid_from=starts.isoformat())
    with django_capture_on_commit_callbacks(execute=True):
        decide(mod, sub, decision="approve")
    sub.refresh_from_db()
    assert sub.state == "approved" and sub.email == "quem@example.org"
    assert mail.outbox == []

    def at_local(day: dt.date, hour: int, minute: int) -> None:
        moment = dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=world.city.tz)
        monkeypatch.setattr(timezone, "now", lambda: moment.astimezone(dt.UTC))

    at_local(starts - dt.timedelta(days=1), 23, 59)  # the evening before, and long after review
    services.contacts_purge(now=timezone.now() + dt.timedelta(days=1))
    assert review.submissions_notify_due() == {"told": 0, "deleted": 0, "cities_told": 0}
    assert PriceSubmission.objects.get(pk=sub.pk).email == "quem@example.org"

    at_local(starts, 0, 1)
    assert review.submissions_notify_due() == {"told": 1, "deleted": 0, "cities_told": 0}
    assert [m.to for m in mail.outbox] == [["quem@example.org"]]
    assert "já está no ar" in mail.outbox[0].subject
    assert PriceSubmission.objects.get(pk=sub.pk).email is None
    assert review.submissions_notify_due() == {"told": 0, "deleted": 0, "cities_told": 0}
    assert len(mail.outbox) == 1


def test_a_waiting_price_retired_before_its_first_day_loses_the_email_untold(
    mod, world, api, writes_open, celery_eager
):
    from submissions import review

    starts = world.city.local_now().date() + dt.timedelta(days=3)
    sub = submit(api, world, email="quem@example.org", consent=True, valid_from=starts.isoformat())
    decide(mod, sub, decision="approve")
    sub.refresh_from_db()
    Deal.objects.filter(pk=sub.deal_id).update(status=DealStatus.RETIRED)
    assert review.submissions_notify_due() == {"told": 0, "deleted": 1, "cities_told": 0}
    assert PriceSubmission.objects.get(pk=sub.pk).email is None
    assert mail.outbox == []


def test_a_price_approved_in_a_city_off_the_site_is_told_once_the_city_is_on(
    mod, world, api, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """An audit: an administrator took the city off the site, a moderator approved a price
    there, and its sender was told "já aparece no site" with a link that answered 404. Now the
    moderator is warned, the sender keeps their e-mail and is told once the city is back."""
    from submissions import review

    sub = submit(api, world, email="quem@example.org", consent=True)
    City.objects.filter(pk=world.city.pk).update(active=False)
    with django_capture_on_commit_callbacks(execute=True):
        answer = mod.post(review_url(sub), {"decision": "approve"}, follow=True)
    sub.refresh_from_db()
    assert sub.state == "approved" and sub.email == "quem@example.org"
    assert mail.outbox == []
    warning = f"A cidade do preço #{sub.deal_id} não está ativa"
    assert any(warning in m for m in _messages(answer)), _messages(answer)
    assert review.submissions_notify_due() == {"told": 0, "deleted": 0, "cities_told": 0}
    # a task queued before the city went off finds nothing live to tell
    assert review.submission_notify_live(submission_id=sub.pk) is False
    assert PriceSubmission.objects.get(pk=sub.pk).email == "quem@example.org"

    City.objects.filter(pk=world.city.pk).update(active=True)
    assert review.submissions_notify_due() == {"told": 1, "deleted": 0, "cities_told": 0}
    assert [m.to for m in mail.outbox] == [["quem@example.org"]]
    assert PriceSubmission.objects.get(pk=sub.pk).email is None


def test_minutes_of_an_open_bar_stay_with_open_bars(mod, world, api, writes_open):
    """A regular price sent with `open_bar_minutes` went live with them in its answer
    (docs/decisions.md: null except on open bars); an open bar keeps its minutes."""
    regular = submit(api, world, open_bar_minutes=60)
    open_bar = submit(api, world, price=80.0, kind="open_bar", open_bar_minutes=120)
    for sub in (regular, open_bar):
        assert decide(mod, sub, decision="approve").status_code == 302
    ids = PriceSubmission.objects.filter(pk__in=[regular.pk, open_bar.pk]).values("deal_id")
    deals = Deal.objects.filter(pk__in=ids)
    assert dict(deals.values_list("kind", "open_bar_minutes")) == {"regular": None, "open_bar": 120}
    assert [d["open_bar_minutes"] for d in search(Client()) if d["price_brl"] == 9.9] == [None]
    assert [d["open_bar_minutes"] for d in search(Client(), kind="open_bar")] == [120]


# --- city requests ----------------------------------------------------------------------------


def ask_city(api, name, email=None, ip="203.0.113.9"):
    body = {"city": name, "turnstile": "t"}
    if email:
        body |= {"email": email, "consent": True}
    api.client.defaults["REMOTE_ADDR"] = ip
    assert api.post("/api/v1/city-requests", body).status_code == 202


def give_centro(city):
    """A bairro with a boundary: the last item of the activation checklist."""
    Neighbourhood.objects.create(
        city=city,
        slug="centro",
        name="Centro",
        boundary={
            "type": "Polygon",
            "coordinates": [
                [[-60.1, -3.2], [-59.9, -3.2], [-59.9, -3.0], [-60.1, -3.0], [-60.1, -3.2]]
            ],
        },
    )


def test_city_requests_are_grouped_by_normalised_name_and_activation_tells_everyone(
    mod, world, api, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    ask_city(api, "Manaus", "a@example.org", ip="203.0.113.1")
    ask_city(api, "  manaus ", "b@example.org", ip="203.0.113.2")
    ask_city(api, "MANAÚS", ip="203.0.113.3")
    ask_city(api, "Belém", "c@example.org", ip="203.0.113.4")
    listing = mod.get(reverse("admin:submissions_cityrequest_changelist"))
    rows = listing.context["cl"].result_list
    assert [(r.city_key, r.asks) for r in rows][:3] == [("manaus", 3)] * 3
    assert (rows[3].city_key, rows[3].asks) == ("belem", 1)
    assert b"c@example.org" not in listing.content

    assert Client().get("/api/v1/search", {"city": "manaus"}).status_code == 404
    ask = rows[0]
    url = reverse("admin:submissions_cityrequest_activate", args=[ask.pk])
    page = mod.get(url).content.decode()
    assert "Manaus" in page and "❌" in page  # no bairros yet: the checklist says so
    mod.post(url, {"city": world.inactive.pk})
    assert not world.inactive.__class__.objects.get(pk=world.inactive.pk).active
    assert CityRequest.objects.filter(state=ReviewState.PENDING).count() == 4

    give_centro(world.inactive)
    assert "❌" not in mod.get(url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = mod.post(url, {"city": world.inactive.pk})
    assert response.status_code == 302
    assert Client().get("/api/v1/search", {"city": "manaus"}).status_code == 200
    assert sorted(m.to[0] for m in mail.outbox) == ["a@example.org", "b@example.org"]
    assert all("Manaus" in m.subject and m.alternatives for m in mail.outbox)
    manaus = CityRequest.objects.filter(city_key="manaus")
    assert set(manaus.values_list("state", flat=True)) == {ReviewState.APPROVED}
    assert [r.email for r in manaus] == [None, None, None]
    assert CityRequest.objects.get(city_key="belem").email == "c@example.org"
    assert LogEntry.objects.filter(object_id=str(ask.pk)).exists()


def test_a_city_live_e_mail_that_failed_is_sent_by_the_hourly_task(
    mod, world, api, writes_open, celery_eager, django_capture_on_commit_callbacks, monkeypatch
):
    from submissions import review

    ask_city(api, "Manaus", "a@example.org")
    ask_city(api, "Belém", "c@example.org", ip="203.0.113.4")
    give_centro(world.inactive)
    ask = CityRequest.objects.get(city_key="manaus")
    url = reverse("admin:submissions_cityrequest_activate", args=[ask.pk])
    _mail_down(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        assert mod.post(url, {"city": world.inactive.pk}).status_code == 302
    assert CityRequest.objects.get(pk=ask.pk).email == "a@example.org"

    monkeypatch.undo()
    assert review.submissions_notify_due() == {"told": 0, "deleted": 0, "cities_told": 1}
    assert [m.to for m in mail.outbox] == [["a@example.org"]]  # not Belém, still pending
    assert CityRequest.objects.get(pk=ask.pk).email is None
    assert review.submissions_notify_due()["cities_told"] == 0


# --- bar owners, reports, disputes ------------------------------------------------------------


def owner_message(api, world, topic="removal"):
    body = {
        "city": "sao-paulo",
        "bar": "Bar do Zé",
        "venue": "bar-do-ze",
        "topic": topic,
        "contact": "11 99999-0000",
        "consent": True,
        "turnstile": "t",
    }
    assert api.post("/api/v1/bar-owners", body).status_code == 202
    return BarOwnerMessage.objects.order_by("-id").first()


def action(mod, model: str, name: str, ids: list[int], app: str = "submissions"):
    return mod.post(
        reverse(f"admin:{app}_{model}_changelist"),
        {"action": name, "_selected_action": ids},
    )


def test_bar_owner_says_the_bar_closed_and_its_prices_leave_the_rankings(
    mod, world, api, writes_open
):
    message = owner_message(api, world)
    assert "Bar do Zé" in [d["venue"] for d in search(Client())]
    assert action(mod, "barownermessage", "close_venue", [message.pk]).status_code == 302
    assert Venue.objects.get(pk=world.venue.pk).status == "closed"
    assert "Bar do Zé" not in [d["venue"] for d in search(Client())]
    assert Client().get(f"/api/v1/venues/{world.venue.pk}").json()["deals"] == []
    assert BarOwnerMessage.objects.get(pk=message.pk).state == ReviewState.RESOLVED


def test_bar_owner_message_resolved(mod, world, api, writes_open):
    message = owner_message(api, world, topic="sponsor")
    action(mod, "barownermessage", "resolve", [message.pk])
    assert BarOwnerMessage.objects.get(pk=message.pk).state == ReviewState.RESOLVED
    assert Venue.objects.get(pk=world.venue.pk).status == "open"


def report(api, **body):
    assert api.post("/api/v1/reports", {"turnstile": "t", **body}).status_code == 202
    return Report.objects.order_by("-id").first()


def test_reports_hide_a_price_close_a_bar_or_are_dismissed(mod, world, api, writes_open):
    wrong = report(api, deal=world.deal.pk, reason="wrong_price")
    closed = report(api, venue=world.other_venue.pk, reason="closed")
    silly = report(api, reason="other", message="cerveja quente")
    action(mod, "report", "hide_deal", [wrong.pk])
    assert Deal.objects.get(pk=world.deal.pk).status == DealStatus.RETIRED
    assert "Bar do Zé" not in [d["venue"] for d in search(Client())]
    action(mod, "report", "close_venue", [closed.pk])
    cache.clear()
    recife = Client().get("/api/v1/search", {"city": "recife"}).json()["deals"]
    assert recife == []
    action(mod, "report", "dismiss", [silly.pk])
    states = dict(Report.objects.values_list("pk", "state"))
    assert states == {wrong.pk: "resolved", closed.pk: "resolved", silly.pk: "rejected"}


def test_a_report_of_a_wrong_price_is_corrected(mod, world, api, writes_open):
    wrong = report(api, deal=world.deal.pk, reason="wrong_price")
    listing = mod.get(reverse("admin:submissions_report_changelist")).content.decode()
    url = reverse("admin:submissions_disputeddeal_correct", args=[world.deal.pk])
    assert f"{url}?report={wrong.pk}" in listing
    response = mod.post(f"{url}?report={wrong.pk}", {"price": "10,50", "report": wrong.pk})
    assert response.status_code == 302
    deal = Deal.objects.get(pk=world.deal.pk)
    assert deal.price_cents == 1050
    assert deal.checks.first().source == CheckSource.MODERATOR
    assert Report.objects.get(pk=wrong.pk).state == ReviewState.RESOLVED
    assert [d["price_brl"] for d in search(Client()) if d["venue"] == "Bar do Zé"] == [10.5]


def dispute_three_times(api, deal, price=None):
    for n in range(3):
        api.client.defaults["REMOTE_ADDR"] = f"198.51.100.{n + 1}"
        body = {"turnstile": "t"} | ({"price": price} if price else {})
        assert api.post(f"/api/v1/deals/{deal.pk}/dispute", body).status_code == 202


@pytest.mark.parametrize(
    ("name", "status", "ranked"),
    [("dismiss", DealStatus.PUBLISHED, True), ("uphold", DealStatus.RETIRED, False)],
)
def test_disputed_prices_are_put_back_or_hidden(mod, world, api, writes_open, name, status, ranked):
    dispute_three_times(api, world.deal)
    assert Deal.objects.get(pk=world.deal.pk).status == DealStatus.SUSPENDED
    assert "Bar do Zé" not in [d["venue"] for d in search(Client())]
    listing = mod.get(reverse("admin:submissions_disputeddeal_changelist"))
    assert [d.pk for d in listing.context["cl"].result_list] == [world.deal.pk]
    action(mod, "disputeddeal", name, [world.deal.pk])
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.status, deal.open_disputes) == (status, 0)
    assert ("Bar do Zé" in [d["venue"] for d in search(Client())]) is ranked
    closed = {ReviewState.REJECTED if ranked else ReviewState.APPROVED}
    assert set(DealDispute.objects.values_list("state", flat=True)) == closed
    assert LogEntry.objects.filter(object_id=str(world.deal.pk)).count() == 1


def test_a_disputed_price_is_corrected_to_the_suggested_amount(mod, world, api, writes_open):
    dispute_three_times(api, world.deal, price=14.0)
    page = mod.get(reverse("admin:submissions_disputeddeal_changelist")).content.decode()
    assert "R$ 14,00" in page
    url = reverse("admin:submissions_disputeddeal_correct", args=[world.deal.pk])
    mod.post(url, {"price": "14"})
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.status, deal.price_cents, deal.open_disputes) == ("published", 1400, 0)
    assert [d["price_brl"] for d in search(Client()) if d["venue"] == "Bar do Zé"] == [14.0]


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("-1", "Preço inválido"),
        ("0", "Preço inválido"),
        ("inf", "Preço inválido"),
        ("nan", "Preço inválido"),
        ("1e400", "Preço inválido"),
        ("1e3", "Preço inválido"),  # was R$ 1.000,00
        ("12.", "Preço inválido"),
        ("10000,01", "fora dos limites"),
        ("abc", "Preço inválido"),
        # more than cents: "9,999" was saved as R$ 10,00, and "1.500" (R$ 1.500 to a
        # Brazilian) as R$ 1,50
        ("9,999", "Preço inválido"),
        ("1.500", "Preço inválido"),
        ("1,500.00", "Preço inválido"),
    ],
)
def test_a_correction_takes_only_an_amount_above_zero(mod, world, api, writes_open, typed, words):
    """'-1' was published as R$ 0,01, and 'inf' or '1e400' answered 500."""
    dispute_three_times(api, world.deal, price=14.0)
    url = reverse("admin:submissions_disputeddeal_correct", args=[world.deal.pk])
    answer = mod.post(url, {"price": typed}, follow=True)
    assert answer.status_code == 200 and words in answer.content.decode()
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.status, deal.price_cents) == ("suspended", 1290)
    mod.post(url, {"price": "10000,00"})
    assert Deal.objects.get(pk=world.deal.pk).price_cents == 1_000_000


@pytest.mark.parametrize(
    ("typed", "cents"),
    [("13,5", 1350), ("13.50", 1350), ("R$ 13,50", 1350), ("1.234,56", 123456), ("14", 1400)],
)
def test_a_correction_reads_reais_as_people_write_them(mod, world, api, writes_open, typed, cents):
    dispute_three_times(api, world.deal, price=14.0)
    url = reverse("admin:submissions_disputeddeal_correct", args=[world.deal.pk])
    mod.post(url, {"price": typed})
    assert Deal.objects.get(pk=world.deal.pk).price_cents == cents


# --- the datasets -----------------------------------------------------------------------------


def test_every_decision_asks_for_a_fresh_export(
    mod, world, api, writes_open, monkeypatch, django_capture_on_commit_callbacks
):
    from datasets import tasks

    calls = []
    monkeypatch.setattr(
        tasks.datasets_export_if_changed, "apply_async", lambda **kw: calls.append(kw)
    )
    sub = submit(api, world)
    with django_capture_on_commit_callbacks(execute=True):
        decide(mod, sub, decision="approve")
    assert calls == [{"kwargs": {"force": True}, "countdown": 30}]


def test_an_approved_price_is_in_the_next_export(mod, world, api, writes_open, settings):
    import json

    from datasets.services import datasets_export_if_changed

    sub = submit(api, world, price=8.0)
    decide(mod, sub, decision="approve")
    deal = PriceSubmission.objects.get(pk=sub.pk).deal
    datasets_export_if_changed(force=True)
    current = json.loads((settings.DATASETS_ROOT / "current.json").read_text())
    deals = json.loads(
        (settings.DATASETS_ROOT / current["generation"] / "sao-paulo" / "deals.json").read_text()
    )
    assert deal.pk in [item["id"] for item in deals["items"]]


def test_moderator_can_still_record_checks_on_prices(mod, world):
    deal = deal_create(venue=world.venue, format=world.format, price_cents=1000)
    mod.post(
        reverse("admin:beers_deal_changelist"),
        {"action": "record_check", "_selected_action": [deal.pk]},
    )
    assert PriceCheck.objects.filter(deal=deal, source=CheckSource.MODERATOR).exists()


# --- a real SMTP server on loopback ------------------------------------------------------------


class Inbox:
    """aiosmtpd handler: keeps every message it is given."""

    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        self.messages.append((envelope.rcpt_tos, envelope.content))
        return "250 OK"


@pytest.fixture
def smtp_server(settings):
    import socket

    from aiosmtpd.controller import Controller

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS, settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD = False, "", ""
    yield inbox
    controller.stop()


def test_the_live_email_goes_through_a_real_smtp_server_once(
    mod, world, api, writes_open, smtp_server, celery_eager, django_capture_on_commit_callbacks
):
    import email

    sub = submit(api, world, email="quem@example.org", consent=True)
    with django_capture_on_commit_callbacks(execute=True):
        decide(mod, sub, decision="approve")
    assert len(smtp_server.messages) == 1
    rcpt, raw = smtp_server.messages[0]
    assert rcpt == ["quem@example.org"]
    message = email.message_from_bytes(raw)
    assert message.get_content_type() == "multipart/alternative"
    parts = {
        p.get_content_type(): p.get_payload(decode=True).decode()
        for p in message.walk()
        if not p.is_multipart()
    }
    assert "R$ 9,90" in parts["text/plain"] and "<strong>R$ 9,90</strong>" in parts["text/html"]
    assert PriceSubmission.objects.get(pk=sub.pk).email is None
    from submissions.tasks import submission_notify_live

    submission_notify_live.apply(args=[sub.pk])
    assert len(smtp_server.messages) == 1


def test_a_moderator_activates_a_city_only_through_its_activation(mod, world):
    url = reverse("admin:beers_city_change", args=[world.inactive.pk])
    page = mod.get(url)
    assert page.status_code == 200
    assert 'name="active"' not in page.content.decode()
    response = mod.post(
        url,
        {
            "name": "Manaus (AM)",
            "state": "AM",
            "timezone": "America/Manaus",
            "lat": "-3.1",
            "lng": "-60.0",
            "active": "on",
        },
    )
    assert response.status_code == 302  # saved…
    city = type(world.inactive).objects.get(pk=world.inactive.pk)
    assert city.name == "Manaus (AM)" and not city.active  # …but not switched on


def test_city_requests_refused_lose_their_email(mod, world, api, writes_open):
    ask_city(api, "Atlântida", "a@example.org")
    ask = CityRequest.objects.get()
    response = action(mod, "cityrequest", "reject_as_unwanted", [ask.pk])
    assert response.status_code == 302
    ask.refresh_from_db()
    assert (ask.state, ask.email, ask.email_index) == (ReviewState.REJECTED, None, "")
    assert mail.outbox == []
    assert LogEntry.objects.get(object_id=str(ask.pk)).change_message == "recusado"


def test_a_report_resolved_changes_no_price(mod, world, api, writes_open):
    wrong = report(api, deal=world.deal.pk, reason="wrong_beer")
    action(mod, "report", "resolve", [wrong.pk])
    assert Report.objects.get(pk=wrong.pk).state == ReviewState.RESOLVED
    assert Deal.objects.get(pk=world.deal.pk).status == DealStatus.PUBLISHED
    assert "Bar do Zé" in [d["venue"] for d in search(Client())]


def test_the_disputed_queue_loads_suggested_prices_for_the_whole_page_at_once(mod):

    from beers.tests.factories import DealFactory

    def disputed_deal(n: int) -> Deal:
        deal = DealFactory(status=DealStatus.DISPUTED, open_disputes=2)
        for i, cents in enumerate((1000 + n, 1100 + n)):
            DealDispute.objects.create(
                deal=deal, address_hash=f"a{n}-{i}", day=dt.date(2026, 11, 23), price_cents=cents
            )
        return deal

    url = reverse("admin:submissions_disputeddeal_changelist")

    def queries_for_listing() -> tuple[int, str]:
        with CaptureQueriesContext(connection) as captured:
            page = mod.get(url)
        assert page.status_code == 200
        return len(captured), page.content.decode()

    disputed_deal(1)
    disputed_deal(2)
    few, page = queries_for_listing()
    assert "R$ 10,01, R$ 11,01" in page  # each row its own suggestions, oldest first
    for n in range(3, 7):
        disputed_deal(n)
    many, page = queries_for_listing()
    assert "R$ 10,06, R$ 11,06" in page
    assert many == few


def test_migration_gives_older_payloads_their_integers(world, api, writes_open):
    import importlib

    from django.apps import apps

    sub = submit(api, world, schedules=[{"days": [1, 2], "start": "17:00", "end": "20:00"}])
    older = {
        **sub.payload,
        "units": 2.0,
        "schedules": [{**sub.payload["schedules"][0], "days": [1.0, 2]}],
    }
    PriceSubmission.objects.filter(pk=sub.pk).update(payload=older)  # as stored before
    migration = importlib.import_module("submissions.migrations.0003_canonical_payloads")
    migration.canonical_payloads(apps, None)
    sub.refresh_from_db()
    assert sub.payload["schedules"][0]["days"] == [1, 2] and type(sub.payload["units"]) is int
    assert all(type(d) is int for d in sub.payload["schedules"][0]["days"])


# --- decided once, through the queue (a moderation review) -------------------------------------


@pytest.mark.parametrize(
    "overrides", [{"observed_on": "OLD"}, {"valid_until": "PAST", "kind": "promo"}]
)
def test_a_price_approved_out_of_the_rankings_sends_no_live_email(
    mod, world, api, writes_open, mailoutbox, django_capture_on_commit_callbacks, overrides
):
    """interface.md: the sender is told when the price goes live. An observation too old to
    rank, or a promo already over, is kept (datasets, index) but is not live."""
    today = timezone.localdate(timezone=world.city.tz)
    values = {"OLD": str(today - dt.timedelta(days=200)), "PAST": str(today - dt.timedelta(3))}
    body = {k: values.get(v, v) for k, v in overrides.items()}
    sub = submit(api, world, email="viu@example.com", consent=True, **body)
    with django_capture_on_commit_callbacks(execute=True):
        assert decide(mod, sub, decision="approve").status_code == 302
    sub.refresh_from_db()
    assert sub.state == ReviewState.APPROVED and sub.email is None
    assert mailoutbox == []


def test_a_price_standing_is_not_edited_by_hand(mod, world, api, writes_open):
    """The standing moves through the disputes queue: the price form shows it, read-only."""
    dispute_three_times(api, world.deal)
    url = reverse("admin:beers_deal_change", args=[world.deal.pk])
    form = mod.get(url).context["adminform"].form
    assert "status" not in form.fields
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.status, deal.open_disputes) == (DealStatus.SUSPENDED, 3)


def post_price_form(mod, deal, **changes):
    """The prices admin's form of `deal` as it is shown, posted back with `changes`."""
    url = reverse("admin:beers_deal_change", args=[deal.pk])
    data = mod.get(url).context["adminform"].form.initial
    post = {k: ("" if v is None else v) for k, v in data.items() if k != "schedules"}
    post |= {"schedules": "[]", **changes}
    post |= {f"checks-{k}": 0 for k in ("TOTAL_FORMS", "INITIAL_FORMS", "MAX_NUM_FORMS")}
    return mod.post(url, post)


def test_correcting_a_disputed_price_in_its_form_decides_its_disputes(mod, world, api, writes_open):
    dispute_three_times(api, world.deal)
    response = post_price_form(mod, world.deal, price_cents=1234)
    assert response.status_code == 302, response.context["adminform"].form.errors
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.status, deal.price_cents, deal.open_disputes) == ("published", 1234, 0)
    assert set(DealDispute.objects.values_list("state", flat=True)) == {ReviewState.APPROVED}


def test_a_correction_at_the_same_amount_dismisses_the_disputes(mod, world, api, writes_open):
    """The moderator checked and the amount stands: the disputes were wrong."""
    dispute_three_times(api, world.deal, price=14.0)
    same = Deal.objects.get(pk=world.deal.pk).price_cents
    url = reverse("admin:submissions_disputeddeal_correct", args=[world.deal.pk])
    mod.post(url, {"price": f"{same // 100},{same % 100:02d}"})
    deal = Deal.objects.get(pk=world.deal.pk)
    assert (deal.status, deal.price_cents, deal.open_disputes) == ("published", same, 0)
    assert set(DealDispute.objects.values_list("state", flat=True)) == {ReviewState.REJECTED}


def test_record_check_leaves_disputed_prices_to_the_queue_and_is_logged(
    mod, world, api, writes_open
):
    dispute_three_times(api, world.deal)
    fine = deal_create(venue=world.venue, format=world.format, price_cents=1000)
    before = Deal.objects.get(pk=world.deal.pk).verified_at
    action(mod, "deal", "record_check", [world.deal.pk, fine.pk], app="beers")
    assert Deal.objects.get(pk=world.deal.pk).verified_at == before
    assert PriceCheck.objects.filter(deal=fine, source=CheckSource.MODERATOR).exists()
    assert LogEntry.objects.filter(object_id=str(fine.pk)).count() == 1


def test_record_check_needs_the_right_to_change_prices(world):
    from django.contrib.auth.models import Permission, User

    viewer = User.objects.create_user("vera", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_deal"))
    client = Client()
    client.force_login(viewer)
    deal = deal_create(venue=world.venue, format=world.format, price_cents=1000)
    client.post(
        reverse("admin:beers_deal_changelist"),
        {"action": "record_check", "_selected_action": [deal.pk]},
    )
    assert not PriceCheck.objects.filter(deal=deal, source=CheckSource.MODERATOR).exists()


def test_dispute_decisions_are_made_once(world, api, writes_open):
    from submissions import review

    dispute_three_times(api, world.deal)
    review.deal_disputes_dismiss(deal_id=world.deal.pk)
    with pytest.raises(review.ReviewError):  # a second moderator, a moment later
        review.deal_disputes_uphold(deal_id=world.deal.pk)
    assert Deal.objects.get(pk=world.deal.pk).status == DealStatus.PUBLISHED
    fresh = deal_create(venue=world.venue, format=world.format, price_cents=1000)
    with pytest.raises(review.ReviewError):  # never disputed
        review.deal_disputes_uphold(deal_id=fresh.pk)


def test_a_correction_resolves_only_a_report_about_that_price(world, api, writes_open):
    from submissions import review

    other = deal_create(venue=world.venue, format=world.format, price_cents=1000)
    about_other = report(api, deal=other.pk, reason="wrong_price")
    with pytest.raises(review.ReviewError):
        review.deal_correct(deal_id=world.deal.pk, price_cents=1200, report_id=about_other.pk)
    assert Report.objects.get(pk=about_other.pk).state == ReviewState.PENDING
    assert Deal.objects.get(pk=world.deal.pk).price_cents != 1200


def test_an_amount_out_of_bounds_in_the_price_form_is_a_form_error(mod, world, api, writes_open):
    dispute_three_times(api, world.deal)
    response = post_price_form(mod, world.deal, price_cents=0)
    assert response.status_code == 200
    assert "price_cents" in response.context["adminform"].form.errors
    assert Deal.objects.get(pk=world.deal.pk).status == DealStatus.SUSPENDED


@pytest.mark.parametrize(
    ("link", "clickable"),
    [
        ("https://instagram.com/p/abc", True),
        ("HTTP://example.org/menu", True),
        ("javascript:alert(document.cookie)", False),
        ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", False),
    ],
)
def test_the_sender_link_is_clickable_only_when_it_is_a_web_address(
    mod, world, api, writes_open, link, clickable
):
    """Any URI is a valid `link` (interface.md), but only http(s) becomes an `href` in the
    admin: a `javascript:` one would run in the moderator's session."""
    page = mod.get(review_url(submit(api, world, link=link))).content.decode()
    assert (f'href="{escape(link)}"' in page) is clickable
    assert escape(link) in page  # shown either way, as text


def test_merge_offers_and_takes_only_prices_of_the_beer_sent(mod, world, api, writes_open):
    """A Heineken at the bar is no news of its Brahma Chopp (an audit merged R$ 25,00 sent
    for a Heineken into a Stella Artois, credited to the Heineken's sender); a price that
    names no beer may be the one sent."""
    from beers.models import Beer, Brand
    from submissions import review

    brahma = Brand.objects.create(slug="brahma", name="Brahma")
    chopp = Beer.objects.create(slug="brahma-chopp", name="Brahma Chopp", brand=brahma)
    heineken = Brand.objects.create(slug="heineken", name="Heineken")
    Beer.objects.create(slug="heineken", name="Heineken", brand=heineken)
    other = world.fresh_deal(beer=chopp, brand=brahma)
    sub = submit(api, world, beer="Heineken", price=11.0)
    assert review.submission_merge_candidates(sub) == [world.deal]  # names no beer
    assert f'name="deal" value="{other.pk}"' not in mod.get(review_url(sub)).content.decode()
    with pytest.raises(review.ReviewError, match="mesma cerveja"):
        review.submission_merge(submission_id=sub.pk, deal_id=other.pk)
    assert Deal.objects.get(pk=other.pk).price_cents == other.price_cents
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.PENDING
    # the beer, as a sender writes it, or its brand alone: offered
    for name in ("  brahma CHOPP ", "Brahma"):
        sent = submit(api, world, beer=name, price=11.0, notes=name)
        assert set(review.submission_merge_candidates(sent)) == {world.deal, other}


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def test_a_decision_on_an_item_decided_since_says_so(mod, world, api, writes_open):
    """A second tab, another moderator: the decision is refused with a word, not a page that
    silently shows nothing (review page, the list's bulk approval, the disputes queue)."""
    from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

    from beers.tests.factories import DealFactory

    sub = submit(api, world, price=11.0)
    decide(mod, sub, decision="reject", reason="spam")
    again = mod.post(review_url(sub), {"decision": "approve"}, follow=True)
    assert any("já foi decidido" in m for m in _messages(again))
    assert PriceSubmission.objects.get(pk=sub.pk).state == ReviewState.REJECTED
    listing = reverse("admin:submissions_pricesubmission_changelist")
    bulk = mod.post(listing, {"action": "approve", ACTION_CHECKBOX_NAME: [sub.pk]}, follow=True)
    assert any(f"#{sub.pk}: Este item já foi decidido" in m for m in _messages(bulk))

    deal = DealFactory(status=DealStatus.DISPUTED, open_disputes=2)
    queue = reverse("admin:submissions_disputeddeal_changelist")
    first = mod.post(queue, {"action": "dismiss", ACTION_CHECKBOX_NAME: [deal.pk]}, follow=True)
    assert not any("já foram decididas" in m for m in _messages(first))
    assert Deal.objects.get(pk=deal.pk).status == DealStatus.PUBLISHED
    for action in ("dismiss", "uphold"):
        late = mod.post(queue, {"action": action, ACTION_CHECKBOX_NAME: [deal.pk]}, follow=True)
        assert f"#{deal.pk}: as contestações deste preço já foram decididas." in _messages(late)
    assert Deal.objects.get(pk=deal.pk).status == DealStatus.PUBLISHED


def test_approving_a_price_seen_too_long_ago_to_rank_warns_the_moderator(
    mod, world, api, writes_open
):
    """Seen 240 days ago: it enters the open data with its age but no ranking, so its sender
    is never told; the moderator is (an audit found the approval said only "aprovado")."""
    seen = timezone.localdate() - dt.timedelta(days=240)
    old = submit(api, world, price=11.0, observed_on=seen.isoformat())
    answer = mod.post(review_url(old), {"decision": "approve"}, follow=True)
    deal = PriceSubmission.objects.get(pk=old.pk).deal
    assert f"O preço #{deal.pk} está nos dados abertos, mas não entra no ranking" in " ".join(
        _messages(answer)
    )
    recent = submit(api, world, price=12.0, notes="hoje")
    answer = mod.post(review_url(recent), {"decision": "approve"}, follow=True)
    assert not any("não entra no ranking" in m for m in _messages(answer))
    # the list's bulk approval says it too
    from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

    bulk = submit(
        api, world, beer="Original", price=13.0, observed_on=seen.isoformat(), notes="lista"
    )
    answer = mod.post(
        reverse("admin:submissions_pricesubmission_changelist"),
        {"action": "approve", ACTION_CHECKBOX_NAME: [bulk.pk]},
        follow=True,
    )
    deal = PriceSubmission.objects.get(pk=bulk.pk).deal
    assert any(f"#{deal.pk} está nos dados abertos" in m for m in _messages(answer))


@pytest.mark.parametrize(
    ("changelist", "make"),
    [
        ("admin:submissions_dealconfirmation_changelist", "confirmation"),
        ("admin:submissions_dealdispute_changelist", "dispute"),
        ("admin:submissions_report_changelist", "report"),
    ],
)
def test_lists_naming_prices_cost_the_same_queries_for_1_or_12_rows(mod, world, changelist, make):
    """Each row names its price ('bar · format code · amount'): the bar and the format come
    with the rows, never a query per row."""

    def add(n: int) -> None:
        for i in range(n):
            deal = deal_create(venue=world.venue, format=world.format, price_cents=1000 + i)
            if make == "confirmation":
                DealConfirmation.objects.create(
                    deal=deal, address_hash=f"h{i}", day=dt.date(2026, 12, 1)
                )
            elif make == "dispute":
                DealDispute.objects.create(
                    deal=deal, address_hash=f"h{i}", day=dt.date(2026, 12, 1)
                )
            else:
                Report.objects.create(
                    deal=deal, venue=world.venue, reason="wrong_price", address_hash=f"h{n}-{i}"
                )

    counts = []
    for n in (1, 11):
        add(n)
        with CaptureQueriesContext(connection) as queries:
            page = mod.get(reverse(changelist))
        assert page.status_code == 200
        assert f"{world.venue.name} · {world.format.code} · 10.00" in page.content.decode()
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
