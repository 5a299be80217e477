"""Comparing names as people write them: accents, case and spacing do not count."""

import re
import unicodedata

from django.utils.text import slugify

_NOT_WORD = re.compile(r"[^a-z0-9]+")
# letters and symbols that print as nothing (Hangul fillers, the blank Braille pattern)
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _blank(char: str) -> bool:
    """Prints as nothing: white space, a control or format character (zero-width space,
    joiners, direction marks, the BOM) or a blank glyph."""
    return char.isspace() or char in _BLANK_GLYPHS or unicodedata.category(char) in ("Cc", "Cf")


def trimmed(text: str) -> str:
    """The text without what prints as nothing at either end; "" when nothing else is left."""
    start, end = 0, len(text)
    while start < end and _blank(text[start]):
        start += 1
    while end > start and _blank(text[end - 1]):
        end -= 1
    return text[start:end]


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
