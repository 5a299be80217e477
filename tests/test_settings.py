"""Settings from the environment: production refuses to start unsafe, deploy checks pass."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent


def _manage(*args, **env):
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "ENVIRONMENT", "DJANGO_SECRET_KEY", "DJANGO_SETTINGS_MODULE"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_refuses_to_start_without_a_secret_key():
    result = _manage("check")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY is required" in result.stderr


def test_debug_does_not_excuse_the_secrets_outside_development():
    """With DEBUG on and ENVIRONMENT=production, contacts were encrypted (and addresses hashed)
    under the published development key."""
    for env in ({}, {"DJANGO_SECRET_KEY": secrets.token_urlsafe(50)}):
        for environment in ("production", "staging"):
            result = _manage("check", DEBUG="1", ENVIRONMENT=environment, **env)
            assert result.returncode != 0
            missing = "FIELD_ENCRYPTION_KEYS" if env else "DJANGO_SECRET_KEY"
            assert f"{missing} is required unless ENVIRONMENT=development" in result.stderr
    assert _manage("check", DEBUG="1").returncode == 0  # development: derived keys


def test_production_refuses_to_start_without_good_field_keys():
    """The server never starts unable to store an e-mail (the first one sent was a 500)."""
    production = {"DJANGO_SECRET_KEY": secrets.token_urlsafe(50)}
    missing = _manage("check", **production)
    assert missing.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS is required" in missing.stderr
    bad = _manage("check", FIELD_ENCRYPTION_KEYS="notakey", **production)
    assert bad.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS must hold Fernet keys" in bad.stderr


def test_a_malformed_rate_or_proxy_stops_the_start():
    """Read at each request, they made every request a 500 (status too) while the server
    started and `check` was content."""
    for name, value, words in [
        ("READ_RATE_LIMIT", "120/mins", "READ_RATE_LIMIT: bad rate '120/mins'"),
        ("WRITE_RATE_LIMIT", "lots", "WRITE_RATE_LIMIT: bad rate"),
        ("ADMIN_LOGIN_RATE_LIMIT", "20/fortnight", "ADMIN_LOGIN_RATE_LIMIT: bad rate"),
        ("TRUSTED_PROXY_CIDRS", "10.0.0.0/8,10.0.0/8", "TRUSTED_PROXY_CIDRS: '10.0.0/8'"),
    ]:
        result = _manage("check", DEBUG="1", **{name: value})
        assert result.returncode != 0, name
        assert words in result.stderr, result.stderr[-500:]
    assert _manage("check", DEBUG="1", READ_RATE_LIMIT="off").returncode == 0
    assert _manage("check", DEBUG="1", TRUSTED_PROXY_CIDRS="10.0.0.0/8, ").returncode == 0


def _check_deploy(**env):
    production = {
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "SECURE_SSL_REDIRECT": "true",
        "ALLOWED_HOSTS": "breja.example",
        "SITE_URL": "https://breja.example",
        "DEFAULT_FROM_EMAIL": "Breja <nao-responda@breja.example>",
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    }
    return _manage("check", "--deploy", "--fail-level", "WARNING", **{**production, **env})


def test_check_deploy_is_clean_with_production_settings():
    result = _check_deploy(
        ADDRESS_HASH_KEY=secrets.token_urlsafe(50), OUTREACH_SECRET=secrets.token_urlsafe(50)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_while_the_opt_out_keys_follow_the_secret_key():
    """Rotating DJANGO_SECRET_KEY then forgot who opted out (privacy audit: a lead added at an
    opted-out address was invited, an old opt-out link did nothing)."""
    result = _check_deploy(OUTREACH_SECRET=secrets.token_urlsafe(50))
    assert result.returncode != 0
    assert "outreach.W001" in result.stderr and "ADDRESS_HASH_KEY follow" in result.stderr


@pytest.mark.parametrize(
    "site_url",
    ["http://127.0.0.1:8000", "http://breja.example", "https://localhost", "https://10.0.0.5"],
)
def test_check_deploy_warns_of_a_site_url_the_public_cannot_use(site_url):
    """SITE_URL goes into the attribution and every link, the open files' included."""
    keys = {name: secrets.token_urlsafe(50) for name in ("ADDRESS_HASH_KEY", "OUTREACH_SECRET")}
    result = _check_deploy(SITE_URL=site_url, **keys)
    assert result.returncode != 0
    assert "beers.W001" in result.stderr and site_url in result.stderr


def test_check_deploy_warns_of_mail_from_localhost():
    keys = {name: secrets.token_urlsafe(50) for name in ("ADDRESS_HASH_KEY", "OUTREACH_SECRET")}
    result = _check_deploy(DEFAULT_FROM_EMAIL="Breja <nao-responda@localhost>", **keys)
    assert result.returncode != 0
    assert "outreach.W002" in result.stderr and "nao-responda@localhost" in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("WRITE_DAILY_CAP", "abc", "WRITE_DAILY_CAP: 'abc' is not a whole number"),
        ("DB_POOL_MAX_SIZE", "10.5", "DB_POOL_MAX_SIZE: '10.5' is not a whole number"),
        ("SECURE_SSL_REDIRECT", "ture", "SECURE_SSL_REDIRECT: 'ture' is neither true nor false"),
    ],
)
def test_a_malformed_number_or_switch_stops_the_start_naming_it(name, value, words):
    """A bare ValueError named no variable; a misspelt switch was read as false."""
    result = _manage("check", DEBUG="1", **{name: value})
    assert result.returncode != 0
    assert words in result.stderr, result.stderr[-500:]


