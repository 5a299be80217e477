"""Menu lines read from photos, as drafts of prices (docs/decisions.md, "Menu photos").

A line is a draft when it shows a price (`R$ 14,90`, `14,90`, `14.90`, `R$ 14`); the rest of
the line is searched for the catalogue's beers and brands (the longest name wins, by
`name_key`), a volume (`600ml`, `1 L`, `2,5 litros`) and a kind of serving (`lata`, `long
neck` or `LN`, `garrafa`, `litrão`, `chopp`, `torre`). The format is the catalogue's one with
that type and volume, or the only one with the volume or type found. Words of offers the
reader cannot model (`balde`, `combo`, `dobro`, `happy hour`, `2x`, `2 por`...) mark the draft
for a person, and so does a line showing several prices (two columns read as one line, two
sizes): it gives a draft per price, each with the words before it. A line naming no beer or
brand is a beer's price of its own only when it says so (`cerveja`, `chopp`, BEER_WORDS).
"""

import re
from dataclasses import dataclass, field

from beers.text import name_key

PRICE_RE = re.compile(
    r"(?:r\$\s*)?(?<![\d.,])(\d{1,3}(?:\.\d{3})+|\d{1,5}),(\d{2})(?![\d.,]*\s*(?:ml|l\b|lt\b))"
    r"|(?:r\$\s*)?(?<![\d.,])(\d{1,5})\.(\d{2})(?![\d.,]*\s*(?:ml|l\b|lt\b))"
    # whole reais only after "R$" ("R$ 14"): a bare number may be a volume or a count
    r"|r\$\s*(\d{1,5})(?![\d.,])",
    re.IGNORECASE,
)
ML_RE = re.compile(r"(\d{2,4})\s*ml\b", re.IGNORECASE)
LITRES_RE = re.compile(r"(?<![\d.,])(\d(?:[.,]\d{1,3})?)\s*(?:l|lt|litro|litros)\b", re.IGNORECASE)
# Words (after name_key) that name a serving's type.
TYPE_WORDS = {
    "lata": "lata",
    "latinha": "lata",
    "latao": "lata",
    "long neck": "long_neck",
    "longneck": "long_neck",
    "ln": "long_neck",
    "garrafa": "garrafa",
    "litrao": "litrao",
    "chopp": "chopp",
    "chope": "chopp",
    "torre": "torre",
}
# Words that say a line's price is a beer's when it names no beer or brand of the catalogue
# ("Chopp 300ml", "Cerveja garrafa 600ml"): such a draft is a price of an unknown beer, as a
# submission with `beer: null` is. A line saying neither ("Água 500ml", "Refrigerante lata")
# waits for a person.
BEER_WORDS = ("cerveja", "cervejas", "cerva", "breja", "beer", "chopp", "chope", "chopes")
# ... unless it also names another drink: "Ginger beer", "Chopp de vinho", "Suco de chopp".
NOT_BEER_WORDS = (
    "ginger",
    "root",
    "vinho",
    "sidra",
    "refrigerante",
    "refri",
    "suco",
    "agua",
    "soda",
    "tonica",
    "drink",
    "caipirinha",
    "dose",
)
# Offers a draft cannot carry: a person reads them.
OFFER_WORDS = (
    "balde",
    "combo",
    "dobro",
    "happy",
    "promo",
    "leve",
    "pague",
    "rodizio",
    "open bar",
    "por pessoa",
)
# "2x", "x 3", "2 por": more than one unit for the price.
MANY_RE = re.compile(r"(?<!\S)(?:\d+\s*x|x\s*\d+|\d+\s+por)(?!\S)")


@dataclass
class Catalogue:
    """What a line is matched against: (key, id) of beers and brands, and formats as
    (id, type, volume_ml)."""

    beers: list[tuple[str, int]]
    brands: list[tuple[str, int]]
    formats: list[tuple[int, str, int]]


@dataclass
class Draft:
    text: str
    price_cents: int
    beer_id: int | None = None
    brand_id: int | None = None
    format_id: int | None = None
    notes: list[str] = field(default_factory=list)


