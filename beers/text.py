"""Comparing names as people write them: accents, case and spacing do not count."""

import re
import unicodedata

from django.utils.text import slugify

_NOT_WORD = re.compile(r"[^a-z0-9]+")


def name_key(text: str) -> str:
    """'  São   Paulo ' and 'sao paulo' give the same key: no accents, lowercase, one space
    between words, no punctuation."""
    decomposed = unicodedata.normalize("NFKD", text or "")
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    return _NOT_WORD.sub(" ", plain).strip()


def slug_of(text: str, max_length: int) -> str:
    """Django's slugify, kept to SLUG_RE (letters, digits, single hyphens): slugify keeps
    underscores ("Bar_do_Zé" gives "bar-do-ze", not "bar_do_ze"). May be empty."""
    return _NOT_WORD.sub("-", slugify(text))[:max_length].strip("-")
