"""The opt-out link: tokens, the page, one-click, one confirmation e-mail, rate limit."""

import datetime as dt
import logging
import re
import threading

import pytest
from django.db import connection, connections
from django.test import Client
from django.utils import timezone

from outreach import services
from outreach.models import Lead, LeadStatus
from outreach.tokens import check_token, make_token, optout_url
from tests.transactions import Held, finish, started

pytestmark = pytest.mark.django_db
TOKEN_PATTERN = re.compile(r"^\d{1,9}\.[A-Za-z0-9_-]{43}$")
EMAIL = "dono@boteco-do-ze.com.br"


class CommittingClient(Client):
    """A test client whose requests run their on-commit work (the confirmation e-mail is sent
    on commit) as each request ends, as they would outside the test's transaction."""

    capture = None

    def request(self, **request):
        with self.capture(execute=True):
            return super().request(**request)


@pytest.fixture
def client(django_capture_on_commit_callbacks):
    CommittingClient.capture = staticmethod(django_capture_on_commit_callbacks)
    return CommittingClient()


@pytest.fixture
def lead():
    return services.lead_create(name="Boteco do Zé", email=EMAIL)


def url(token: str) -> str:
    return f"/api/v1/optout/{token}"


def other_tokens(lead):
    """Unknown (well-formed, no such lead), invalid (bad hash), malformed."""
    valid = make_token(lead.id)
    unknown = make_token(lead.id + 1000)
    tampered = valid[:-1] + ("A" if valid[-1] != "A" else "B")
    return [unknown, tampered, "123.abc", "not-a-token", "0" + valid]


# --- tokens -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lead_id", [1, 7, 42, 123456, 999_999_999])
def test_token_has_the_documented_format_and_checks(lead_id):
    token = make_token(lead_id)
    assert TOKEN_PATTERN.fullmatch(token)
    assert len(token.split(".")[1]) == 43
    assert check_token(token) == lead_id


def test_token_depends_on_the_secret(settings):
    token = make_token(5)
    settings.OUTREACH_SECRET = "another-secret"
    assert check_token(token) is None
    assert make_token(5) != token


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "5",
        "5.",
        "1234567890." + "a" * 43,
        "05." + "a" * 43,
        "5." + "a" * 42,
        "5." + "a" * 44,
        "5." + "+" * 43,
    ],
)
def test_malformed_tokens_are_refused(bad):
    assert check_token(bad) is None


def test_token_of_one_lead_does_not_open_another():
    sig = make_token(5).split(".")[1]
    assert check_token(f"6.{sig}") is None


def test_ids_outside_nine_digits_have_no_token():
    with pytest.raises(ValueError):
        make_token(1_000_000_000)
    with pytest.raises(ValueError):
        make_token(0)


def test_optout_url_is_on_the_site(settings, lead):
    assert optout_url(lead.id) == f"{settings.SITE_URL}/api/v1/optout/{make_token(lead.id)}"


# --- GET ------------------------------------------------------------------------------------


def test_get_is_a_portuguese_page_with_one_button_posting_to_itself(client, lead):
    response = client.get(url(make_token(lead.id)))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert '<html lang="pt-BR">' in html
    assert html.count("<button") == 1
    assert html.count("<form") == 1
    assert re.search(r'<form method="post">', html)  # to itself (an empty action is no HTML)
    assert "Não quero mais receber contatos" in html
    assert response["Cache-Control"] == "no-store"
    assert response["Referrer-Policy"] == "no-referrer"
    assert response["Content-Language"] == "pt-BR"


def test_page_is_portuguese_whatever_the_browser_asks(client, lead):
    english = client.get(url(make_token(lead.id)), HTTP_ACCEPT_LANGUAGE="en")
    assert english.content == client.get(url("1.x")).content
    assert english["Content-Language"] == "pt-BR"


def test_get_is_the_same_page_for_every_token(client, lead):
    answers = [client.get(url(t)) for t in [make_token(lead.id), *other_tokens(lead)]]
    pages = {r.content for r in answers}
    assert len(pages) == 1
    assert len({tuple(sorted(r.headers.items())) for r in answers}) == 1
    assert make_token(lead.id).split(".")[1] not in pages.pop().decode()


