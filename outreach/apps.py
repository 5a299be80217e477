from django.apps import AppConfig
from django.core import checks


class OutreachConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "outreach"


@checks.register(checks.Tags.security, deploy=True)
def keys_apart_from_the_secret_key(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """`manage.py check --deploy`: the keys that know who opted out must outlive a rotation of
    DJANGO_SECRET_KEY, which they follow unless set. Rotated, the old opt-out links did
    nothing (same page, lead still contacted) and a new lead at an opted-out address was
    invited (its e-mail's lookup hash no longer matched)."""
    from django.conf import settings

    following = [
        name
        for name in ("ADDRESS_HASH_KEY", "OUTREACH_SECRET")
        if getattr(settings, name) == settings.SECRET_KEY
    ]
    if not following:
        return []
    return [
        checks.Warning(
            f"{' and '.join(following)} follow DJANGO_SECRET_KEY: rotating it would forget which "
            "addresses opted out and revoke the opt-out and menu links.",
            hint="Set them on their own, to the current DJANGO_SECRET_KEY, before rotating it.",
            id="outreach.W001",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def mail_from_a_real_domain(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """`manage.py check --deploy`: the service writes to bars, senders and people who opted
    out from DEFAULT_FROM_EMAIL; from its default, `nao-responda@localhost`, receiving servers
    cannot check the sender (SPF, DKIM, DMARC) and a one-click unsubscribe (RFC 8058) is not
    honoured from it."""
    from email.utils import parseaddr

    from django.conf import settings

    from beers.apps import is_public_host

    if is_public_host(parseaddr(settings.DEFAULT_FROM_EMAIL)[1].rpartition("@")[2]):
        return []
    return [
        checks.Warning(
            f"DEFAULT_FROM_EMAIL is {settings.DEFAULT_FROM_EMAIL!r}: mail from it cannot be "
            "authenticated by the servers that receive it.",
            hint="Set DEFAULT_FROM_EMAIL to an address of the service's own domain.",
            id="outreach.W002",
        )
    ]
