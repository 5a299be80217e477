import ipaddress
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

RATE_SETTINGS = ("READ_RATE_LIMIT", "WRITE_RATE_LIMIT", "ADMIN_LOGIN_RATE_LIMIT")


class BeersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "beers"

    def ready(self):
        check_settings()


def check_settings() -> None:
    """Settings read at each request, checked once at start-up: a rate written `120/mins` or
    a proxy `10.0.0/8` made every request that read it a 500 (the status endpoint's too)
    while the server started and `manage.py check` was content."""
    from django.conf import settings

    from .clients import trusted_networks
    from .counters import parse_rate

    for name in RATE_SETTINGS:
        try:
            parse_rate(getattr(settings, name))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {exc}") from None
    try:
        trusted_networks(tuple(settings.TRUSTED_PROXY_CIDRS))  # as each request reads them
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"TRUSTED_PROXY_CIDRS: {exc} (an address or a network, CIDR)"
        ) from None


def is_public_host(host: str) -> bool:
    """Whether others can reach `host` (a name or an address, as in a URL or after an e-mail's
    @): a global address, or a dotted name that is not localhost's."""
    host = host.strip("[]").rstrip(".").lower()
    try:
        return ipaddress.ip_address(host).is_global
    except ValueError:
        return "." in host and not host.endswith(".localhost")


@checks.register(checks.Tags.security, deploy=True)
def site_url_is_public(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """`manage.py check --deploy`: SITE_URL is written into every answer's attribution (the
    `source` and `attribution` the ODbL asks users to credit), every `url` and the open files
    that people mirror; left at its default, production published http://127.0.0.1:8000."""
    from django.conf import settings

    parts = urlsplit(settings.SITE_URL)
    if parts.scheme == "https" and is_public_host(parts.hostname or ""):
        return []
    return [
        checks.Warning(
            f"SITE_URL is {settings.SITE_URL!r}: the attribution and every link the answers and "
            "the open files publish would name it.",
            hint="Set SITE_URL to the service's public https address.",
            id="beers.W001",
        )
    ]