def test_get_changes_nothing_and_sends_nothing(client, lead, mailoutbox):
    client.get(url(make_token(lead.id)))
    client.head(url(make_token(lead.id)))
    lead.refresh_from_db()
    assert lead.status == LeadStatus.NEW
    assert lead.by_email is True
    assert lead.opted_out_at is None
    assert mailoutbox == []


# --- POST -----------------------------------------------------------------------------------


def test_post_valid_token_stops_every_channel_and_sends_one_email(client, lead, mailoutbox):
    Lead.objects.filter(id=lead.id).update(by_whatsapp=True, by_phone=True)
    response = client.post(url(make_token(lead.id)))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT
    assert (lead.by_email, lead.by_whatsapp, lead.by_instagram, lead.by_phone) == (
        False,
        False,
        False,
        False,
    )
    assert lead.opted_out_at is not None
    assert len(mailoutbox) == 1
    mail = mailoutbox[0]
    assert mail.to == [EMAIL]
    assert "não receberá mais" in mail.subject
    assert "Boteco do Zé" in mail.body
    # no reply address set: no Reply-To, and no "answer this e-mail" from a no-reply sender
    assert mail.reply_to == [] and "responder" not in mail.body


@pytest.mark.browser
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_the_button_opts_out_in_a_browser(live_server, lead, settings):
    """The owner opens the link from the e-mail in Chromium and presses the one button."""
    from playwright.sync_api import expect

    from beers.tests.test_pages import browser_page

    address = f"{live_server.url}{url(make_token(lead.id))}"
    with browser_page(settings, 420) as (page, artifacts):
        page.goto(address)
        page.get_by_role("button", name="Não quero mais receber contatos").click()
        expect(page.locator("h1")).to_have_text("Pedido recebido")
        assert page.url == address  # posted back to the link itself
        page.screenshot(path=str(artifacts / "optout-done.png"), full_page=True)
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT


def test_the_confirmation_asks_for_a_reply_only_with_a_reply_address(
    client, lead, mailoutbox, settings
):
    settings.OUTREACH_REPLY_TO = "contato@breja.example"
    client.post(url(make_token(lead.id)))
    (mail,) = mailoutbox
    assert mail.reply_to == ["contato@breja.example"]
    assert "basta responder a este e-mail" in mail.body


def test_repeating_changes_nothing_and_sends_nothing(client, lead, mailoutbox):
    token = make_token(lead.id)
    first = client.post(url(token))
    lead.refresh_from_db()
    opted_out_at = lead.opted_out_at
    second = client.post(url(token))
    third = client.post(url(token), {"List-Unsubscribe": "One-Click"})
    lead.refresh_from_db()
    assert lead.opted_out_at == opted_out_at
    assert len(mailoutbox) == 1
    assert first.content == second.content == third.content


def test_invalid_unknown_and_used_tokens_get_the_same_answer(client, lead, mailoutbox):
    valid = client.post(url(make_token(lead.id)))
    used = client.post(url(make_token(lead.id)))
    others = [client.post(url(t)) for t in other_tokens(lead)]
    assert {r.status_code for r in [valid, used, *others]} == {200}
    assert len({r.content for r in [valid, used, *others]}) == 1
    assert len({tuple(sorted(r.headers.items())) for r in [valid, used, *others]}) == 1
    assert len(mailoutbox) == 1


def test_invalid_token_changes_nothing(client, lead, mailoutbox):
    for token in other_tokens(lead):
        client.post(url(token))
    lead.refresh_from_db()
    assert lead.status == LeadStatus.NEW
    assert mailoutbox == []


