"""The live read API over HTTP: shapes, validation, errors, query counts, cache, limits."""

import datetime as dt
import time

import httpx
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from beers import answers, degraded, outage
from beers.clients import address_hash
from beers.models import Beer, Brand, City, Deal
from beers.selectors import cities, names
from beers.selectors.published import price_brand
from beers.services import deal_create, venue_create
from tests.conftest import make_deals
from tests.live import Relay, free_port, served
from tests.transactions import Held, finish, started

pytestmark = pytest.mark.django_db

DEAL_KEYS = {
    "venue",
    "neighbourhood",
    "url",
    "beer",
    "brand",
    "serving",
    "format",
    "price_brl",
    "price_label",
    "kind",
    "when",
    "service_charge_pct",
    "couvert_brl",
    "conditions",
    "verified_on",
    "possibly_out_of_date",
    "confirmations",
}
ENVELOPE_KEYS = {"city", "city_url", "as_of", "count", "deals", "source"}


def test_search_answer_has_every_documented_key(client, bar, formats):
    make_deals(bar, formats, 2, service_charge_pct=10, couvert_cents=1500)
    deal_create(
        venue=bar,
        format=formats["lata_350"],
        price_cents=5990,
        kind="open_bar",
        open_bar_minutes=120,
    )
    response = client.get("/api/v1/search", {"city": "sao-paulo"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert ENVELOPE_KEYS <= set(body) and "local_time" not in body
    assert body["count"] == len(body["deals"]) == 2  # the open bar is left out
    deal = body["deals"][0]
    assert DEAL_KEYS <= set(deal) and "distance_m" not in deal
    assert deal["neighbourhood"] == "Vila Madalena"
    assert deal["price_brl"] == 9.0 and deal["price_per_litre_brl"] == 15.0
    assert deal["couvert_brl"] == 15.0 and deal["service_charge_pct"] == 10
    assert deal["url"].endswith("/sao-paulo/bar-do-ze")
    assert body["source"].endswith("ODbL 1.0")


def test_open_bars_only_with_their_kind_and_without_price_per_litre(client, bar, formats):
    make_deals(bar, formats, 1)
    deal_create(
        venue=bar,
        format=formats["lata_350"],
        price_cents=5990,
        kind="open_bar",
        open_bar_minutes=120,
    )
    body = client.get("/api/v1/search", {"city": "sao-paulo", "kind": "open_bar"}).json()
    assert [d["kind"] for d in body["deals"]] == ["open_bar"]
    assert "price_per_litre_brl" not in body["deals"][0]
    assert body["deals"][0]["open_bar_minutes"] == 120
    # no price per litre: a cap on it leaves no open bar (docs/decisions.md)
    capped = {"city": "sao-paulo", "kind": "open_bar", "max_price_per_litre": "1000"}
    assert client.get("/api/v1/search", capped).json()["deals"] == []


def test_format_query_is_our_filter_not_a_renderer_switch(client, bar, formats):
    make_deals(bar, formats, 1)
    deal_create(venue=bar, format=formats["lata_350"], price_cents=400)
    for value, expected in (
        ("lata", ["lata_350"]),
        ("garrafa_600", ["garrafa_600"]),
        ("litrao", []),
    ):
        body = client.get("/api/v1/search", {"city": "sao-paulo", "format": value}).json()
        assert [d["format"] for d in body["deals"]] == expected


def test_english_labels_and_links(client, bar, formats):
    make_deals(
        bar,
        formats,
        1,
        kind="happy_hour",
        schedules=[{"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"}],
    )
    body = client.get("/api/v1/search", {"city": "sao-paulo", "lang": "en"}).json()
    deal = body["deals"][0]
    assert deal["serving"] == "600 ml bottle"
    assert deal["when"] == "Mon–Fri 5–8 pm"
    assert deal["url"].split("/")[-3:] == ["en", "sao-paulo", "bar-do-ze"]
    assert body["city_url"].endswith("/en/sao-paulo")
    pt = client.get("/api/v1/search", {"city": "sao-paulo"}).json()["deals"][0]
    assert pt["when"] == "seg–sex 17h–20h" and pt["serving"] == "Garrafa 600 ml"


@pytest.mark.parametrize(
    ("start", "end", "pt", "en"),
    [
        ("22:00", "02:00", "sáb 22h–2h", "Sat 10 pm–2 am"),
        ("18:00", "24:00", "sáb 18h–24h", "Sat 6 pm–midnight"),
        # end = start: open a whole day (decisions.md), not an empty window
        ("08:00", "08:00", "sáb 8h–8h (24 h)", "Sat 8 am–8 am (24 h)"),
    ],
)
def test_a_schedules_text_says_how_long_it_lasts(client, bar, formats, start, end, pt, en):
    make_deals(bar, formats, 1, kind="promo", schedules=[{"days": [6], "start": start, "end": end}])
    answer = client.get("/api/v1/search", {"city": "sao-paulo"}).json()["deals"][0]
    assert answer["when"] == pt
    answer = client.get("/api/v1/search", {"city": "sao-paulo", "lang": "en"}).json()["deals"][0]
    assert answer["when"] == en


def test_confirmed_label_from_three_confirmations(client, bar, formats):
    deal = make_deals(bar, formats, 1)[0]
    deal.confirmations = 3
    deal.save(update_fields=["confirmations"])
    label = client.get("/api/v1/search", {"city": "sao-paulo"}).json()["deals"][0]["price_label"]
    assert "confirmado por 3 pessoas" in label


def test_a_disputed_price_is_not_labelled_confirmed_in_the_answers_nor_on_the_pages(
    client, bar, formats, django_capture_on_commit_callbacks
):
    """interface.md: the confirmed label is a published price's; two open disputes make it
    disputed (still ranked, sent to the moderators): its confirmations stay, not the label."""
    deal = make_deals(bar, formats, 1)[0]
    Deal.objects.filter(pk=deal.pk).update(confirmations=3, open_disputes=2, status="disputed")
    with django_capture_on_commit_callbacks(execute=True):
        answers.answers_changed()
    for path in ("/api/v1/search", "/api/v1/cheapest"):
        for lang, label in (("pt-BR", "confirmado"), ("en", "confirmed")):
            found = client.get(path, {"city": "sao-paulo", "lang": lang}).json()["deals"][0]
            assert found["confirmations"] == 3 and label not in found["price_label"]
    for page in ("/sao-paulo", f"/sao-paulo/{bar.slug}"):
        html = client.get(page).content.decode()
        assert "R$" in html and "confirmado por" not in html
    Deal.objects.filter(pk=deal.pk).update(open_disputes=0, status="published")  # checked
    with django_capture_on_commit_callbacks(execute=True):
        answers.answers_changed()
    found = client.get("/api/v1/search", {"city": "sao-paulo"}).json()["deals"][0]
    assert "confirmado por 3 pessoas" in found["price_label"]
    assert "confirmado por 3 pessoas" in client.get(f"/sao-paulo/{bar.slug}").content.decode()


def test_cheapest_has_local_time_and_distance_only_with_a_point(client, bar, formats):
    make_deals(bar, formats, 2)
    plain = client.get("/api/v1/cheapest", {"city": "sao-paulo"}).json()
    assert "local_time" in plain and plain["local_time"].endswith("-03:00")
    assert all("distance_m" not in d for d in plain["deals"])
    near = client.get(
        "/api/v1/cheapest", {"city": "sao-paulo", "lat": "-23.555", "lng": "-46.69"}
    ).json()
    assert [d["distance_m"] for d in near["deals"]] == [0, 0]
    only_lat = client.get("/api/v1/cheapest", {"city": "sao-paulo", "lat": "-23.555"}).json()
    assert all("distance_m" not in d for d in only_lat["deals"])


@pytest.mark.parametrize(
    ("bar_at", "point", "expected"),
    [
        ((0.0, -179.995), (0.0, 179.995), 1112),  # across the antimeridian
        ((0.0, 179.995), (0.0, -179.995), 1112),
        ((89.999, 0.0), (89.999, 179.0), 222),  # by the pole, half a world of longitude away
        ((-89.999, 0.0), (-89.999, 90.0), 157),
    ],
)
def test_cheapest_finds_bars_across_the_antimeridian_and_by_the_poles(
    client, city, formats, bar_at, point, expected
):
    """decisions.md: inside when the haversine distance is at most radius_m, wherever the
    point is (lat -90 to 90, lng -180 to 180)."""
    far = venue_create(
        city=city,
        name="Bar do Fim do Mundo",
        lat=bar_at[0],
        lng=bar_at[1],
        kind="bar",
        on_site=True,
    )
    make_deals(far, formats, 1)
    answer = client.get(
        "/api/v1/cheapest",
        {"city": "sao-paulo", "lat": point[0], "lng": point[1], "radius_m": 2000},
    ).json()
    assert [d["distance_m"] for d in answer["deals"]] == [expected]


def test_venue_answer(client, bar, formats):
    make_deals(bar, formats, 2)
    deal_create(
        venue=bar,
        format=formats["lata_350"],
        price_cents=5990,
        kind="open_bar",
        open_bar_minutes=60,
    )
    body = client.get(f"/api/v1/venues/{bar.id}").json()
    assert ENVELOPE_KEYS <= set(body)
    assert [d["kind"] for d in body["deals"]] == ["regular", "regular", "open_bar"]
    venue = body["venue"]
    assert venue["name"] == "Bar do Zé" and venue["drink_on_site"] is True
    assert venue["instagram"] == "bardoze" and venue["address"] is None
    assert venue["url"].endswith("/sao-paulo/bar-do-ze")
    assert set(venue) >= {
        "name",
        "url",
        "kind",
        "drink_on_site",
        "neighbourhood",
        "address",
        "lat",
        "lng",
        "instagram",
        "opening_hours",
        "attributes",
    }


def test_venue_without_prices_has_no_url(client, city):
    bare = venue_create(city=city, name="Sem Preço", lat=-23.5, lng=-46.6, kind="bar", on_site=True)
    body = client.get(f"/api/v1/venues/{bare.id}").json()
    assert body["venue"]["url"] is None and body["deals"] == [] and body["count"] == 0


BAD_QUERIES = [
    ("/api/v1/search", {}, ["city"]),
    ("/api/v1/search", {"city": "Sao-Paulo"}, ["city"]),
    ("/api/v1/search", {"city": "sao--paulo"}, ["city"]),
    ("/api/v1/search", {"city": "sao-paulo", "limit": "0"}, ["limit"]),
    ("/api/v1/search", {"city": "sao-paulo", "limit": "51"}, ["limit"]),
    ("/api/v1/search", {"city": "sao-paulo", "limit": "2.5"}, ["limit"]),
    ("/api/v1/search", {"city": "sao-paulo", "max_price_per_litre": "0"}, ["max_price_per_litre"]),
    (
        "/api/v1/search",
        {"city": "sao-paulo", "max_price_per_litre": "1000.01"},
        ["max_price_per_litre"],
    ),
    (
        "/api/v1/search",
        {"city": "sao-paulo", "max_price_per_litre": "nan"},
        ["max_price_per_litre"],
    ),
    ("/api/v1/search", {"city": "sao-paulo", "format": "l"}, ["format"]),
    ("/api/v1/search", {"city": "sao-paulo", "format": "x" * 41}, ["format"]),
    ("/api/v1/search", {"city": "sao-paulo", "format": "Lata"}, ["format"]),
    ("/api/v1/search", {"city": "sao-paulo", "kind": "cheap"}, ["kind"]),
    ("/api/v1/search", {"city": "sao-paulo", "lang": "pt"}, ["lang"]),
    ("/api/v1/search", {"city": "sao-paulo", "neighbourhood": "Vila Madalena"}, ["neighbourhood"]),
    ("/api/v1/search", {"city": "sao-paulo", "brand": "Brahma"}, ["brand"]),
    ("/api/v1/search", {"city": "x", "limit": "0", "kind": "no"}, ["kind", "limit"]),
    ("/api/v1/cheapest", {"city": "sao-paulo", "radius_m": "99"}, ["radius_m"]),
    ("/api/v1/cheapest", {"city": "sao-paulo", "radius_m": "10001"}, ["radius_m"]),
    ("/api/v1/cheapest", {"city": "sao-paulo", "lat": "90.1", "lng": "0"}, ["lat"]),
    ("/api/v1/cheapest", {"city": "sao-paulo", "lat": "0", "lng": "-180.5"}, ["lng"]),
    ("/api/v1/cheapest", {"city": "sao-paulo", "lat": "north"}, ["lat"]),
    ("/api/v1/cheapest", {"city": "sao-paulo", "limit": "51"}, ["limit"]),
    ("/api/v1/venues/0", {}, ["id"]),
    ("/api/v1/venues/-3", {}, ["id"]),
    ("/api/v1/venues/abc", {}, ["id"]),
    # a path's id is digits only, as for confirm and dispute
    ("/api/v1/venues/+1", {}, ["id"]),
    ("/api/v1/venues/%2B1", {}, ["id"]),
    ("/api/v1/venues/1.0", {}, ["id"]),
    ("/api/v1/venues/%201", {}, ["id"]),
    ("/api/v1/venues/1", {"lang": "es"}, ["lang"]),
    # ASCII digits only, nothing around them: "\u0663" is an Arabic-Indic 3
    ("/api/v1/search", {"city": "sao-paulo", "limit": "\u0663"}, ["limit"]),
    ("/api/v1/search", {"city": "sao-paulo", "limit": " 5"}, ["limit"]),
    ("/api/v1/search", {"city": "sao-paulo", "limit": "5\n"}, ["limit"]),
    (
        "/api/v1/search",
        {"city": "sao-paulo", "max_price_per_litre": "\u0665"},
        ["max_price_per_litre"],
    ),
    ("/api/v1/cheapest", {"city": "sao-paulo", "lat": " 1", "lng": "1"}, ["lat"]),
    ("/api/v1/venues/%D9%A1", {}, ["id"]),
    ("/api/v1/venues/1%0A", {}, ["id"]),
]


@pytest.mark.parametrize(("path", "params", "bad"), BAD_QUERIES)
def test_bad_queries_get_400_with_one_issue_per_parameter(client, city, path, params, bad):
    response = client.get(path, params)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_request"
    assert sorted(i["path"] for i in body["issues"]) == bad
    assert all(set(i) == {"path", "message"} and i["message"] for i in body["issues"])


GOOD_EDGES = [
    ("/api/v1/search", {"limit": "1"}),
    ("/api/v1/search", {"limit": "50"}),
    ("/api/v1/search", {"max_price_per_litre": "1000"}),
    ("/api/v1/search", {"max_price_per_litre": "0.01"}),
    ("/api/v1/search", {"format": "ab"}),
    ("/api/v1/search", {"format": "a" * 40}),
    ("/api/v1/search", {"neighbourhood": "nowhere"}),
    ("/api/v1/search", {"brand": "nobody"}),
    ("/api/v1/search", {"neighbourhood": "a" * 300, "brand": "b" * 300}),  # well-formed: 200
    ("/api/v1/search", {"limit": "007"}),
    ("/api/v1/cheapest", {"radius_m": "100", "lat": "90", "lng": "180"}),
    ("/api/v1/cheapest", {"radius_m": "10000", "lat": "-90", "lng": "-180"}),
    ("/api/v1/cheapest", {"limit": "50", "lang": "en"}),
]


@pytest.mark.parametrize(("path", "params"), GOOD_EDGES)
def test_values_on_the_bounds_are_accepted(client, city, path, params):
    response = client.get(path, {"city": "sao-paulo", **params})
    assert response.status_code == 200, response.content


def test_unknown_city_and_bar_are_404(client, city):
    for path, params in (
        ("/api/v1/search", {"city": "recife"}),
        ("/api/v1/cheapest", {"city": "recife"}),
        ("/api/v1/venues/999999", {}),
        ("/api/v1/venues/99999999999999999999999", {}),
        ("/api/v1/venues/" + "9" * 401, {}),  # an integer > 0, just no such bar
    ):
        response = client.get(path, params)
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"


def test_a_404_repeats_a_long_slug_cut(client, city):
    """The message names what was asked, but a 10,000-character slug does not come back whole
    (it did, in a 10 KB answer)."""
    slug = "a" * 10_000
    for path in ("/api/v1/search", "/api/v1/cheapest"):
        answer = client.get(path, {"city": slug}).json()
        assert answer["message"] == "Unknown city: " + "a" * 59 + "…."


def test_inactive_city_is_unknown(client, city):
    City.objects.filter(pk=city.pk).update(active=False)
    assert client.get("/api/v1/search", {"city": "sao-paulo"}).status_code == 404


@pytest.mark.parametrize("path", ["/api/v1/search", "/api/v1/cheapest"])
def test_an_edit_from_another_process_shows_at_once(client, bar, formats, path):
    """The city snapshot is per process; an edit elsewhere (no signal here) must not leave an
    answer in the old time zone, under the old name or for a city no longer active."""
    make_deals(bar, formats, 2)
    first = client.get(path, {"city": "sao-paulo"}).json()
    assert first["as_of"].endswith("-03:00") and first["count"] == 2
    City.objects.filter(pk=bar.city_id).update(timezone="America/Noronha", name="Sampa")
    cache.clear()
    moved = client.get(path, {"city": "sao-paulo"}).json()
    assert moved["as_of"].endswith("-02:00")
    assert moved["city"] == "Sampa" and moved["count"] == 2
    City.objects.filter(pk=bar.city_id).update(active=False)
    cache.clear()
    assert client.get(path, {"city": "sao-paulo"}).status_code == 404


def test_an_empty_answer_on_a_current_city_costs_one_query_more(
    client, city, django_assert_num_queries
):
    cities.active_city("sao-paulo")
    names.snapshot()
    with django_assert_num_queries(2):  # no rows: the city is looked up again, and unchanged
        assert client.get("/api/v1/search", {"city": "sao-paulo"}).json()["count"] == 0


def test_errors_under_api_are_json(client, db):
    for method, path, status, code in (
        ("get", "/api/v1/nothing-here", 404, "not_found"),
        ("post", "/api/v1/search", 405, "method_not_allowed"),
        ("delete", "/api/v1/status", 405, "method_not_allowed"),
    ):
        response = getattr(client, method)(path)
        assert response.status_code == status
        assert response["Content-Type"].startswith("application/json")
        assert response.json()["error"] == code


@pytest.mark.parametrize("accept", ["text/html", "application/xml", "text/plain"])
def test_the_accept_header_never_turns_an_answer_into_a_406(client, bar, formats, accept):
    make_deals(bar, formats, 1)
    for path in (
        "/api/v1/status",
        "/api/v1/search?city=sao-paulo",
        "/api/v1/cheapest?city=sao-paulo",
        f"/api/v1/venues/{bar.id}",
        "/api/v1/search?city=sao-paulo&limit=0",
    ):
        response = client.get(path, HTTP_ACCEPT=accept)
        assert response.status_code == (400 if "limit=0" in path else 200), path
        assert response["Content-Type"].startswith("application/json")
    write = client.post("/api/v1/reports", "{", content_type="application/json", HTTP_ACCEPT=accept)
    assert write.status_code in (400, 503)  # closed writes answer 503 before reading the body
    assert write.json()["error"] in ("invalid_request", "unavailable")


@pytest.mark.parametrize("lang, accept", [("en", ""), ("pt-BR", "en"), (None, "en")])
def test_content_language_is_the_answers_lang_not_accept_language(
    client, bar, formats, lang, accept
):
    make_deals(bar, formats, 1)
    params = {"lang": lang} if lang else {}
    for path in ("/api/v1/search", "/api/v1/cheapest"):
        response = client.get(path, {"city": "sao-paulo", **params}, HTTP_ACCEPT_LANGUAGE=accept)
        assert response["Content-Language"] == (lang or "pt-BR"), path
    response = client.get(f"/api/v1/venues/{bar.id}", params, HTTP_ACCEPT_LANGUAGE=accept)
    assert response["Content-Language"] == (lang or "pt-BR")


def test_browsers_may_read_retry_after(client, city, settings):
    settings.READ_RATE_LIMIT = "1/hour"
    origin = {"HTTP_ORIGIN": "https://app.example"}
    client.get("/api/v1/search", {"city": "sao-paulo"}, **origin)
    limited = client.get("/api/v1/search", {"city": "sao-paulo"}, **origin)
    assert limited.status_code == 429 and limited["Retry-After"]
    assert "retry-after" in limited["Access-Control-Expose-Headers"].lower()


@pytest.mark.parametrize("n", [3, 40])
def test_each_endpoint_runs_a_constant_number_of_queries(
    client, bar, formats, n, django_assert_num_queries
):
    make_deals(
        bar,
        formats,
        n,
        kind="happy_hour",
        schedules=[{"days": list(range(7)), "start": "00:00", "end": "24:00"}],
    )
    names.snapshot()  # the per-process catalogue names, loaded once
    cities.active_city("sao-paulo")  # the per-process cities, reloaded every second
    with django_assert_num_queries(1):
        assert client.get("/api/v1/search", {"city": "sao-paulo", "limit": 50}).status_code == 200
    with django_assert_num_queries(2):  # prices, next schedule edge
        assert client.get("/api/v1/cheapest", {"city": "sao-paulo", "limit": 50}).status_code == 200
    with django_assert_num_queries(2):
        assert client.get(f"/api/v1/venues/{bar.id}").status_code == 200


def test_answers_are_cached_with_cache_control(client, bar, formats, django_assert_num_queries):
    make_deals(bar, formats, 2)
    first = client.get("/api/v1/search", {"city": "sao-paulo"})
    assert first["Cache-Control"] == "public, max-age=600"  # interface.md: 10 to 15 minutes
    with django_assert_num_queries(0):
        again = client.get("/api/v1/search", {"city": "sao-paulo"})
    assert again.content == first.content


def test_an_answer_computed_after_a_rename_elsewhere_names_it_anew(
    client, bar, formats, django_capture_on_commit_callbacks
):
    """A bairro and a brand renamed by another process (an admin worker, an import): the
    change makes the cached answers stale, and the answers computed then use the new names,
    not this process's catalogue snapshot (which lived a minute: the old names were cached
    with the new version for 10 minutes)."""
    from beers.answers import answers_changed

    brand = Brand.objects.create(slug="skol", name="Skol")
    deal_create(venue=bar, format=formats["garrafa_600"], price_cents=900, brand=brand)
    hood = bar.neighbourhood
    assert hood is not None

    def shown():
        deal = client.get("/api/v1/search", {"city": "sao-paulo"}).json()["deals"][0]
        return deal["brand"], deal["neighbourhood"]

    assert shown() == ("Skol", hood.name)
    # another process's edit: no signal reaches this one, only the data version it moved
    Brand.objects.filter(pk=brand.pk).update(name="Skol Pilsen")
    type(hood).objects.filter(pk=hood.pk).update(name="Vila Madá")
    with django_capture_on_commit_callbacks(execute=True):
        answers_changed()
    assert shown() == ("Skol Pilsen", "Vila Madá")


def test_a_lost_data_version_is_never_taken_for_the_one_an_answer_was_cached_at(
    client, bar, formats, django_assert_num_queries
):
    """A version key the store lost (evicted, flushed) read as a constant (0), so answers
    cached before any change held again after one whose bump was lost with it."""
    from beers import data_version

    make_deals(bar, formats, 1)
    client.get("/api/v1/search", {"city": "sao-paulo"})
    with django_assert_num_queries(0):  # cached
        client.get("/api/v1/search", {"city": "sao-paulo"})
    data_version.store().delete(data_version.VERSION_KEY)
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/v1/search", {"city": "sao-paulo"}).status_code == 200
    assert len(queries) > 0  # computed again


@pytest.mark.live
def test_an_import_beside_the_embedded_server_reaches_its_cached_answers(tmp_path):
    """`make run` (SQLite, no Redis) caches answers in the server's process. An
    `import_datasets` run beside it changed a price; the server kept answering the old one
    from its cache for up to LIVE_CACHE_SECONDS (600 s)."""
    import json
    import os
    import subprocess
    import sys

    from datasets.rows import brl
    from datasets.tests.helpers import set_cells
    from tests.live import ROOT

    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",  # as `make run` (not the suite's)
        "DATABASE_URL": f"sqlite:///{tmp_path / 'breja.sqlite3'}",
        "DEBUG": "1",
        "REDIS_URL": "",
        "DATASETS_ROOT": str(tmp_path / "datasets"),
        "DEGRADED_FLAG_PATH": str(tmp_path / "flag.json"),
    }

    def manage(*args: str) -> None:
        subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env={**os.environ, **env},
            check=True,
            capture_output=True,
        )

    manage("migrate", "--noinput", "-v0")
    manage("load_demo")
    manage("export_datasets", "--dir", str(tmp_path / "tree"))
    with served(env) as base:

        def cheapest() -> tuple:
            found = httpx.get(base + "/api/v1/search?city=recife&limit=1", timeout=10).json()
            return found["deals"][0]["id"], found["deals"][0]["price_brl"], found["as_of"]

        deal_id, price, as_of = cheapest()
        assert cheapest() == (deal_id, price, as_of)  # the same answer: from the cache
        deals = tmp_path / "tree" / "recife" / "deals.json"
        tree = json.loads(deals.read_text())
        (item,) = [item for item in tree["items"] if item["id"] == deal_id]
        item["price_cents"] -= 1  # still the cheapest per litre (the import derives it)
        deals.write_text(json.dumps(tree))
        # its CSV twin says the same (the import holds them to each other)
        set_cells(deals.with_suffix(".csv"), {"id": deal_id}, price_brl=brl(item["price_cents"]))
        manage("import_datasets", str(tmp_path / "tree"))
        assert cheapest()[:2] == (deal_id, round(price - 0.01, 2))


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/search?city=sao-paulo",
        "/api/v1/status",
        "/api/v1/search?city=sao-paulo&limit=0",  # an error answer too
        "/api/v1/optout/1.x",
        "/api/v1/openapi.json",
    ],
)
def test_api_answers_set_no_cookie_whatever_the_client_sends(client, bar, formats, path):
    """A stale session cookie and a malformed CSRF cookie: the session middleware deleted the
    one and the CSRF middleware replaced the other, on public cacheable answers."""
    make_deals(bar, formats, 1)
    client.cookies["sessionid"] = "stale"
    client.cookies["csrftoken"] = "x"
    for answer in (client.get(path), client.get(path)):
        assert not answer.cookies, path
        assert "Set-Cookie" not in answer
        assert "cookie" not in answer.get("Vary", "").lower()


