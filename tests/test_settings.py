"""Settings from the environment: production refuses to start unsafe, deploy checks pass."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

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


def test_check_deploy_is_clean_with_production_settings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        SECURE_SSL_REDIRECT="true",
        ALLOWED_HOSTS="breja.example",
        FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


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
