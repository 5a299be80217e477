"""A bar's menu link: the `ref` token of its own menu-photo uploads.

`ref` = the first 16 characters of url-safe base64 of HMAC-SHA256(OUTREACH_SECRET,
"menu-link:<venue id>"): 96 bits, letters, digits, `_` and `-` (interface.md's pattern). Staff
hand it to the bar (GET /api/admin/venues/{id}/menu-link); an upload for that bar carrying it
is trusted. It is checked in constant time and never stored: an upload keeps only whether it
was trusted. Changing OUTREACH_SECRET revokes every link (and every opt-out link).
"""

import base64
import hashlib
import hmac

from django.conf import settings

REF_LENGTH = 16


def menu_link_ref(venue_id: int) -> str:
    """The bar's menu-link token."""
    digest = hmac.new(
        settings.OUTREACH_SECRET.encode(), f"menu-link:{int(venue_id)}".encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")[:REF_LENGTH]


def menu_link_trusts(ref: str | None, venue_id: int) -> bool:
    """Whether `ref` is the menu-link token of this bar (and of no other)."""
    if not ref or len(ref) != REF_LENGTH:
        return False
    return hmac.compare_digest(menu_link_ref(venue_id).encode(), ref.encode("utf-8", "replace"))
