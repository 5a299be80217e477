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
    import ipaddress

    from django.conf import settings

    from .counters import parse_rate

    for name in RATE_SETTINGS:
        try:
            parse_rate(getattr(settings, name))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {exc}") from None
    for cidr in settings.TRUSTED_PROXY_CIDRS:
        if not cidr.strip():
            continue  # a blank entry ("10.0.0.0/8, "), skipped as beers.clients skips it
        try:
            ipaddress.ip_network(cidr.strip(), strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"TRUSTED_PROXY_CIDRS: {cidr!r} is not an address or a network (CIDR)"
            ) from None
