"""Site pages: home, a city's ranking and a bar, in pt-BR and en; 404s; reserved prefixes."""

import contextlib
import datetime as dt

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from beers.models import Beer, Brand, City, Deal, Format, Neighbourhood, Venue
from beers.services import deal_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def city():
    return City.objects.create(
        slug="sao-paulo",
        name="São Paulo",
        state="SP",
        timezone="America/Sao_Paulo",
        lat=-23.55,
        lng=-46.63,
        active=True,
    )


@pytest.fixture
def world(city):
    """Two bars with prices; a third bar with none; an inactive city."""
    hood = Neighbourhood.objects.create(city=city, slug="vila-madalena", name="Vila Madalena")
    garrafa = Format.objects.create(
        code="garrafa_600",
        type="garrafa",
        volume_ml=600,
        label_pt="Garrafa 600 ml",
        label_en="600 ml bottle",
    )
    lata = Format.objects.create(
        code="lata_350", type="lata", volume_ml=350, label_pt="Lata 350 ml", label_en="350 ml can"
    )
    brahma = Brand.objects.create(slug="brahma", name="Brahma")
    beer = Beer.objects.create(slug="brahma-chopp", name="Brahma Chopp", brand=brahma)
    ze = Venue.objects.create(
        city=city,
        slug="boteco-do-ze",
        name="Boteco do Zé",
        kind="boteco",
        lat=-23.55,
        lng=-46.69,
        neighbourhood=hood,
        address="Rua Aspicuelta, 100",
        instagram="botecodoze",
        attributes=["musica_ao_vivo"],
    )
    bar = Venue.objects.create(
        city=city, slug="bar-da-praca", name="Bar da Praça", kind="bar", lat=-23.56, lng=-46.68
    )
    Venue.objects.create(
        city=city, slug="sem-preco", name="Sem Preço", kind="bar", lat=-23.56, lng=-46.68
    )
    now = timezone.now()
    deal_create(venue=ze, format=garrafa, beer=beer, price_cents=1290, verified_at=now)
    deal_create(
        venue=ze,
        format=lata,
        beer=beer,
        price_cents=590,
        kind="happy_hour",
        schedules=[{"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"}],
        verified_at=now - dt.timedelta(days=100),
    )
    deal_create(venue=bar, format=garrafa, brand=brahma, price_cents=1500, verified_at=now)
    City.objects.create(
        slug="recife",
        name="Recife",
        state="PE",
        timezone="America/Recife",
        lat=-8.05,
        lng=-34.9,
        active=False,
    )
    return {"ze": ze, "bar": bar}


def text(response) -> str:
    return response.content.decode()


# --- home ------------------------------------------------------------------------------------


