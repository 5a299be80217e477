"""Opt-out tokens: `<lead id>.<HMAC-SHA256(OUTREACH_SECRET, "optout:<id>") in url-safe base64>`.

The id has 1 to 9 digits; the hash is 32 bytes, 43 characters without padding. The token is
the only authorisation of an opt-out link, so it is checked in constant time.
"""

import base64
import hashlib
import hmac
import re

from django.conf import settings

TOKEN_RE = re.compile(r"^([0-9]{1,9})\.([A-Za-z0-9_-]{43})$")
MAX_LEAD_ID = 999_999_999


def _signature(lead_id: int) -> str:
    digest = hmac.new(
        settings.OUTREACH_SECRET.encode(), f"optout:{lead_id}".encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def make_token(lead_id: int) -> str:
    """The opt-out token of a lead."""
    if not 0 < lead_id <= MAX_LEAD_ID:
        raise ValueError("a lead id has 1 to 9 digits")
    return f"{lead_id}.{_signature(lead_id)}"


def check_token(token: str) -> int | None:
    """The lead id the token was made for, or None when it is not a token of ours."""
    match = TOKEN_RE.fullmatch(token or "")
    if match is None:
        return None
    lead_id = int(match.group(1))
    # The id as written must be the canonical one ("007" is not 7's token).
    if str(lead_id) != match.group(1) or lead_id == 0:
        return None
    if not hmac.compare_digest(_signature(lead_id), match.group(2)):
        return None
    return lead_id


def optout_url(lead_id: int) -> str:
    """The address of a lead's opt-out page (the List-Unsubscribe link of outreach e-mails)."""
    return f"{settings.SITE_URL}/api/v1/optout/{make_token(lead_id)}"
