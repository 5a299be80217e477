"""Requests and decisions arriving together: one row, one count, no deadlock (PostgreSQL, real
connections)."""

import threading

import pytest
from django.db import connection, connections

from beers.clients import address_hash
from beers.models import Beer, Brand, Deal, PriceCheck, Venue
from submissions import limits, menu_photos, review
from submissions.models import (
    DealConfirmation,
    MenuDraft,
    MenuPhotoUpload,
    PriceSubmission,
    Report,
    ReviewState,
)
from tests.transactions import Held, finish, started

from .conftest import JsonClient

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="row locks and concurrent constraints need PostgreSQL",
    ),
]

N = 20
IP = "198.51.100.77"


def send_together(path: str, bodies: list[dict]) -> list[tuple[int, dict]]:
    """POST every body at once, each from its own thread (and database connection)."""
    barrier = threading.Barrier(len(bodies))
    results: list = [None] * len(bodies)

    def run(i: int):
        try:
            client = JsonClient(IP)
            barrier.wait()
            response = client.post(path, bodies[i])
            results[i] = (response.status_code, response.json())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_identical_submissions_at_once_store_one_and_count_once(world, writes_open):
    body = {
        "city": "sao-paulo",
        "venue": {"id": world.venue.pk},
        "beer": "Brahma",
        "format_code": "garrafa_600",
        "price": 12.5,
        "turnstile": "t",
    }
    results = send_together("/api/v1/submissions", [body] * N)
    assert {status for status, _ in results} == {202}, results
    answers = sorted(answer["status"] for _, answer in results)
    assert answers == ["duplicate"] * (N - 1) + ["received"]
    assert PriceSubmission.objects.count() == 1
    assert limits.cap_count("submissions", address_hash(IP)) == 1


def test_confirms_at_once_count_once(world, writes_open):
    deal = world.fresh_deal()
    checks = PriceCheck.objects.filter(deal=deal).count()
    results = send_together(f"/api/v1/deals/{deal.pk}/confirm", [{"turnstile": "t"}] * N)
    assert {status for status, _ in results} == {202}, results
    assert sorted(a["status"] for _, a in results) == ["duplicate"] * (N - 1) + ["received"]
    assert DealConfirmation.objects.filter(deal=deal).count() == 1
    assert Deal.objects.get(pk=deal.pk).confirmations == 1
    assert PriceCheck.objects.filter(deal=deal).count() == checks + 1
    assert limits.cap_count("confirm", address_hash(IP)) == 1