def test_home_lists_active_cities_with_links(client, world):
    response = client.get("/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = text(response)
    assert '<html lang="pt-BR">' in html
    assert '<a href="/sao-paulo">São Paulo</a>' in html
    assert "Recife" not in html


def test_home_in_english(client, world):
    html = text(client.get("/en"))
    assert '<html lang="en">' in html
    assert '<a href="/en/sao-paulo">São Paulo</a>' in html
    assert "Cheapest beer per litre" in html


def test_each_home_is_its_own_canonical_and_names_the_other(client, world, settings):
    for path, other in (("/", "/en"), ("/en", "/")):
        html = text(client.get(path))
        site = settings.SITE_URL
        assert f'<link rel="canonical" href="{site}{path}">' in html, path
        assert f'hreflang="{"en" if other == "/en" else "pt-BR"}" href="{site}{other}"' in html


def test_every_page_credits_the_source_and_links_the_open_data(client, world, settings):
    for path in ("/", "/en", "/sao-paulo", "/en/sao-paulo/boteco-do-ze", "/nowhere"):
        html = text(client.get(path))
        assert settings.ATTRIBUTION in html, path
        assert "ODbL" in html
        assert 'href="/api/v1/index.json"' in html
        assert 'href="/api/v1/docs"' in html


# --- city ------------------------------------------------------------------------------------


def test_city_page_ranks_prices_per_litre_with_bar_links(client, world):
    response = client.get("/sao-paulo")
    assert response.status_code == 200
    html = text(response)
    # The city's name leads: no preposition to get wrong ("em Rio de Janeiro").
    assert "<title>São Paulo: cerveja mais barata por litro · " in html
    assert "<h1>São Paulo: cerveja mais barata por litro</h1>" in html
    assert 'content="São Paulo: onde a cerveja é mais barata por litro, com preços' in html
    # Cheapest per litre first: 5,90/0,35 L = 16,86; 12,90/0,6 L = 21,50; 15,00/0,6 L = 25,00.
    order = [html.index(s) for s in ("R$ 16,86/L", "R$ 21,50/L", "R$ 25,00/L")]
    assert order == sorted(order)
    assert '<a href="/sao-paulo/boteco-do-ze">Boteco do Zé</a>' in html
    assert '<a href="/sao-paulo/bar-da-praca">Bar da Praça</a>' in html
    assert "R$ 12,90" in html and "Garrafa 600 ml" in html
    assert "Happy hour" in html and "seg–sex 17h–20h" in html
    assert "pode estar desatualizado" in html  # checked 100 days ago
    assert "Sem Preço" not in html
    assert 'href="/api/v1/search?city=sao-paulo&amp;limit=50"' in html


def test_city_page_in_english(client, world):
    response = client.get("/en/sao-paulo")
    assert response.status_code == 200
    html = text(response)
    assert '<html lang="en">' in html
    assert "Cheapest beer per litre in São Paulo" in html
    assert "R$21.50/L" in html and "600 ml bottle" in html
    assert '<a href="/en/sao-paulo/boteco-do-ze">Boteco do Zé</a>' in html
    assert "may be out of date" in html
    assert "Mon–Fri 5–8 pm" in html
    assert 'href="/sao-paulo"' in html  # the Portuguese version


def test_language_comes_from_the_address_not_the_browser(client, world):
    html = text(client.get("/sao-paulo", HTTP_ACCEPT_LANGUAGE="en"))
    assert "cerveja mais barata por litro" in html
    html = text(client.get("/en/sao-paulo", HTTP_ACCEPT_LANGUAGE="pt-BR"))
    assert "Cheapest beer per litre" in html


def test_city_page_without_prices_says_so(client, city):
    html = text(client.get("/sao-paulo"))
    assert "Ainda não há preços nesta cidade." in html


def test_city_page_reads_with_a_fixed_number_of_queries(
    client, world, django_assert_max_num_queries
):
    client.get("/sao-paulo")  # loads the per-process catalogue snapshot (beers.selectors.names)
    with django_assert_max_num_queries(2):  # the city, the ranked prices
        client.get("/sao-paulo")


# --- bar -------------------------------------------------------------------------------------


def test_bar_page_shows_details_and_prices(client, world):
    response = client.get("/sao-paulo/boteco-do-ze")
    assert response.status_code == 200
    html = text(response)
    assert "<h1>Boteco do Zé</h1>" in html
    assert "Vila Madalena" in html and "Rua Aspicuelta, 100" in html
    assert "@botecodoze" in html and "Música ao vivo" in html
    assert "R$ 12,90" in html and "R$ 5,90" in html
    assert html.index("R$ 16,86/L") < html.index("R$ 21,50/L")
    assert "Bar da Praça" not in html
    assert '<a href="/sao-paulo">← São Paulo</a>' in html
    assert f'href="/api/v1/venues/{world["ze"].id}"' in html


def test_the_sender_is_credited_by_nickname_where_the_price_shows(client, world):
    credited = Deal.objects.filter(venue=world["ze"]).order_by("pk").first()
    Deal.objects.filter(pk=credited.pk).update(credit="zeca <b>")
    for path, words in (
        ("/sao-paulo/boteco-do-ze", "enviado por zeca &lt;b&gt;"),
        ("/sao-paulo", "enviado por zeca &lt;b&gt;"),
        ("/en/sao-paulo/boteco-do-ze", "sent by zeca &lt;b&gt;"),
    ):
        html = client.get(path).content.decode()
        assert html.count(words) == 1, path  # the one credited price, escaped
    Deal.objects.filter(pk=credited.pk).update(credit="")
    cache.clear()
    assert "enviado por" not in client.get("/sao-paulo/boteco-do-ze").content.decode()


def test_bar_page_in_english(client, world):
    html = text(client.get("/en/sao-paulo/boteco-do-ze"))
    assert '<html lang="en">' in html
    assert "Live music" in html and "Prices" in html
    assert "R$12.90" in html
    assert '<a href="/en/sao-paulo">← São Paulo</a>' in html


def test_bar_without_prices_has_a_page(client, world):
    response = client.get("/sao-paulo/sem-preco")
    assert response.status_code == 200
    assert "Não há preços atuais deste bar." in text(response)


# --- 404 and reserved prefixes -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/curitiba",
        "/en/curitiba",
        "/recife",
        "/sao-paulo/no-bar",
        "/en/sao-paulo/no-bar",
        "/recife/boteco-do-ze",
        "/Sao-Paulo",
        "/sao--paulo",
        "/sao-paulo/x/y",
    ],
)
def test_unknown_city_or_bar_is_an_html_404(client, world, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "<h1>" in text(response)


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/sao-paulo/", "/sao-paulo"),
        ("/en/", "/en"),
        ("/en/sao-paulo/", "/en/sao-paulo"),
        ("/sao-paulo/boteco-do-ze/?x=1", "/sao-paulo/boteco-do-ze?x=1"),
    ],
)
def test_a_trailing_slash_leads_to_the_page(client, world, path, target):
    response = client.get(path)
    assert (response.status_code, response["Location"]) == (301, target)
    assert response["Cache-Control"] == "public, max-age=600"
    assert client.get(target).status_code == 200