@pytest.mark.parametrize("how", ["urlencoded", "multipart"])
def test_rfc8058_one_click_post_opts_out(client, lead, mailoutbox, how):
    # A mail client: no cookies, no CSRF token, only the one-click body.
    client = CommittingClient(enforce_csrf_checks=True)
    if how == "urlencoded":
        response = client.post(
            url(make_token(lead.id)),
            "List-Unsubscribe=One-Click",
            content_type="application/x-www-form-urlencoded",
        )
    else:
        response = client.post(url(make_token(lead.id)), {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT
    assert len(mailoutbox) == 1


def test_page_button_post_needs_no_csrf_token(client, lead, mailoutbox):
    client = CommittingClient(enforce_csrf_checks=True)
    assert client.post(url(make_token(lead.id))).status_code == 200
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT


def test_lead_contacted_before_can_opt_out(client, lead, mailoutbox):
    Lead.objects.filter(id=lead.id).update(status=LeadStatus.REPLIED)
    client.post(url(make_token(lead.id)))
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT
    assert len(mailoutbox) == 1


def test_a_failed_send_is_retried_without_a_second_email(lead, mailoutbox, monkeypatch):
    import outreach.services as svc

    calls = []

    def broken(*args, **kwargs):
        calls.append(args)
        raise OSError(f"550 mailbox unavailable: {EMAIL}")

    Lead.objects.filter(id=lead.id).update(
        status=LeadStatus.DO_NOT_CONTACT, by_email=False, confirmation_due=True
    )
    monkeypatch.setattr("django.core.mail.EmailMessage.send", broken)
    with pytest.raises(svc.ConfirmationNotSent) as info:
        svc.optout_confirmation_send(lead_id=lead.id)
    assert EMAIL not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    monkeypatch.undo()
    assert svc.optout_confirmation_send(lead_id=lead.id) is True
    assert svc.optout_confirmation_send(lead_id=lead.id) is False
    assert len(mailoutbox) == 1


def test_mail_failure_does_not_change_the_answer(client, lead, monkeypatch, caplog):

    def broken(*args, **kwargs):
        raise OSError(f"550 refused {EMAIL}")

    monkeypatch.setattr("django.core.mail.EmailMessage.send", broken)
    response = client.post(url(make_token(lead.id)))
    assert response.status_code == 200
    assert response.content == client.post(url("1.x")).content
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT
    assert EMAIL not in caplog.text


def test_a_confirmation_lost_with_its_task_is_sent_by_the_hourly_job(
    client, lead, mailoutbox, monkeypatch
):
    """The broker down at the opt-out: the page is the same, and the job sends the one
    confirmation once the task had its time, not before, and never twice."""
    from outreach import tasks

    def broker_down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(tasks.optout_confirmation_send, "delay", broker_down)
    assert client.post(url(make_token(lead.id))).status_code == 200
    monkeypatch.undo()
    assert mailoutbox == []
    now = timezone.now()
    assert services.optout_confirmations_due(now=now) == 0  # its task may still be running
    later = now + services.CONFIRMATION_GRACE + dt.timedelta(seconds=1)
    assert services.optout_confirmations_due(now=later) == 1
    assert [m.to for m in mailoutbox] == [[EMAIL]]
    assert services.optout_confirmations_due(now=later) == 0
    assert len(mailoutbox) == 1


def test_a_lead_moved_in_the_admin_is_owed_no_confirmation(lead, mailoutbox):
    lead.status = LeadStatus.DO_NOT_CONTACT
    services.lead_save(lead)
    later = timezone.now() + dt.timedelta(hours=1)
    assert services.optout_confirmations_due(now=later) == 0
    assert services.optout_confirmation_send(lead_id=lead.id) is False
    assert mailoutbox == []


def test_a_lead_moved_in_the_admin_gets_one_confirmation_at_its_first_opt_out(
    client, lead, mailoutbox
):
    """interface.md: from any state, a valid token sends one confirmation; only a repeated
    token changes nothing."""
    lead.status = LeadStatus.DO_NOT_CONTACT
    services.lead_save(lead)
    token = make_token(lead.id)
    first = client.post(url(token))
    assert [m.to for m in mailoutbox] == [[EMAIL]]
    assert client.post(url(token)).content == first.content
    assert services.optout_confirmations_due(now=timezone.now() + dt.timedelta(hours=1)) == 0
    assert len(mailoutbox) == 1
    lead.refresh_from_db()
    assert lead.status == LeadStatus.DO_NOT_CONTACT and lead.confirmation_sent_at is not None


def test_one_mailbox_gets_one_confirmation_whichever_of_its_leads_tokens(client, mailoutbox):
    """A bar listed twice under one address: the first opt-out stops both leads and confirms
    once; the second lead's own token then changes nothing (it was mailed twice)."""
    first = services.lead_create(name="Bar da Esquina", email=EMAIL)
    twin = services.lead_create(name="Bar da Esquina (filial)", email=EMAIL.upper())
    other = services.lead_create(name="Outro Bar", email="outro@example.com")
    done = client.post(url(make_token(first.id)))
    assert [m.to for m in mailoutbox] == [[EMAIL]]
    twin.refresh_from_db()
    assert twin.status == LeadStatus.DO_NOT_CONTACT and twin.opted_out_at is not None
    assert client.post(url(make_token(twin.id))).content == done.content
    assert services.optout_confirmations_due(now=timezone.now() + dt.timedelta(hours=1)) == 0
    assert len(mailoutbox) == 1
    client.post(url(make_token(other.id)))  # another address is its own person
    assert [m.to for m in mailoutbox] == [[EMAIL], ["outro@example.com"]]


@pytest.mark.parametrize("how", ["deleted", "edited"])
def test_an_address_stays_opted_out_when_its_lead_is_deleted_or_edited(client, mailoutbox, how):
    """The opt-out was kept on the lead's row: deleting it, or giving it another address,
    made the address a new lead could be invited at."""
    from outreach.models import OptedOutAddress

    first = services.lead_create(name="Bar da Esquina", email=EMAIL)
    client.post(url(make_token(first.id)))
    if how == "deleted":
        first.delete()
    else:
        first.email = "outro@example.com"
        services.lead_save(first)
    again = services.lead_create(name="Bar da Esquina", email=f" {EMAIL.upper()} ")
    assert again.status == LeadStatus.DO_NOT_CONTACT and not again.by_email
    assert services.lead_invite(lead_id=again.id) is False
    assert [m.to for m in mailoutbox] == [[EMAIL]]  # the one confirmation
    assert OptedOutAddress.objects.count() == 1
    assert EMAIL not in str(list(OptedOutAddress.objects.values()))  # a keyed hash only


def test_the_confirmation_goes_to_the_address_that_opted_out(client, mailoutbox, monkeypatch):
    """Owed while the mail was down, then the lead was given another address: that one never
    asked. And a lead given an address that had opted out already sends it nothing more."""
    first = services.lead_create(name="Bar da Esquina", email=EMAIL)

    def down(*args, **kwargs):
        raise ConnectionRefusedError

    monkeypatch.setattr("django.core.mail.EmailMessage.send", down)
    client.post(url(make_token(first.id)))
    assert mailoutbox == []
    monkeypatch.undo()
    first.refresh_from_db()
    first.email = "novo@example.com"
    services.lead_save(first)
    later = timezone.now() + dt.timedelta(hours=1)
    assert services.optout_confirmations_due(now=later) == 1
    assert [m.to for m in mailoutbox] == [[EMAIL]]
    first.refresh_from_db()
    assert first.optout_email is None  # not kept once sent

    moved = services.lead_create(name="Outro Bar", email="outro@example.com")
    moved.email = EMAIL  # a moderator gives it the address that opted out
    services.lead_save(moved)
    client.post(url(make_token(moved.id)))  # its token, mailed before the edit
    assert [m.to for m in mailoutbox] == [[EMAIL]]
    moved.refresh_from_db()
    assert moved.status == LeadStatus.DO_NOT_CONTACT


def test_a_twin_moved_in_the_admin_is_confirmed_by_the_first_opt_out(client, mailoutbox):
    first = services.lead_create(name="Bar da Esquina", email=EMAIL)
    twin = services.lead_create(name="Bar da Esquina (filial)", email=EMAIL)
    twin.status = LeadStatus.DO_NOT_CONTACT
    services.lead_save(twin)
    client.post(url(make_token(first.id)))
    client.post(url(make_token(twin.id)))
    assert [m.to for m in mailoutbox] == [[EMAIL]]


@pytest.mark.django_db(transaction=True)
def test_opt_outs_of_two_leads_of_one_address_at_once_never_deadlock(mailoutbox):
    """Each opt-out locked its lead, then the sibling: two at once deadlocked and one valid
    token got 503 (7 of 8 runs). Arranged so that the old order deadlocks every time: a third
    transaction holds the second lead, its own opt-out queues for it, then the first's."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite serialises writers; the race needs PostgreSQL")
    first = services.lead_create(name="Bar do Canto", email=EMAIL)
    second = services.lead_create(name="Bar do Canto (filial)", email=EMAIL)
    hold = started(Held(lambda: list(Lead.objects.select_for_update().filter(pk=second.pk))))
    b = started(Held(lambda: services.lead_opt_out(lead_id=second.id)))
    a = started(Held(lambda: services.lead_opt_out(lead_id=first.id)))
    finish(hold)
    finish(b, a)
    assert (a.error, b.error) == (None, None)
    assert sorted([a.result, b.result]) == [False, True]  # one move, one confirmation owed
    assert set(Lead.objects.values_list("status", flat=True)) == {LeadStatus.DO_NOT_CONTACT}


@pytest.mark.django_db(transaction=True)
def test_concurrent_posts_send_one_email(mailoutbox):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite serialises writers; the race needs PostgreSQL")
    lead = services.lead_create(name="Bar do Meio", email="meio@example.com")
    token = make_token(lead.id)
    barrier = threading.Barrier(6)
    answers = []

    def post():
        try:
            barrier.wait()
            answers.append(Client().post(url(token)).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [200] * 6
    assert len(mailoutbox) == 1


# --- limits and methods ---------------------------------------------------------------------


def test_rate_limit_answers_429_json_with_retry_after(client, lead, settings):
    settings.READ_RATE_LIMIT = "2/min"
    assert client.get(url(make_token(lead.id))).status_code == 200
    assert client.post(url("1.x")).status_code == 200
    response = client.get(url(make_token(lead.id)))
    assert response.status_code == 429
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "rate_limited"
    assert int(response["Retry-After"]) >= 1
    post = client.post(url(make_token(lead.id)))
    assert post.status_code == 429
    assert post.json()["error"] == "rate_limited"
    lead.refresh_from_db()
    assert lead.status == LeadStatus.NEW


def test_rate_limit_is_per_client_address(client, lead, settings):
    settings.READ_RATE_LIMIT = "1/min"
    assert client.get(url("1.x"), REMOTE_ADDR="10.0.0.1").status_code == 200
    assert client.get(url("1.x"), REMOTE_ADDR="10.0.0.1").status_code == 429
    assert client.get(url("1.x"), REMOTE_ADDR="10.0.0.2").status_code == 200


@pytest.mark.parametrize("method", ["put", "delete", "patch"])
def test_other_methods_are_405_json(client, lead, method):
    response = getattr(client, method)(url(make_token(lead.id)))
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
    assert "POST" in response["Allow"]
    lead.refresh_from_db()
    assert lead.status == LeadStatus.NEW


@pytest.mark.parametrize("path", ["1.x/more", "1.x/", "a%2Fb", "1.x//", "1.x%0A", "a%0Ab", "%0A"])
def test_a_token_with_slashes_or_line_breaks_gets_the_same_page(client, lead, path, mailoutbox):
    """Same status, headers and bytes: a line break in the path fell outside the CORS
    pattern (`.` stops at a newline), and the answer lacked Access-Control-Allow-Origin."""
    origin = {"HTTP_ORIGIN": "https://other.example"}
    pages = {method: method(url("not-a-token"), **origin) for method in (client.get, client.post)}
    for method, page in pages.items():
        response = method(f"/api/v1/optout/{path}", **origin)
        assert response.status_code == 200
        assert response.content == page.content
        assert dict(response.headers) == dict(page.headers)
        assert response["Access-Control-Allow-Origin"] == "*"
    assert mailoutbox == []
    assert Lead.objects.get(pk=lead.pk).status == LeadStatus.NEW


def test_the_opt_out_prefix_alone_is_a_json_404(client):
    response = client.get("/api/v1/optout/")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


# --- privacy --------------------------------------------------------------------------------


def test_email_is_encrypted_in_the_database(lead):
    with connection.cursor() as cursor:
        cursor.execute("SELECT email, email_index FROM outreach_lead WHERE id = %s", [lead.id])
        raw, index = cursor.fetchone()
    assert EMAIL not in raw and "boteco" not in raw
    assert EMAIL not in index
    assert Lead.objects.get(id=lead.id).email == EMAIL


def test_lead_found_by_blind_index_of_any_spelling(lead):
    from beers.crypto import blind_index

    assert Lead.objects.filter(email_index=blind_index(" DONO@boteco-do-ze.com.br ")).get() == lead


def test_lead_str_never_shows_the_email(lead):
    assert EMAIL not in str(lead)


def test_an_outage_answers_503_and_logs_no_token(client, lead, monkeypatch):
    """The token alone opts a lead out: it must not reach a log line, not even when the
    database is down (it was logged with the path of the 500). Django's own request log is
    read here through a handler of its own: it does not propagate to the root."""
    from django.db import OperationalError

    def down(**kwargs):
        raise OperationalError("the database is down")

    monkeypatch.setattr(services, "lead_opt_out", down)
    token = make_token(lead.pk)
    lines: list[str] = []  # as each record reaches a handler (records are mutable)
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(
        record.getMessage()
        + (logging.Formatter().formatException(record.exc_info) if record.exc_info else "")
    )
    loggers = [logging.getLogger(), logging.getLogger("django.request")]
    for logger in loggers:
        logger.handlers.insert(0, handler)  # before ours: it sees the record as logged
    try:
        response = client.post(url(token))
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert int(response["Retry-After"]) > 0
    assert any("optout" in line for line in lines)  # Django logged the 503, path masked
    assert not any(token in line for line in lines)


def test_an_outage_answers_every_token_alike(client, lead, mailoutbox):
    """The database refusing every query: a valid, a used and an invalid token all get the
    same 503 (a valid one alone reaching the database told tokens apart)."""
    from django.db import OperationalError

    used = services.lead_create(name="Bar Antigo", email="antigo@example.com")
    client.post(url(make_token(used.id)))

    def refuse(execute, sql, params, many, context):
        raise OperationalError("the database is down")

    tokens = [make_token(lead.id), make_token(used.id), *other_tokens(lead)]
    with connection.execute_wrapper(refuse):
        answers = [client.post(url(token)) for token in tokens]
    assert {r.status_code for r in answers} == {503}
    assert len({r.content for r in answers}) == 1
    assert len({tuple(sorted(r.headers.items())) for r in answers}) == 1
    assert answers[0].json()["error"] == "unavailable"
    lead.refresh_from_db()
    assert lead.status == LeadStatus.NEW


def test_while_the_database_is_known_down_every_token_gets_the_503_at_once(
    client, lead, django_assert_num_queries
):
    """Each POST waited out the pool's 3 s, valid or not, while the live reads skipped the
    database for a few seconds after a failure."""
    from beers import outage

    outage.DATABASE.failed()
    with django_assert_num_queries(0):
        answers = [client.post(url(t)) for t in (make_token(lead.id), *other_tokens(lead))]
    assert {r.status_code for r in answers} == {503}
    assert len({r.content for r in answers}) == 1
    lead.refresh_from_db()
    assert lead.status == LeadStatus.NEW


def test_log_lines_never_carry_an_opt_out_token(lead):
    """Whatever logs a path (Django's 'Internal Server Error: …'), the handlers mask it."""
    from django.conf import settings

    from config.logfilters import RedactSecrets

    token = make_token(lead.pk)
    record = logging.LogRecord(
        "django.request",
        logging.ERROR,
        __file__,
        1,
        "Internal Server Error: %s",
        (f"/api/v1/optout/{token}",),
        None,
    )
    assert RedactSecrets().filter(record)
    assert record.getMessage() == "Internal Server Error: /api/v1/optout/[redacted]"
    assert "redact" in settings.LOGGING["handlers"]["console"]["filters"]
    assert "redact" in settings.LOGGING["loggers"]["django.request"]["filters"]
