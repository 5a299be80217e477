from django.apps import AppConfig
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