def test_404_speaks_the_language_of_the_address(client, world):
    assert "Página não encontrada" in text(client.get("/curitiba"))
    assert "Page not found" in text(client.get("/en/curitiba"))


@pytest.mark.parametrize("slug", ["admin", "api", "static", "mcp", "en"])
def test_reserved_words_are_never_city_pages(client, slug):
    from django.urls import Resolver404, resolve

    paths = [f"/{slug}", f"/en/{slug}", f"/en/{slug}/x"]
    if slug != "en":  # /en/x is the English page of a city "x"
        paths.append(f"/{slug}/x")
    for path in paths:
        try:
            match = resolve(path)
        except Resolver404:
            continue
        assert match.url_name not in {"city", "venue", "city-en", "venue-en"}, path


def test_reserved_prefixes_keep_their_own_answers(client, world):
    assert client.get("/admin/").status_code == 302  # the admin's login
    assert client.get("/admin").status_code == 301  # slash appended, not a city
    api = client.get("/api/v1/search?city=sao-paulo")
    assert api.status_code == 200 and api["Content-Type"] == "application/json"
    missing = client.get("/api/v1/nothing-here")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert client.get("/api").status_code == 404
    assert "text/html" not in client.get("/api/x")["Content-Type"]


@pytest.mark.parametrize(
    ("path", "words"),
    [("/Nada.html", "Página não encontrada"), ("/en/Nothing/at/all", "Page not found")],
)
def test_any_unknown_page_is_the_site_404(client, path, words):
    response = client.get(path)
    assert response.status_code == 404
    assert words in text(response)


@pytest.mark.parametrize(
    ("path", "lang"),
    [
        ("/favicon.ico", "pt-BR"),
        ("/Sao-Paulo", "pt-BR"),
        ("/en/sao-paulo/boteco-do-ze/extra", "en"),
        ("/en/api", "en"),
        ("/static/nope.css", "pt-BR"),
    ],
)
def test_with_debug_too_an_unknown_address_is_the_site_404(client, world, settings, path, lang):
    """`make run` runs with DEBUG: addresses no pattern matched got Django's own 404 page, in
    English, listing every URL pattern (admin ones included)."""
    settings.DEBUG = True
    response = client.get(path)
    assert response.status_code == 404 and response["Content-Language"] == lang
    assert f'<html lang="{lang}"' in text(response) and "urlpatterns" not in text(response)
    assert response["Cache-Control"] == "public, max-age=60"  # an error kept a minute, no more
    assert client.get("/api/nope").json()["error"] == "not_found"  # the API's stay JSON
    assert client.get("/admin").status_code == 301