def test_the_html_500_page_names_its_language_and_title():
    from django.test import RequestFactory

    from config.urls import handler500

    english = handler500(RequestFactory().get("/en/sao-paulo"))
    assert english.status_code == 500
    assert b'<html lang="en">' in english.content and b"<title>Internal error" in english.content
    portuguese = handler500(RequestFactory().get("/sao-paulo"))
    assert b'<html lang="pt-BR">' in portuguese.content and b"Erro interno" in portuguese.content
    api = handler500(RequestFactory().get("/api/v1/search"))
    assert api["Content-Type"] == "application/json"


CONCURRENT_WRITES = """
import threading, time
from django.db import connection, transaction
with connection.cursor() as c:
    c.execute("CREATE TABLE IF NOT EXISTS t (n integer)")
errors = []
def write():
    from django.db import connection
    try:
        with transaction.atomic(), connection.cursor() as c:
            c.execute("SELECT count(*) FROM t")  # a read first, as a write endpoint does
            time.sleep(0.3)
            c.execute("INSERT INTO t VALUES (1)")
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()
threads = [threading.Thread(target=write) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
with connection.cursor() as c:
    c.execute("SELECT count(*) FROM t")
    print("rows", c.fetchone()[0], "errors", errors)
"""


def test_the_embedded_database_takes_concurrent_writes(tmp_path):
    """`make run`'s SQLite: writes that begin with a read, at once from four threads, all
    land (SQLite's deferred transactions failed them with "database is locked": 503s)."""
    result = _manage(
        "shell", "-c", CONCURRENT_WRITES, DEBUG="1", DATABASE_URL=f"sqlite:///{tmp_path / 'db'}"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "rows 4 errors []"


def test_make_run_keeps_recipients_out_of_the_servers_output(tmp_path):
    """With DEBUG (make run) e-mails go to files, not to the console: the output is a log."""
    send = (
        "from django.core.mail import send_mail; "
        "send_mail('Oi', 'corpo', 'breja@example.org', ['quem@example.org'])"
    )
    result = _manage(
        "shell",
        "-c",
        send,
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db'}",
        EMAIL_FILE_PATH=str(tmp_path / "mail"),
    )
    assert result.returncode == 0, result.stderr
    assert "quem@example.org" not in result.stdout + result.stderr
    (sent,) = (tmp_path / "mail").iterdir()
    assert "To: quem@example.org" in sent.read_text()


def test_make_runs_eager_tasks_run_without_a_broker_warning(tmp_path):
    """Without Redis, tasks run in the process; each still took a producer of the in-memory
    broker, and kombu warned "No hostname was supplied" on every one (import_datasets)."""
    run = (
        "from datasets.tasks import datasets_export_if_changed as t; "
        "print(t.apply_async(kwargs={'force': True}).successful())"
    )
    env = {
        "DEBUG": "1",
        "REDIS_URL": "",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db'}",
        "DATASETS_ROOT": str(tmp_path / "datasets"),
    }
    assert _manage("migrate", "-v0", **env).returncode == 0
    result = _manage("shell", "-c", run, **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("True")
    assert "WARNING" not in result.stderr, result.stderr


def test_a_503_is_logged_once_a_minute_not_for_every_request(client, db):
    """Degraded mode answers every live read 503: Django's ERROR line for each would flood the
    log; the first of each minute goes through."""
    import logging

    from beers import degraded

    logger = logging.getLogger("django.request")
    # (logging may have been configured twice in this process: each pass adds its filters)
    throttles = [f for f in logger.filters if type(f).__name__ == "ThrottleUnavailable"]
    assert throttles
    for throttle in throttles:
        throttle._last = float("-inf")
    seen = []
    handler = logging.Handler()
    handler.emit = seen.append
    logger.addHandler(handler)  # the logger does not propagate: listen on it
    degraded.switch_on(retry_after=60)
    try:
        for _ in range(3):
            assert client.get("/api/v1/search", {"city": "x"}).status_code == 503
        assert [r.status_code for r in seen] == [503]
        server_error = logging.LogRecord("django.request", logging.ERROR, "", 0, "x", (), None)
        server_error.status_code = 500
        assert throttle.filter(server_error)  # other failures are all logged
    finally:
        degraded.switch_off()
        logger.removeHandler(handler)


def _debug_error_page(rf) -> str:
    """Django's debug page for an error raised here (its traceback shows this frame only)."""
    import sys

    from django.views.debug import technical_500_response

    try:
        raise RuntimeError("boom")
    except RuntimeError:
        return technical_500_response(rf.get("/"), *sys.exc_info()).content.decode()


def test_the_debug_page_masks_the_services_addresses(settings, rf):
    """With DEBUG (staging may run so) Django's error page listed REDIS_URL, the broker's and
    the cache's addresses, passwords included."""
    settings.DEBUG = True
    settings.REDIS_URL = "redis://:redis-pass-1@cache:6379/0"
    settings.CELERY_BROKER_URL = "amqp://user:broker-pass-2@mq:5672//"
    settings.CACHES = {
        **settings.CACHES,
        "other": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://:cache-pass-3@cache:6379/1",
        },
    }
    page = _debug_error_page(rf)
    assert "boom" in page and "REDIS_URL" in page
    for secret in ("redis-pass-1", "broker-pass-2", "cache-pass-3"):
        assert secret not in page


def test_a_host_not_served_is_400_without_a_logged_traceback(client, db, caplog):
    """Each request naming an unknown Host logged an ERROR with a 14-line traceback (through
    the root logger's console handler, where caplog listens too)."""
    import logging

    with caplog.at_level(logging.INFO):
        response = client.get("/api/v1/status", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert not [r for r in caplog.records if r.name.startswith("django.security")]
    handlers = logging.getLogger("django.security.DisallowedHost").handlers
    assert handlers and all(isinstance(h, logging.NullHandler) for h in handlers)
