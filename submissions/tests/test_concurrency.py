"""Identical requests arriving together: one row, one count (PostgreSQL, real connections)."""

import threading

import pytest
from django.db import connection, connections

from beers.clients import address_hash
from beers.models import Deal, PriceCheck
from submissions import limits
from submissions.models import DealConfirmation, PriceSubmission

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
