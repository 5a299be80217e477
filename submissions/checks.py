"""Start-up checks of the writes' secrets (missing or bad FIELD_ENCRYPTION_KEYS stop the
settings themselves, config/settings.py)."""

from django.conf import settings
from django.core import checks

from .turnstile import ALWAYS_FAIL, ALWAYS_PASS, ALWAYS_SPENT


@checks.register(checks.Tags.security)
def writes_secrets(app_configs=None, **kwargs):
    problems = []
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
