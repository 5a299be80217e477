"""Human verification with Cloudflare Turnstile (siteverify), our own small client.

Cloudflare's published test secrets are answered offline; any other secret is checked against
siteverify with a short timeout, retried once with the same idempotency key (so a retry after a
lost answer is not refused as a spent token). Cloudflare unreachable → 503, never a pass.
"""

import logging
import uuid

import httpx
from django.conf import settings

from beers.errors import ApplicationError

from .limits import not_configured

logger = logging.getLogger(__name__)

SITEVERIFY_URL = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
ALWAYS_PASS = "1x0000000000000000000000000000000AA"
ALWAYS_FAIL = "2x0000000000000000000000000000000AA"
ALWAYS_SPENT = "3x0000000000000000000000000000000AA"
RETRY_AFTER_UNREACHABLE = 60
# Cloudflare's codes that mean our own configuration is wrong, not the visitor's token.
CONFIG_ERRORS = {"missing-input-secret", "invalid-input-secret"}


def _forbidden(message: str) -> ApplicationError:
    return ApplicationError(403, "forbidden", message)


def _unreachable() -> ApplicationError:
    return ApplicationError(
        503,
        "unavailable",
        "Human verification is unreachable right now; try again shortly.",
        headers={"Retry-After": str(RETRY_AFTER_UNREACHABLE)},
    )


def _siteverify(secret: str, token: str, remote_ip: str) -> dict:
    """The siteverify answer, or raise 503 when it cannot be had (after one retry)."""
    url = getattr(settings, "TURNSTILE_SITEVERIFY_URL", "") or SITEVERIFY_URL
    timeout = float(getattr(settings, "TURNSTILE_TIMEOUT", 3.0))
    form = {"secret": secret, "response": token, "idempotency_key": str(uuid.uuid4())}
    if remote_ip:
        form["remoteip"] = remote_ip
    for attempt in (1, 2):
        try:
            response = httpx.post(url, data=form, timeout=timeout)
            if response.status_code >= 500:
                raise httpx.HTTPStatusError(
                    "server error", request=response.request, response=response
                )
            answer = response.json()
            if not isinstance(answer, dict):
                raise ValueError("siteverify answer is not an object")
            if "internal-error" in (answer.get("error-codes") or []):
                raise ValueError("siteverify internal-error")
            return answer
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
            logger.warning(
                "turnstile siteverify attempt %s failed: %s", attempt, exc.__class__.__name__
            )
    raise _unreachable()


def turnstile_verify(*, token: str, remote_ip: str) -> None:
    """Pass, or raise ApplicationError: 403 forbidden (failed), 503 unavailable."""
    secret = settings.TURNSTILE_SECRET_KEY
    if not secret:
        raise not_configured()
    if not token:
        raise _forbidden("Human verification failed.")
    if secret == ALWAYS_PASS:
        return
    if secret == ALWAYS_FAIL:
        raise _forbidden("Human verification failed.")
    if secret == ALWAYS_SPENT:
        raise _forbidden("Human verification token was already used; solve the challenge again.")
    answer = _siteverify(secret, token, remote_ip)
    codes = set(answer.get("error-codes") or [])
    if answer.get("success") is not True:
        if codes & CONFIG_ERRORS:
            logger.error(
                "turnstile: the secret key is refused by siteverify (%s)",
                ",".join(sorted(codes & CONFIG_ERRORS)),
            )
            raise ApplicationError(
                503,
                "unavailable",
                "Writes are closed for now.",
                headers={"Retry-After": str(RETRY_AFTER_UNREACHABLE)},
            )
        if "timeout-or-duplicate" in codes:
            raise _forbidden(
                "Human verification token expired or was already used; solve it again."
            )
        raise _forbidden("Human verification failed.")
    hostnames = [h for h in settings.TURNSTILE_HOSTNAMES if h]
    if hostnames and answer.get("hostname") not in hostnames:
        raise _forbidden("Human verification was solved on another site.")