def test_staff_endpoints_keep_the_sessions_cookies(client, bar):
    """The staff endpoint reads the admin's session: a cookie Django sets there (a stale
    session deleted, a session cycled after a key rotation) reaches the browser."""
    client.cookies["sessionid"] = "stale"
    answer = client.get(f"/api/admin/venues/{bar.id}/menu-link")
    assert answer.status_code == 401
    assert answer.cookies["sessionid"].value == ""  # the stale one deleted


def test_only_a_trusted_proxy_may_say_the_request_came_over_https(db, settings):
    """README: behind TRUSTED_PROXY_CIDRS the app believes the proxy's X-Forwarded-Proto. A
    client reaching the app directly over HTTP claimed it too, and skipped the redirect."""
    from django.test import Client

    settings.TRUSTED_PROXY_CIDRS = ["10.0.0.0/8"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    path = "/api/v1/openapi.json"  # (status is exempt from the redirect: health checks)
    direct = Client(REMOTE_ADDR="203.0.113.9").get(path, HTTP_X_FORWARDED_PROTO="https")
    assert direct.status_code == 301 and direct["Location"].startswith("https://")
    proxied = Client(REMOTE_ADDR="10.1.2.3").get(path, HTTP_X_FORWARDED_PROTO="https")
    assert proxied.status_code == 200
    assert Client(REMOTE_ADDR="10.1.2.3").get(path).status_code == 301  # plain from the proxy
    # the proxy as a dual-stack socket shows it (an IPv4-mapped IPv6 address)
    mapped = Client(REMOTE_ADDR="::ffff:10.1.2.3").get(path, HTTP_X_FORWARDED_PROTO="https")
    assert mapped.status_code == 200


def _skip_near_midnight(city, seconds: int) -> None:
    """Skip when the city's midnight is closer than `seconds`: the server's copy of an answer
    ends there, so a test moving the clock that far would see a new answer."""
    local = timezone.now().astimezone(city.tz)
    to_midnight = (24 - local.hour) * 3600 - local.minute * 60 - local.second
    if to_midnight < seconds:
        pytest.skip("seconds before the city's midnight: the server's copy lives too short")


def test_a_cache_hit_states_the_whole_lifetime_and_its_age(client, bar, formats, monkeypatch):
    """10 to 15 minutes (interface.md) is the answer's lifetime: a hit keeps `max-age` and
    says how old it is in `Age`, as HTTP caches do."""
    make_deals(bar, formats, 2)
    first = client.get("/api/v1/search", {"city": "sao-paulo"})
    assert first["Cache-Control"] == "public, max-age=600"
    assert "Age" not in first
    computed = time.time()
    _skip_near_midnight(bar.city, 130)
    monkeypatch.setattr(answers.time, "time", lambda: computed + 125)
    again = client.get("/api/v1/search", {"city": "sao-paulo"})
    assert again.content == first.content
    assert again["Cache-Control"] == "public, max-age=600"
    assert int(again["Age"]) in (124, 125)
    # past its lifetime the answer is computed again, and new
    monkeypatch.setattr(answers.time, "time", lambda: computed + 601)
    fresh = client.get("/api/v1/search", {"city": "sao-paulo"})
    assert "Age" not in fresh


def test_a_cached_cheapest_states_the_city_time_it_answers_for(client, bar, formats, monkeypatch):
    """A copy of cheapest holds only while the same prices are on (until the next schedule
    edge or midnight), so it answers for the minute it is served in: its `local_time` is the
    city's time now, while `as_of` keeps when it was computed."""
    make_deals(bar, formats, 2)
    first = client.get("/api/v1/cheapest", {"city": "sao-paulo"})
    computed = time.time()
    _skip_near_midnight(bar.city, 200)
    monkeypatch.setattr(answers.time, "time", lambda: computed + 185)
    again = client.get("/api/v1/cheapest", {"city": "sao-paulo"})
    assert int(again["Age"]) in (184, 185)
    expected = dt.datetime.fromtimestamp(int(computed + 185), bar.city.tz).isoformat()
    assert again.json()["local_time"] == expected and expected.endswith("-03:00")
    assert again.json()["as_of"] == first.json()["as_of"]
    assert {**again.json(), "local_time": None} == {**first.json(), "local_time": None}


def test_a_clock_set_back_does_not_serve_an_answer_computed_later(
    client, bar, formats, monkeypatch
):
    """An answer stored at a later time than now (the server's clock was set back) is
    computed again rather than served as if it were fresh."""
    make_deals(bar, formats, 1)
    client.get("/api/v1/search", {"city": "sao-paulo"})
    computed = time.time()
    monkeypatch.setattr(answers.time, "time", lambda: computed + 60)
    with CaptureQueriesContext(connection) as hit:
        assert "Age" in client.get("/api/v1/search", {"city": "sao-paulo"})
    assert len(hit) == 0
    monkeypatch.setattr(answers.time, "time", lambda: computed - 3600)
    with CaptureQueriesContext(connection) as again:
        client.get("/api/v1/search", {"city": "sao-paulo"})
    assert len(again) > 0  # computed again


def test_open_cors_on_the_api(client, bar, formats):
    response = client.get(
        "/api/v1/search", {"city": "sao-paulo"}, HTTP_ORIGIN="https://example.org"
    )
    assert response["Access-Control-Allow-Origin"] == "*"


def test_cheapest_answer_never_outlives_the_next_schedule_edge(client, bar, formats):
    local = timezone.now().astimezone(bar.city.tz)
    start = (local + dt.timedelta(minutes=3)).replace(second=0, microsecond=0)
    end = start + dt.timedelta(hours=1)
    make_deals(
        bar,
        formats,
        1,
        kind="happy_hour",
        schedules=[
            {
                "days": [(start.weekday() + 1) % 7],
                "start": f"{start:%H:%M}",
                "end": "24:00" if end.date() != start.date() else f"{end:%H:%M}",
            }
        ],
    )
    first = client.get("/api/v1/cheapest", {"city": "sao-paulo"})
    assert first["Cache-Control"] == "public, max-age=600"  # what a client may keep
    # the server's copy is served until the edge, never after it
    computed = time.time()
    to_edge = (start - local).total_seconds()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(answers.time, "time", lambda: computed + to_edge - 30)
        assert "Age" in client.get("/api/v1/cheapest", {"city": "sao-paulo"})
        patch.setattr(answers.time, "time", lambda: computed + to_edge + 1)
        assert "Age" not in client.get("/api/v1/cheapest", {"city": "sao-paulo"})


def test_read_rate_limit_answers_429_with_retry_after(client, city, settings):
    settings.READ_RATE_LIMIT = "3/min"
    codes = [client.get("/api/v1/search", {"city": "sao-paulo"}).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = client.get("/api/v1/cheapest", {"city": "sao-paulo"})
    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limited"
    assert 0 < int(limited["Retry-After"]) <= 60
    assert client.get("/api/v1/status").json()["rateLimits"]["read"] is True
    settings.READ_RATE_LIMIT = "off"
    assert client.get("/api/v1/status").json()["rateLimits"]["read"] is False


def test_read_rate_counter_keeps_a_hash_of_the_address_never_the_address(client, city, settings):
    settings.READ_RATE_LIMIT = "3/hour"  # an hour: no window edge falls inside the test
    window = int(time.time()) // 3600
    for _ in range(2):
        assert client.get("/api/v1/search", {"city": "sao-paulo"}).status_code == 200
    assert cache.get(f"rl:read:{address_hash('127.0.0.1')}:{window}") == 2
    assert cache.get(f"rl:read:127.0.0.1:{window}") is None


def test_status(client, db):
    body = client.get("/api/v1/status").json()
    assert body["ok"] is True and body["db"] is True
    assert body["environment"] in {"production", "staging", "development"}
    assert set(body["rateLimits"]) == {"read", "write"}
    assert dt.datetime.fromisoformat(body["time"]).tzinfo is not None


def test_status_and_writes_answer_at_once_while_the_database_is_known_down(
    client, bar, settings, django_assert_num_queries
):
    """Each status call and write asked the database (the pool's 3 s with it down) while the
    live reads skipped it for a few seconds after a failure."""
    from beers import outage

    settings.TURNSTILE_SECRET_KEY = "1x0000000000000000000000000000000AA"
    outage.DATABASE.failed()
    with django_assert_num_queries(0):
        assert client.get("/api/v1/status").json()["db"] is False
        write = client.post(
            "/api/v1/reports",
            {"reason": "closed", "venue": bar.pk, "turnstile": "t"},
            content_type="application/json",
        )
    assert write.status_code == 503 and write.json()["error"] == "unavailable"
    outage.DATABASE.back()
    assert client.get("/api/v1/status").json()["db"] is True


def test_operator_switch_degrades_live_reads(client, bar, formats):
    make_deals(bar, formats, 1)
    degraded.switch_on(retry_after=77)
    for path in (
        "/api/v1/search?city=sao-paulo",
        "/api/v1/cheapest?city=sao-paulo",
        f"/api/v1/venues/{bar.id}",
    ):
        response = client.get(path)
        assert response.status_code == 503
        assert response["Retry-After"] == "77"
        body = response.json()
        assert body["error"] == "degraded" and body["datasets"] == "/api/v1/index.json"
        assert body["message"]
    assert client.get("/api/v1/status").json()["db"] is False
    # the switch comes before the parameters: a bad one gets the degraded 503 too
    bad = client.get("/api/v1/search", {"city": "São Paulo", "limit": "0"})
    assert bad.status_code == 503 and bad.json()["error"] == "degraded"
    # a method the endpoint lacks is still a 405, not the degraded answer
    wrong = client.post("/api/v1/search?city=sao-paulo")
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"
    degraded.switch_off()
    assert client.get("/api/v1/search", {"city": "sao-paulo"}).status_code == 200


@pytest.mark.parametrize(
    ("written", "wait"),
    [
        ('{"retry_after": "soon"}', "120"),
        ("[]", "120"),
        ("not json", "120"),
        ('{"retry_after": -30}', "1"),
        ('{"retry_after": 0}', "1"),
    ],
)
def test_a_switch_file_edited_by_hand_is_on_with_a_valid_wait(
    client, bar, formats, settings, written, wait
):
    """The file is the switch: `{"retry_after": "soon"}` or `[]` gave 500s, `-30` an invalid
    Retry-After, 0 a write's 503 without one."""
    settings.TURNSTILE_SECRET_KEY = "1x0000000000000000000000000000000AA"
    settings.DEGRADED_FLAG_PATH.parent.mkdir(parents=True, exist_ok=True)
    settings.DEGRADED_FLAG_PATH.write_text(written)
    try:
        read = client.get("/api/v1/search", {"city": "sao-paulo"})
        write = client.post(
            "/api/v1/reports",
            {"reason": "closed", "venue": bar.pk, "turnstile": "t"},
            content_type="application/json",
        )
        page = client.get("/sao-paulo")
    finally:
        degraded.switch_off()
    assert (read.status_code, read["Retry-After"]) == (503, wait)
    assert read.json()["error"] == "degraded"
    assert (write.status_code, write["Retry-After"]) == (503, wait)
    assert (page.status_code, page["Retry-After"]) == (503, wait)


def test_the_switch_command_takes_a_wait_of_a_second_or_more():
    from django.core.management import CommandError, call_command

    for bad in ("0", "-30", "soon"):
        with pytest.raises(CommandError):
            call_command("degraded", "on", "--retry-after", bad)
    assert degraded.switch_state() is None


@pytest.mark.live
def test_unreachable_database_degrades_live_reads(tmp_path):
    """A real server whose PostgreSQL does not answer: live reads 503, status db false."""
    env = {
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/breja",
        "DEBUG": "1",
        "DB_CONNECT_TIMEOUT": "1",
        "DB_POOL_TIMEOUT": "1",
        "DEGRADED_FLAG_PATH": str(tmp_path / "flag.json"),
        "REDIS_URL": "",
    }
    with served(env) as base:
        status = httpx.get(base + "/api/v1/status", timeout=10).json()
        assert status["db"] is False and status["ok"] is True
        response = httpx.get(base + "/api/v1/search?city=sao-paulo", timeout=10)
        assert response.status_code == 503
        assert response.json()["error"] == "degraded"
        assert "Retry-After" in response.headers
        # an endpoint with no outage answer of its own: 503 unavailable, not a 500
        staff = httpx.get(
            base + "/api/admin/venues/1/menu-link", auth=("ana", "secret"), timeout=10
        )
        assert staff.status_code == 503, staff.text
        assert staff.json()["error"] == "unavailable" and "Retry-After" in staff.headers
        # the admin's sign-in and pages: a 503 page, not a 500
        with httpx.Client(base_url=base, timeout=10) as browser:
            form = browser.get("/admin/login/")
            assert form.status_code == 200
            token = browser.cookies["csrftoken"]
            login = browser.post(
                "/admin/login/",
                data={"username": "ana", "password": "secret", "csrfmiddlewaretoken": token},
                headers={"Referer": base + "/admin/login/"},
            )
            assert login.status_code == 503, login.text[:300]
            assert "Retry-After" in login.headers and "text/html" in login.headers["content-type"]


def test_a_cached_answer_is_degraded_at_once_while_the_database_is_known_down(
    client, bar, formats, django_assert_num_queries
):
    """Right after a computed answer the database has just answered, yet a failure since
    counts first: the cached copy gets the degraded 503 without asking it again."""
    make_deals(bar, formats, 1)
    assert client.get("/api/v1/search", {"city": "sao-paulo"}).status_code == 200
    outage.DATABASE.failed()
    with django_assert_num_queries(0):
        down = client.get("/api/v1/search", {"city": "sao-paulo"})
    assert down.status_code == 503 and down.json()["error"] == "degraded"
    outage.DATABASE.back()
    assert client.get("/api/v1/search", {"city": "sao-paulo"}).status_code == 200


@pytest.mark.live
def test_a_cached_answer_is_degraded_once_the_database_stops_answering(
    transactional_db, bar, formats, tmp_path
):
    """decisions.md: the live reads answer the degraded 503 when the database cannot be
    reached. A real server reaches PostgreSQL through a relay; once the relay is cut, an
    answer its cache still holds is degraded too (it was served 200 from the cache)."""
    if connection.vendor != "postgresql":
        pytest.skip("a served app on the test's PostgreSQL database")
    make_deals(bar, formats, 2)
    db = connection.settings_dict
    relay = Relay(int(db["PORT"] or 5432))
    env = {
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@127.0.0.1:"
        f"{relay.port}/{db['NAME']}",
        "DEBUG": "1",
        "DB_CONNECT_TIMEOUT": "1",
        "DB_POOL_TIMEOUT": "1",
        "DEGRADED_FLAG_PATH": str(tmp_path / "flag.json"),
        "VERSIONS_DIR": str(tmp_path / "versions"),
        "REDIS_URL": "",
    }
    try:
        with served(env) as base:
            search = base + "/api/v1/search?city=sao-paulo"
            first = httpx.get(search, timeout=10)
            assert first.status_code == 200 and len(first.json()["deals"]) == 2
            hit = httpx.get(search, timeout=10)
            assert hit.json()["as_of"] == first.json()["as_of"]  # from the cache
            relay.cut()
            time.sleep(answers.REACHED_SECONDS + 0.2)
            for _ in range(2):  # asked, then known down
                down = httpx.get(search, timeout=10)
                assert down.status_code == 503, down.text
                assert down.json()["error"] == "degraded" and "Retry-After" in down.headers
            assert httpx.get(base + "/api/v1/status", timeout=10).json()["db"] is False
    finally:
        relay.cut()


@pytest.mark.live
def test_the_served_app_ignores_x_forwarded_for_from_an_untrusted_peer(tmp_path):
    """uvicorn believes X-Forwarded-For from 127.0.0.1 unless told not to: with the command of
    `make run`, a client on the same host cannot pick an address to dodge the rate limit."""
    env = {
        "DEBUG": "1",
        "READ_RATE_LIMIT": "2/hour",
        "DEGRADED_FLAG_PATH": str(tmp_path / "flag.json"),
        "REDIS_URL": "",
    }
    with served(env) as base:
        codes = [
            httpx.get(
                base + "/api/v1/search?city=nowhere",
                headers={"X-Forwarded-For": f"203.0.113.{n}"},
                timeout=10,
            ).status_code
            for n in range(3)
        ]
        assert codes[2] == 429, codes


def test_a_price_takes_its_beers_brand_everywhere(client, bar, formats):
    """datasets.md: a price's brand is its beer's brand, else its own. The live answers read
    the price's stored brand, so it follows the beer's (set later, or changed)."""
    beer = Beer.objects.create(slug="skol-beats", name="Skol Beats")
    own = Brand.objects.create(slug="brahma", name="Brahma")
    deal = deal_create(venue=bar, format=formats["garrafa_600"], price_cents=900, beer=beer)
    assert deal.brand_id is None
    skol = Brand.objects.create(slug="skol", name="Skol")
    beer.brand = skol
    beer.save()
    found = client.get("/api/v1/search", {"city": "sao-paulo", "brand": "skol"}).json()
    assert [d["brand"] for d in found["deals"]] == ["Skol"]
    in_datasets = Deal.objects.filter(pk=deal.pk).values_list(price_brand("slug"), flat=True)
    assert list(in_datasets) == ["skol"]
    # a price named with another brand than its beer's takes the beer's
    other = deal_create(
        venue=bar, format=formats["garrafa_600"], price_cents=950, beer=beer, brand=own
    )
    assert other.brand_id == skol.pk
    # a moderator moving a price to another beer moves its brand too
    amstel = Beer.objects.create(
        slug="amstel", name="Amstel", brand=Brand.objects.create(slug="amstel", name="Amstel")
    )
    moved = Deal.objects.get(pk=other.pk)
    moved.beer_id = amstel.pk
    moved.save(update_fields=["beer"])
    assert Deal.objects.get(pk=other.pk).brand_id == amstel.brand_id
    # datasets.md: a known beer's brand, or none; the price's own brand only without a beer
    house = Beer.objects.create(slug="da-casa", name="Da casa", brand=None)
    unbranded = deal_create(
        venue=bar, format=formats["garrafa_600"], price_cents=990, beer=house, brand=own
    )
    assert unbranded.brand_id is None
    alone = deal_create(venue=bar, format=formats["garrafa_600"], price_cents=991, brand=own)
    assert alone.brand_id == own.pk
    # a beer that loses its brand takes its prices along
    amstel.brand = None
    amstel.save()
    assert Deal.objects.get(pk=other.pk).brand_id is None


def test_error_answers_say_their_messages_are_english(client, city):
    for params in ({"city": "sao-paulo", "limit": 0, "lang": "pt-BR"}, {"city": "atlantis"}):
        response = client.get("/api/v1/search", params)
        assert response.status_code in (400, 404)
        assert response["Content-Language"] == "en"
    assert client.get("/api/v1/nope")["Content-Language"] == "en"


def test_built_in_error_messages_are_english_too(client, city):
    """Django's and DRF's own texts ("This field is required.", "Method not allowed") are
    English, as the answers' Content-Language says, whatever the browser asks for."""
    response = client.delete("/api/v1/search", HTTP_ACCEPT_LANGUAGE="pt-BR")
    assert response.status_code == 405
    assert response.json()["message"] == 'Method "DELETE" not allowed.'
    assert response["Content-Language"] == "en"
    # the pages keep the browser's language
    assert client.get("/", HTTP_ACCEPT_LANGUAGE="pt-BR")["Content-Language"] == "pt-BR"


@pytest.mark.parametrize("path", ["/api/v1/search", "/api/v1/cheapest", "/api/v1/venues/1"])
def test_too_many_query_parameters_is_a_400_not_a_500(client, city, path):
    query = "&".join(f"x{i}=1" for i in range(1001))
    response = client.get(f"{path}?city=sao-paulo&{query}")
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_request",
        "message": "Invalid request.",
        "issues": [{"path": "query", "message": "Too many parameters."}],
    }


def test_the_migration_gives_prices_of_known_beers_their_beers_brand(bar, formats):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("beers.migrations.0006_brand_of_known_beers")
    own = Brand.objects.create(slug="propria", name="Própria")
    house = Beer.objects.create(slug="da-casa", name="Da casa", brand=None)
    deal = deal_create(venue=bar, format=formats["garrafa_600"], price_cents=990, beer=house)
    alone = deal_create(venue=bar, format=formats["garrafa_600"], price_cents=991, brand=own)
    Deal.objects.filter(pk=deal.pk).update(brand_id=own.pk)  # as stored before the rule
    migration.follow_the_beer(apps, None)
    assert Deal.objects.get(pk=deal.pk).brand_id is None
    assert Deal.objects.get(pk=alone.pk).brand_id == own.pk


@pytest.mark.parametrize(
    "path", ["/api", "/api/", "/api/v2/search", "/api/v1/nope", "//api/v1/status", "///api/v1/x"]
)
def test_unknown_api_paths_are_json_404s(client, db, path):
    response = client.get("/", PATH_INFO=path)  # the path as sent (a URL would read // as a host)
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


@pytest.mark.parametrize("debug", [False, True])
def test_a_host_not_allowed_gets_a_json_400_under_the_api(client, db, settings, debug):
    """Refused before the API's own error handling; with DEBUG too (`make run`), where Django
    showed its traceback page and settings (an outside abuse audit: `/`, `/sao-paulo`,
    `/admin/`, `/static/…`)."""
    settings.DEBUG = debug
    for method in (client.get, client.post):
        for path in ("/api/v1/status", "/api/v1/cities.json", "/api/v1/search"):
            response = method(path, HTTP_HOST="evil.example", HTTP_ORIGIN="https://x.example")
            assert response.status_code == 400
            answer = response.json()
            assert answer["error"] == "invalid_request"
            assert [i["path"] for i in answer["issues"]] == ["Host"]
            assert "evil" not in response.content.decode()
            assert response["Access-Control-Allow-Origin"] == "*"
    for path, words in (("/sao-paulo", b"Requisi"), ("/en/sao-paulo", b"Bad request")):
        for host in ("evil.example", "evil.example:8000"):
            page = client.get(path, HTTP_HOST=host)
            assert page.status_code == 400 and words in page.content, (path, host)
            assert b"Traceback" not in page.content and b"evil" not in page.content
            assert page["Content-Security-Policy"].startswith("default-src 'none'")
    admin = client.get("/admin/", HTTP_HOST="evil.example")
    assert admin.status_code == 400 and b"Traceback" not in admin.content


def test_a_querys_own_error_does_not_mark_the_database_down(db):
    """Only an outage (no connection, the pool's timeout) closes the process's writes and
    pages for a few seconds; a query's own error answers its read alone, with the degraded
    503 when it ran out of time. Both errors come from PostgreSQL: a column that does not
    exist, then a query past its statement timeout (a slow query anybody could send closed
    every uncached read, page and write of the worker for 5 s: 21% of other addresses' reads
    answered 503 in an audit, the database healthy)."""
    from django.db import connection, transaction

    from beers import outage
    from beers.selectors.queries import SearchQuery

    if connection.vendor != "postgresql":
        pytest.skip("SQLite reports a missing column as an OperationalError")

    def run(*statements):
        def compute():
            with transaction.atomic(), connection.cursor() as cursor:
                for sql in statements:
                    cursor.execute(sql)

        return compute

    with pytest.raises(answers.ApplicationError):
        broken = run("SELECT no_such_column FROM beers_city")
        answers.answer_cached(("search", SearchQuery(city="sao-paulo")), broken)
    assert not outage.DATABASE.down()
    with pytest.raises(answers.ApplicationError) as caught:
        slow = run("SET LOCAL statement_timeout = 50", "SELECT pg_sleep(1)")
        answers.answer_cached(("search", SearchQuery(city="recife")), slow)
    assert caught.value.status == 503 and caught.value.code == "degraded"
    assert not outage.DATABASE.down()
    with pytest.raises(answers.ApplicationError):  # a lock it would not wait for
        lock = "SELECT pg_advisory_xact_lock(4242)"
        waiting = run("SET LOCAL lock_timeout = 50", lock)
        held = started(Held(lambda: connection.cursor().execute(lock)))
        try:
            answers.answer_cached(("search", SearchQuery(city="manaus")), waiting)
        finally:
            finish(held)
    assert not outage.DATABASE.down()


def test_after_the_database_failed_reads_are_degraded_at_once_for_a_few_seconds(monkeypatch):
    """A database that does not answer costs each request its timeout (3 s): after one
    failure the process answers the degraded 503 without asking, then asks again."""
    from django.db import OperationalError

    from beers.selectors.queries import SearchQuery

    calls = []

    def down():
        calls.append(1)
        raise OperationalError("connection refused")

    query = SearchQuery(city="sao-paulo")
    for _ in range(2):
        with pytest.raises(answers.ApplicationError) as caught:
            answers.answer_cached(("search", query), down)
        assert caught.value.status == 503 and caught.value.code == "degraded"
    assert len(calls) == 1  # the second did not wait for the database
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now + outage.DATABASE.seconds + 1)
    with pytest.raises(answers.ApplicationError):
        answers.answer_cached(("search", query), down)
    assert len(calls) == 2  # asked again


def test_one_per_litre_cap_written_many_ways_is_one_cached_answer(client, bar, formats):
    """The cap counts in whole cents (docs/decisions.md): `5`, `5.0`, `5.000` and `5.009` ask
    the same thing, so they share one answer instead of each costing a computation."""
    from beers.selectors.queries import parse_search

    make_deals(bar, formats, 2)
    caps = ("5", "5.0", "5.000", "5.009")
    # the answer cache's key is the query's repr (Decimal("5.0") == 5, but its repr is not)
    assert {repr(parse_search({"city": "x", "max_price_per_litre": c})) for c in caps} == {
        repr(parse_search({"city": "x", "max_price_per_litre": "5.00"}))
    }
    assert parse_search({"city": "x", "max_price_per_litre": "4.999"}).max_price_per_litre == (
        parse_search({"city": "x", "max_price_per_litre": "4.99"}).max_price_per_litre
    )
    first = client.get("/api/v1/search", {"city": "sao-paulo", "max_price_per_litre": "30"})
    again = client.get("/api/v1/search", {"city": "sao-paulo", "max_price_per_litre": "30.004"})
    assert again.json() == first.json()  # the same as_of: served from the first's entry