def test_the_icon_address_is_a_valid_url(client, world):
    """The Nu validator refused every page: spaces in the icon's data: URL."""
    import re

    href = re.search(r'<link rel="icon" href="([^"]*)"', text(client.get("/sao-paulo")))[1]
    assert href.startswith("data:image/svg+xml,") and not re.search(r"\s", href)


# --- a real browser ---------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium_or_skip() -> str:
    """The browser, or a skip on a developer machine without it; in CI (CI=true) its absence
    is a failure: .ci/run installs it."""
    import os
    import shutil

    if os.path.exists(CHROMIUM) or shutil.which("chromium"):
        return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if os.environ.get("CI") == "true":
        pytest.fail(f"chromium is missing at {CHROMIUM}; browser tests cannot run in CI")
    pytest.skip("chromium not installed (apt-get install chromium)")


@contextlib.contextmanager
def browser_page(settings, width: int, height: int = 800):
    """A pt-BR page of a headless Chromium of this size, and the folder for screenshots."""
    from playwright.sync_api import sync_playwright

    executable = _chromium_or_skip()
    artifacts = settings.BASE_DIR / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield (
                browser.new_page(locale="pt-BR", viewport={"width": width, "height": height}),
                (artifacts),
            )
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_browser_opens_a_city_clicks_a_bar_and_sees_its_prices(live_server, world, settings):
    from playwright.sync_api import expect

    with browser_page(settings, 1000) as (page, artifacts):
        page.goto(f"{live_server.url}/sao-paulo")
        expect(page.locator("h1")).to_have_text("São Paulo: cerveja mais barata por litro")
        rows = page.locator("table.deals tbody tr")
        expect(rows).to_have_count(3)
        expect(rows.first.locator("td.per-litre")).to_have_text("R$ 16,86/L")
        page.screenshot(path=str(artifacts / "city-sao-paulo.png"), full_page=True)

        page.get_by_role("link", name="Bar da Praça").click()
        page.wait_for_url(f"{live_server.url}/sao-paulo/bar-da-praca")
        expect(page.locator("h1")).to_have_text("Bar da Praça")
        expect(page.locator("table.deals tbody tr")).to_have_count(1)
        expect(page.locator("td.per-litre")).to_have_text("R$ 25,00/L")
        page.screenshot(path=str(artifacts / "bar-bar-da-praca.png"), full_page=True)

        page.get_by_role("link", name="English").click()
        page.wait_for_url(f"{live_server.url}/en/sao-paulo/bar-da-praca")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        expect(page.get_by_role("heading", name="Prices")).to_be_visible()


@pytest.mark.browser
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_on_a_phone_every_price_shows_whole_with_its_per_litre_and_age(
    live_server, world, settings
):
    """375 px wide: nothing to scroll sideways, and the figures that were cut off (the price
    per litre) or hidden (the checked date and its out-of-date flag) are on screen. A bar's
    longest handle (30 characters, no break in it) widened its details to 418 px."""
    from playwright.sync_api import expect

    Venue.objects.filter(pk=world["ze"].pk).update(instagram="boteco_da_praca_da_liberdade_1")
    notes = 0  # the small print under a bar's or a beer's name: not bold like the name
    with browser_page(settings, 375) as (page, artifacts):
        for path in ("/sao-paulo", "/sao-paulo/boteco-do-ze", "/en/sao-paulo"):
            page.goto(f"{live_server.url}{path}")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 375, (path, width)
            for note in page.locator("td.lead small").all():
                assert note.evaluate("e => getComputedStyle(e).fontWeight") == "400", path
                notes += 1
            for cell in page.locator("td.per-litre").all():
                expect(cell).to_be_visible()
                box = cell.bounding_box()
                assert box["x"] >= 0 and box["x"] + box["width"] <= 375, (path, box)
            expect(page.locator("small.old")).to_be_visible()  # the 100-day-old price
            expect(page.locator("time").first).to_be_visible()
        page.screenshot(path=str(artifacts / "city-sao-paulo-375px.png"), full_page=True)
    assert notes


