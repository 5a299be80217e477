"""End to end in a real browser: a visitor sends a price through the API, a moderator logs in
to the admin, approves it, and the price is in /api/v1/search."""

import json

import pytest

from beers.tests.test_pages import CHROMIUM_ARGS, _chromium_or_skip
from submissions.moderators import moderator_create
from submissions.tests.conftest import World
from submissions.turnstile import ALWAYS_PASS

PASSWORD = "Cerveja-gelada-42"


@pytest.mark.browser
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_moderator_approves_a_visitors_price_in_the_browser(live_server, settings):
    from playwright.sync_api import expect, sync_playwright

    from config.celery import app

    executable = _chromium_or_skip()
    settings.TURNSTILE_SECRET_KEY = ALWAYS_PASS
    settings.TURNSTILE_HOSTNAMES = []
    settings.WRITE_RATE_LIMIT = "off"
    eager, app.conf.task_always_eager = app.conf.task_always_eager, True
    world = World()
    moderator_create(username="ana", password=PASSWORD)
    artifacts = settings.BASE_DIR / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    base = live_server.url
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(locale="pt-BR", viewport={"width": 420, "height": 900})
                sent = page.request.post(
                    f"{base}/api/v1/submissions",
                    headers={"Content-Type": "application/json"},
                    data=json.dumps(
                        {
                            "city": "sao-paulo",
                            "venue": {"id": world.venue.pk},
                            "beer": "Original",
                            "format_code": "garrafa_600",
                            "price": 8.4,
                            "nickname": "Visitante",
                            "turnstile": "token",
                        }
                    ),
                )
                assert sent.status == 202 and sent.json() == {"status": "received"}
                before = page.request.get(f"{base}/api/v1/search?city=sao-paulo&limit=50").json()
                assert "Original" not in [d["beer"] for d in before["deals"]]

                page.goto(f"{base}/admin/submissions/pricesubmission/")
                page.fill("#id_username", "ana")
                page.fill("#id_password", PASSWORD)
                page.locator("input[type=submit]").click()
                page.wait_for_url(f"{base}/admin/submissions/pricesubmission/")
                row = page.locator("#result_list tbody tr").first
                expect(row).to_contain_text("R$ 14,00/L")  # 8,40 / 0,6 L
                row.locator("a").first.click()
                expect(page.locator("table.review-summary")).to_contain_text("Original")
                page.screenshot(path=str(artifacts / "moderation-review.png"), full_page=True)

                page.locator("button[name=decision][value=approve]").click()
                page.wait_for_url(f"{base}/admin/submissions/pricesubmission/")
                expect(page.locator("ul.messagelist")).to_contain_text("aprovado")
                page.screenshot(path=str(artifacts / "moderation-approved.png"), full_page=True)

                # A different question than the one asked before approval: not a cached answer.
                after = page.request.get(f"{base}/api/v1/search?city=sao-paulo&limit=49").json()
                live = [d for d in after["deals"] if d["beer"] == "Original"]
                assert [(d["venue"], d["price_brl"], d["price_per_litre_brl"]) for d in live] == [
                    ("Bar do Zé", 8.4, 14.0)
                ]
            finally:
                browser.close()
    finally:
        app.conf.task_always_eager = eager
