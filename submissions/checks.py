"""Start-up checks: production refuses to run the writes without their secrets."""

from django.conf import settings
from django.core import checks

from .turnstile import ALWAYS_FAIL, ALWAYS_PASS, ALWAYS_SPENT


def _production() -> bool:
    return not settings.DEBUG and getattr(settings, "ENVIRONMENT", "production") != "development"


@checks.register(checks.Tags.security)
def writes_secrets(app_configs=None, **kwargs):
    problems = []
    if _production() and not [k for k in settings.FIELD_ENCRYPTION_KEYS if k.strip()]:
        problems.append(
            checks.Error(
                "FIELD_ENCRYPTION_KEYS is empty: e-mails and contacts cannot be stored encrypted.",
                hint="Set FIELD_ENCRYPTION_KEYS to one or more Fernet keys (newest first).",
                id="submissions.E001",
            )
        )
    if getattr(settings, "ENVIRONMENT", "") == "production" and settings.TURNSTILE_SECRET_KEY in {
        ALWAYS_PASS,
        ALWAYS_FAIL,
        ALWAYS_SPENT,
    }:
        problems.append(
            checks.Warning(
                "TURNSTILE_SECRET_KEY is one of Cloudflare's test secrets in production.",
                id="submissions.W001",
            )
        )
    return problems