def test_disputes_from_many_addresses_at_once_all_count(world, writes_open):
    deal = world.fresh_deal()
    barrier = threading.Barrier(5)
    codes = []

    def run(i: int):
        try:
            client = JsonClient(f"192.0.2.{i + 1}")
            barrier.wait()
            codes.append(
                client.post(f"/api/v1/deals/{deal.pk}/dispute", {"turnstile": "t"}).status_code
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    deal.refresh_from_db()
    # Row lock on the price: no lost update. The first three count; then it is suspended.
    assert sorted(codes) == [202, 202, 202, 404, 404]
    assert (deal.open_disputes, deal.status) == (3, "suspended")


def test_daily_cap_holds_under_a_burst_of_different_writes(world, writes_open):
    writes_open.WRITE_DAILY_CAP = 5
    bodies = [{"city": f"Cidade {i}", "turnstile": "t"} for i in range(N)]
    results = send_together("/api/v1/city-requests", bodies)
    statuses = sorted(status for status, _ in results)
    assert statuses == [202] * 5 + [429] * (N - 5), results
    assert limits.cap_count("city-requests", address_hash(IP)) == 5


def test_repeats_beside_new_writes_never_meet_a_cap_not_reached(world, writes_open):
    """A repeat holds a place under the cap while it runs, then gives it back: a new write
    arriving meanwhile waits for it instead of being refused below the cap (a double-clicked
    form beside other writes answered 429 to a sender with places left)."""
    writes_open.WRITE_DAILY_CAP = 5
    bodies = [{"city": f"Cidade {i}", "turnstile": "t"} for i in range(5)]
    results = send_together("/api/v1/city-requests", bodies + [bodies[0]] * 10)
    answers = sorted(answer.get("status", answer.get("error")) for _, answer in results)
    assert answers == ["duplicate"] * 10 + ["received"] * 5, results
    assert limits.cap_count("city-requests", address_hash(IP)) == 5
    more = JsonClient(IP).post("/api/v1/city-requests", {"city": "Cidade 9", "turnstile": "t"})
    assert more.status_code == 429


def test_a_repeated_dispute_of_the_price_it_took_out_is_a_duplicate(world, writes_open):
    deal = world.fresh_deal()
    for i in range(3):
        answer = JsonClient(f"192.0.2.{i + 1}").post(
            f"/api/v1/deals/{deal.pk}/dispute", {"turnstile": "t"}
        )
        assert answer.json() == {"status": "received"}
    deal.refresh_from_db()
    assert deal.status == "suspended"
    again = JsonClient("192.0.2.3").post(f"/api/v1/deals/{deal.pk}/dispute", {"turnstile": "t"})
    assert (again.status_code, again.json()) == (202, {"status": "duplicate"})
    other = JsonClient("192.0.2.9").post(f"/api/v1/deals/{deal.pk}/dispute", {"turnstile": "t"})
    assert other.status_code == 404  # nobody else sees the price any more
    confirm = JsonClient("192.0.2.3").post(f"/api/v1/deals/{deal.pk}/confirm", {"turnstile": "t"})
    assert confirm.status_code == 404  # it confirmed nothing today


# --- moderation and automated review side by side ----------------------------------------------


def _drafts_of_one_line(world, n: int) -> list[MenuDraft]:
    brand = Brand.objects.create(slug="spaten", name="Spaten")
    beer = Beer.objects.create(slug="spaten", name="Spaten", brand=brand)
    drafts = []
    for i in range(n):
        upload = MenuPhotoUpload.objects.create(
            city=world.city, venue=world.venue, address_hash="a" * 64, body_fingerprint=str(i)
        )
        drafts.append(
            MenuDraft.objects.create(
                upload=upload,
                venue=world.venue,
                position=0,
                text="Spaten 600ml R$ 12,90",
                beer=beer,
                brand=brand,
                format=world.format,
                price_cents=1290,
            )
        )
    return drafts


def test_two_approvals_of_one_menu_line_at_once_make_one_price(world):
    """The second waits for the bar while the first is open, then finds its price: each found
    none and each created it (two equal prices in 3 of 4 runs of two moderators)."""
    first, second = _drafts_of_one_line(world, 2)
    a = started(Held(lambda: menu_photos.menu_draft_approve(draft_id=first.pk)))
    b = started(Held(lambda: menu_photos.menu_draft_approve(draft_id=second.pk)))
    b_waited = a.worked.is_set() and not b.worked.is_set()  # for the bar
    finish(a, b)
    assert b_waited
    assert a.error is None and b.error is None
    assert b.result.pk == a.result.pk
    assert Deal.objects.filter(venue=world.venue, beer__slug="spaten").count() == 1
    assert PriceCheck.objects.filter(deal=a.result).count() == 2


def _new_bar_submission(world, name: str, ip: str) -> PriceSubmission:
    body = {
        "city": "sao-paulo",
        "venue": {
            "new": {"name": name, "lat": -23.561, "lng": -46.656, "kind": "bar", "on_site": True}
        },
        "beer": "Brahma",
        "format_code": "garrafa_600",
        "price": 9.9,
        "turnstile": "t",
    }
    answer = JsonClient(ip).post("/api/v1/submissions", body)
    assert answer.status_code == 202, answer.content
    return PriceSubmission.objects.order_by("-id").first()


@pytest.mark.parametrize("names", [("Bar Corrida", "Bar Corrida"), ("Boteco Azul", "Bar Azul")])
def test_two_approvals_of_one_new_bar_at_once_list_it_once(world, writes_open, names):
    """Two moderators approving at once: the same name took one slug (IntegrityError, a 500),
    a similar one slipped past the twin check (the bar listed twice). The second now waits,
    then is offered the bar the first listed."""
    one, two = (_new_bar_submission(world, n, f"192.0.2.{i}") for i, n in enumerate(names, 1))
    a = started(Held(lambda: review.submission_approve(submission_id=one.pk)))
    b = started(Held(lambda: review.submission_approve(submission_id=two.pk)))
    b_waited = not b.worked.is_set()
    finish(a, b)
    assert b_waited
    assert a.error is None and isinstance(b.error, review.TwinsFound)
    assert [v.pk for v in b.error.twins] == [a.result.venue_id]
    assert Venue.objects.filter(city=world.city, lat=-23.561).count() == 1
    assert PriceSubmission.objects.get(pk=two.pk).state == ReviewState.PENDING


def test_retiring_and_correcting_a_reported_price_at_once_never_deadlock(world, writes_open):
    """report_hide_deal locked the report then the price, deal_correct the price then the
    report: one of two moderators got a 500 (deadlock). Arranged here so that the old order
    deadlocks every time: a third transaction holds the report, the retirement queues for it
    first, the correction second."""
    deal = world.fresh_deal()
    sent = JsonClient().post(
        "/api/v1/reports", {"deal": deal.pk, "reason": "wrong_price", "turnstile": "t"}
    )
    assert sent.status_code == 202
    report = Report.objects.get()
    holder = started(Held(lambda: list(Report.objects.select_for_update().filter(pk=report.pk))))
    hide = started(Held(lambda: review.report_hide_deal(report_id=report.pk)))
    correct = started(
        Held(lambda: review.deal_correct(deal_id=deal.pk, price_cents=990, report_id=report.pk))
    )
    finish(holder)
    finish(hide, correct)
    assert hide.error is None, hide.error
    assert isinstance(correct.error, review.ReviewError), correct.error  # retired meanwhile
    assert Deal.objects.get(pk=deal.pk).status == "retired"
    assert Report.objects.get().state == ReviewState.RESOLVED