def _words(key: str, phrase: str) -> bool:
    return f" {phrase} " in f" {key} "


def _price(line: str) -> tuple[int, tuple[int, int]] | None:
    """The last price on the line, in cents, and where it is."""
    found = None
    for match in PRICE_RE.finditer(line):
        if match.group(1):
            whole, cents = match.group(1, 2)
        elif match.group(3):
            whole, cents = match.group(3, 4)
        else:
            whole, cents = match.group(5), "0"
        found = (int(whole.replace(".", "")) * 100 + int(cents), match.span())
    return found


def _volume(text: str) -> int | None:
    match = ML_RE.search(text)
    if match:
        return int(match.group(1))
    match = LITRES_RE.search(text)
    if match:
        return round(float(match.group(1).replace(",", ".")) * 1000)
    return None


def _named(key: str, names: list[tuple[str, int]]) -> tuple[int, str] | None:
    for name, pk in sorted(names, key=lambda n: -len(n[0])):
        if name and _words(key, name):
            return pk, name
    return None


def _format(key: str, volume: int | None, formats) -> int | None:
    types = {kind for word, kind in TYPE_WORDS.items() if _words(key, word)}
    if volume is None and "litrao" in types:
        volume = 1000
    candidates = [
        (pk, kind, ml)
        for pk, kind, ml in formats
        if (volume is None or ml == volume) and (not types or kind in types)
    ]
    if volume is None and not types:
        return None
    return candidates[0][0] if len(candidates) == 1 else None


def read_line(line: str, catalogue: Catalogue) -> Draft | None:
    """The draft of one menu line, or None when it shows no price."""
    price = _price(line)
    if price is None:
        return None
    cents, (start, end) = price
    rest = line[:start] + " " + line[end:]
    draft = Draft(text=line.strip()[:200], price_cents=cents)
    key = name_key(rest)
    beer = _named(key, catalogue.beers)
    if beer is not None:
        draft.beer_id = beer[0]
        key = f" {key} ".replace(f" {beer[1]} ", " ", 1).strip()  # "Brahma Chopp" is no chopp
    else:
        brand = _named(key, catalogue.brands)
        if brand is not None:
            draft.brand_id = brand[0]
            key = f" {key} ".replace(f" {brand[1]} ", " ", 1).strip()
    draft.format_id = _format(key, _volume(rest), catalogue.formats)
    offers = [word for word in OFFER_WORDS if _words(key, word)]
    offers += [match.group(0) for match in MANY_RE.finditer(key)]
    if offers:
        draft.notes.append("offer: " + ", ".join(offers))
    if draft.format_id is None:
        draft.notes.append("no format")
    if draft.beer_id is None and draft.brand_id is None and not _says_beer(key):
        draft.notes.append("no beer or brand")
    return draft


def _says_beer(key: str) -> bool:
    return any(_words(key, word) for word in BEER_WORDS) and not any(
        _words(key, word) for word in NOT_BEER_WORDS
    )


def segments(line: str) -> list[str]:
    """A line cut after each price it shows: two columns the reader joined ("Amstel long neck
    330ml R$ 9,90  Skol lata 350ml R$ 4,50") or two sizes on one line ("Chopp 300ml R$ 9,50
    500ml R$ 14,00") give one piece per price, each with the words before it; what follows
    the last price stays with it."""
    ends = [match.end() for match in PRICE_RE.finditer(line)]
    if len(ends) < 2:
        return [line]
    starts = [0, *ends[:-1]]
    return [line[start:end] for start, end in zip(starts, [*ends[:-1], len(line)], strict=True)]


def read_menu(lines: list[str], catalogue: Catalogue) -> list[Draft]:
    """The drafts of a menu's lines. A line showing several prices gives a draft per price,
    each marked for a person: which words go with which price is a guess there."""
    drafts = []
    for line in lines:
        pieces = segments(line)
        for piece in pieces:
            draft = read_line(piece, catalogue)
            if draft is None:
                continue
            if len(pieces) > 1:
                draft.notes.append(f"one of {len(pieces)} prices on its line")
            drafts.append(draft)
    return drafts