@pytest.mark.browser
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_pages_break_no_rule_of_their_content_security_policy(live_server, world, settings):
    """Each kind of page, under its policy: nothing refused (a refusal is a console error)."""
    from beers.csp import PAGE_POLICY

    errors = []
    with browser_page(settings, 1000) as (page, _):
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        for path in ("/", "/sao-paulo", "/sao-paulo/boteco-do-ze", "/en/sao-paulo", "/x/y/z"):
            response = page.goto(f"{live_server.url}{path}")
            assert response.headers["content-security-policy"] == PAGE_POLICY, path
            assert page.evaluate("getComputedStyle(document.body).margin") != "8px", path
    assert [e for e in errors if "404" not in e] == []


def test_only_the_sites_own_pages_get_its_policy(client, world, admin_client):
    from beers.csp import PAGE_POLICY

    assert client.get("/sao-paulo")["Content-Security-Policy"] == PAGE_POLICY
    assert client.get("/nowhere")["Content-Security-Policy"] == PAGE_POLICY  # the 404 page
    optout = client.get("/api/v1/optout/1." + "a" * 43)  # the same page for every token
    assert optout.status_code == 200 and optout["Content-Security-Policy"] == PAGE_POLICY
    for path in ("/admin/", "/api/v1/docs", "/api/v1/cities.json", "/api/v1/status"):
        assert "Content-Security-Policy" not in admin_client.get(path), path


# --- page details -----------------------------------------------------------------------------


def test_pages_pair_their_languages_and_describe_themselves(client, world, settings):
    html = text(client.get("/sao-paulo/boteco-do-ze"))
    site = settings.SITE_URL
    assert f'<link rel="alternate" hreflang="pt-BR" href="{site}/sao-paulo/boteco-do-ze">' in html
    assert f'<link rel="alternate" hreflang="en" href="{site}/en/sao-paulo/boteco-do-ze">' in html
    assert '<meta name="description" content="Preços de cerveja em Boteco do Zé' in html
    assert '<link rel="icon" href="data:image/svg+xml' in html  # no /favicon.ico 404
    assert "hreflang" not in text(client.get("/curitiba")).split("<body>")[0]  # a 404 pairs nothing


def test_english_pages_write_dates_as_words(client, world):
    today = timezone.localdate(timezone=dt.timezone(dt.timedelta(hours=-3)))
    english = text(client.get("/en/sao-paulo/boteco-do-ze"))
    assert f">{today:%b} {today.day}, {today.year}</time>" in english
    assert f">{today:%d/%m/%Y}</time>" in text(client.get("/sao-paulo/boteco-do-ze"))


@pytest.mark.parametrize("method", ["post", "put", "delete", "options"])
def test_pages_answer_other_methods_405(client, world, method):
    for path in ("/", "/sao-paulo", "/en/sao-paulo/boteco-do-ze"):
        response = getattr(client, method)(path)
        assert response.status_code == 405, (method, path)
        assert response["Allow"] == "GET, HEAD"


def test_answers_vary_on_the_browser_language_only_in_the_admin(client, world, admin_client):
    """Pages take their language from the address, the API from `lang`: a shared cache keeps
    one copy of each, whatever the browsers' Accept-Language."""
    for path in ("/", "/sao-paulo", "/api/v1/search?city=sao-paulo", "/api/v1/status"):
        response = client.get(path, HTTP_ACCEPT_LANGUAGE="en")
        assert "Accept-Language" not in response.get("Vary", ""), path
    assert text(client.get("/sao-paulo", HTTP_ACCEPT_LANGUAGE="en")).startswith(
        '<!doctype html>\n<html lang="pt-BR">'
    )
    admin = admin_client.get("/admin/", HTTP_ACCEPT_LANGUAGE="en")
    assert "Accept-Language" in admin["Vary"] and admin["Content-Language"] == "en"
    # the admin's language does not stay on the thread for the next request
    assert "Não há preços atuais deste bar." in text(client.get("/sao-paulo/sem-preco"))


def test_home_is_cached_like_the_other_pages(client, world, settings):
    assert client.get("/")["Cache-Control"] == f"public, max-age={settings.LIVE_CACHE_SECONDS}"


def test_a_city_page_cut_at_50_says_so_and_links_every_price(client, world, monkeypatch):
    from beers import views

    assert "deals.csv" not in text(client.get("/sao-paulo")).split("<footer>")[0]
    monkeypatch.setattr(views, "PAGE_LIMIT", 2)
    html = text(client.get("/sao-paulo")).split("<footer>")[0]
    assert "Estes são os 2 preços mais baratos por litro." in html
    assert 'href="/api/v1/sao-paulo/deals.csv"' in html


def test_robots_keep_crawlers_off_the_live_answers(client):
    response = client.get("/robots.txt")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    assert "Disallow: /api/v1/search" in text(response) and "Disallow: /admin/" in text(response)


def test_api_docs_need_no_outside_host(client):
    html = text(client.get("/api/v1/docs"))
    assert "/static/drf_spectacular_sidecar/redoc/" in html
    assert "https://" not in html
    assert '<html lang="en">' in html and '<redoc spec-url="/api/v1/openapi.json">' in html


# --- degraded mode ----------------------------------------------------------------------------


def test_pages_answer_503_with_the_datasets_while_degraded(client, world):
    from beers import degraded

    degraded.switch_on(retry_after=60)
    for path, words in [
        ("/sao-paulo", "Temporariamente indisponível"),
        ("/en/sao-paulo/boteco-do-ze", "Temporarily unavailable"),
        ("/", ""),
    ]:
        response = client.get(path)
        assert response.status_code == 503, path
        assert response["Retry-After"] == "60"
        assert words in text(response)
        assert 'href="/api/v1/index.json"' in text(response)
    degraded.switch_off()
    assert client.get("/sao-paulo").status_code == 200


def test_pages_answer_503_when_the_database_fails(client, world, monkeypatch):
    from django.db import OperationalError

    from beers.selectors import ranking

    def down(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(ranking, "search", down)
    response = client.get("/sao-paulo")
    assert response.status_code == 503
    assert "Temporariamente indisponível" in text(response)


def test_pages_answer_503_at_once_while_the_database_is_known_down(
    client, world, django_assert_num_queries
):
    """Each page waited out the pool's timeout (3 s) while the live reads skipped it."""
    from beers import outage

    client.get("/sao-paulo")
    outage.DATABASE.failed()
    with django_assert_num_queries(0):
        response = client.get("/recife")
    assert response.status_code == 503 and "Retry-After" in response


def test_closed_bar_page_says_so_and_lists_no_prices(client, world):
    Venue.objects.filter(id=world["ze"].id).update(status="closed")
    html = text(client.get("/sao-paulo/boteco-do-ze"))
    assert "Este bar fechou." in html
    assert '<meta name="robots" content="noindex">' in html
    assert "R$ 12,90" not in html
    assert "Boteco do Zé" not in text(client.get("/sao-paulo"))


@pytest.mark.parametrize(
    ("prefix", "words"), [("", "Muitos pedidos"), ("/en", "Too many requests")]
)
def test_pages_share_the_read_limit_per_address(client, world, settings, prefix, words):
    """One address asked for a city page 3,087 times in 30 s: pages count like the live
    reads (READ_RATE_LIMIT per address, their own group) and answer a 429 page past it."""
    settings.READ_RATE_LIMIT = "3/min"
    cache.clear()
    for path in (prefix or "/", f"{prefix}/sao-paulo", f"{prefix}/sao-paulo/boteco-do-ze"):
        assert client.get(path).status_code == 200
    response = client.get(f"{prefix}/sao-paulo")
    assert response.status_code == 429
    assert words in response.content.decode()
    assert 0 < int(response["Retry-After"]) <= 60
    assert response["Cache-Control"] == "no-store"
    other = Client(REMOTE_ADDR="203.0.113.99")  # another address has its own count
    assert other.get(f"{prefix}/sao-paulo").status_code == 200
