"""Human labels of prices in pt-BR and en: money, servings, schedules, confirmation.

One place for every label the API, the MCP tools, the pages and the CSV datasets show.
Texts go through gettext (locale/pt_BR); English is the source language.
"""

import contextlib
import datetime as dt
import functools
from decimal import ROUND_HALF_UP, Decimal

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

LANGS = ("pt-BR", "en")
DJANGO_LANG = {"pt-BR": "pt-br", "en": "en"}


# The pages' words for a price's kind, a bar's kind and its attributes
KIND_LABELS = {
    "regular": gettext_lazy("Regular price"),
    "happy_hour": gettext_lazy("Happy hour"),
    "promo": gettext_lazy("Promotion"),
    "combo": gettext_lazy("Combo"),
    "open_bar": gettext_lazy("Open bar"),
}
VENUE_KIND_LABELS = {
    "bar": gettext_lazy("Bar"),
    "boteco": gettext_lazy("Boteco"),
    "pub": gettext_lazy("Pub"),
    "barraca": gettext_lazy("Beach stall"),
    "restaurante": gettext_lazy("Restaurant"),
    "deposito": gettext_lazy("Drinks shop"),
    "cervejaria": gettext_lazy("Brewery"),
    "outro": gettext_lazy("Other"),
}
ATTRIBUTE_LABELS = {
    "musica_ao_vivo": gettext_lazy("Live music"),
    "transmite_jogos": gettext_lazy("Shows matches"),
    "area_externa": gettext_lazy("Outdoor seating"),
    "pe_na_areia": gettext_lazy("On the sand"),
}


def _lang(lang: str) -> str:
    return DJANGO_LANG.get(lang, "pt-br")


def language(lang: str):
    """Activate the answer's language (a no-op when it is active already: answers render
    many labels, and switching catalogues per label is measurable)."""
    wanted = _lang(lang)
    if translation.get_language() == wanted:
        return contextlib.nullcontext()
    return translation.override(wanted)


def reais(cents: int | float) -> Decimal:
    """Cents (possibly fractional) as reais rounded half-up to the cent."""
    return (Decimal(repr(cents)) / 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def price_per_litre_cents(price_cents: int, units: int, volume_ml: int, kind: str) -> int | None:
    """Cents per litre, rounded half-up from the exact value; None for open bars. The live
    answers show `reais()` of the stored float column (price × 1000 / (units × volume)), which
    gives the same cents: a test holds the two together."""
    if kind == "open_bar":
        return None
    denominator = units * volume_ml
    return (2 * price_cents * 1000 + denominator) // (2 * denominator)


def cents_round(value: float) -> int:
    """Half-up rounding to an integer number of cents."""
    return int(Decimal(repr(value)).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def money(cents: int | float, lang: str) -> str:
    """'R$ 1.234,50' (pt-BR) or 'R$1,234.50' (en)."""
    amount = reais(cents)
    text = f"{amount:,.2f}"
    if lang == "en":
        return f"R${text}"
    return "R$ " + text.replace(",", "_").replace(".", ",").replace("_", ".")


# Labels are pure functions of their arguments and the language's catalogue, and an answer
# repeats a few servings, prices and schedules: each text is built once per process.
_memo = functools.lru_cache(maxsize=4096)


def serving_label(*, fmt, units: int, packaging: str, lang: str) -> str:
    """'Garrafa 600 ml', 'Balde com 5 × Long neck 355 ml' / 'Bucket of 5 × 355 ml long neck'.
    A packaging the format already names (a tower of the torre format) is not said twice:
    'Torre 3 L', not 'Torre com 1 × Torre 3 L'."""
    if packaging == fmt.type:
        packaging = "single"
    return _serving_text(fmt.label_en if lang == "en" else fmt.label_pt, units, packaging, lang)


@_memo
def _serving_text(label: str, units: int, packaging: str, lang: str) -> str:
    with language(lang):
        if packaging == "balde":
            text = _("Bucket of %(n)d × %(label)s")
        elif packaging == "torre":
            text = _("Tower of %(n)d × %(label)s")
        elif packaging == "combo":
            text = _("Combo of %(n)d × %(label)s")
        elif packaging == "dobro":
            text = _("Double of %(n)d × %(label)s")
        elif units > 1:
            text = _("%(n)d × %(label)s")
        else:
            return label
        return text % {"n": units, "label": label}


def _day_names() -> list[str]:
    return [_("Sun"), _("Mon"), _("Tue"), _("Wed"), _("Thu"), _("Fri"), _("Sat")]


def days_text(days: list[int]) -> str:
    """[1,2,3,4,5] -> 'Mon–Fri'; [0,6] -> 'Sat, Sun'; all seven -> 'every day'."""
    wanted = sorted(set(days))
    if len(wanted) == 7:
        return _("every day")
    names = _day_names()
    runs: list[tuple[int, int]] = []
    for d in wanted:
        if runs and d == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], d)
        else:
            runs.append((d, d))
    # A run that wraps the week end (Fri, Sat and Sun) reads as one: Fri–Sun.
    if len(runs) > 1 and runs[0][0] == 0 and runs[-1][1] == 6:
        first = runs.pop(0)
        runs[-1] = (runs[-1][0], first[1] + 7)
    parts = []
    for start, end in runs:
        if end == start:
            parts.append(names[start % 7])
        elif end == start + 1:
            parts.append(f"{names[start % 7]}, {names[end % 7]}")
        else:
            parts.append(f"{names[start % 7]}–{names[end % 7]}")
    return ", ".join(parts)


def _hm(value: str) -> tuple[int, int]:
    h, m = value.split(":")
    return int(h), int(m)


def _time_pt(value: str) -> str:
    h, m = _hm(value)
    return f"{h}h" if m == 0 else f"{h}h{m:02d}"


def _time_en(value: str, *, with_meridiem: bool = True) -> str:
    h, m = _hm(value)
    if h == 24 or (h == 0 and m == 0 and not with_meridiem):
        h = 0
    meridiem = "am" if h % 24 < 12 else "pm"
    h12 = h % 12 or 12
    text = f"{h12}" if m == 0 else f"{h12}:{m:02d}"
    return f"{text} {meridiem}" if with_meridiem else text


def hours_text(start: str, end: str, lang: str) -> str:
    """'17h–20h' / '5–8 pm'; '22h–2h' / '10 pm–2 am'; end 24:00 -> '24h' / 'midnight'; a
    window ending when it starts lasts a whole day (decisions.md: `end ≤ start` closes the
    next day), said as '8h–8h (24 h)' / '8 am–8 am (24 h)', not read as an empty one."""
    if start == end:
        time = _time_en(start) if lang == "en" else _time_pt(start)
        return f"{time}–{time} (24 h)"
    if lang != "en":
        return f"{_time_pt(start)}–{_time_pt(end)}"
    if end == "24:00":
        return f"{_time_en(start)}–midnight"
    sh, eh = _hm(start)[0], _hm(end)[0]
    same_half = (sh < 12) == (eh < 12) and _hm(end) > _hm(start)
    if same_half:
        return f"{_time_en(start, with_meridiem=False)}–{_time_en(end)}"
    return f"{_time_en(start)}–{_time_en(end)}"


def _date_text(day: dt.date, lang: str) -> str:
    if lang == "en":
        return f"{day:%b} {day.day}, {day.year}"
    return f"{day:%d/%m/%Y}"


def schedule_text(
    schedules: list[dict],
    lang: str,
    valid_from: dt.date | None = None,
    valid_until: dt.date | None = None,
) -> str | None:
    """The `when` of a price: its weekly windows and validity dates, or None when always on."""
    if not schedules and not valid_from and not valid_until:
        return None
    windows = tuple((tuple(s["days"]), s["start"], s["end"]) for s in schedules)
    return _schedule_text(windows, lang, valid_from, valid_until)


@_memo
def _schedule_text(
    windows: tuple, lang: str, valid_from: dt.date | None, valid_until: dt.date | None
) -> str | None:
    with language(lang):
        parts = [
            f"{days_text(list(days))} {hours_text(start, end, lang)}"
            for days, start, end in windows
        ]
        if valid_from and valid_until:
            parts.append(
                _("from %(start)s to %(end)s")
                % {"start": _date_text(valid_from, lang), "end": _date_text(valid_until, lang)}
            )
        elif valid_until:
            parts.append(_("until %(end)s") % {"end": _date_text(valid_until, lang)})
        elif valid_from:
            parts.append(_("from %(start)s") % {"start": _date_text(valid_from, lang)})
    return "; ".join(parts) or None


def unknown_beer(lang: str) -> str:
    with language(lang):
        return _("Beer")


def confirmed_label(confirmations: int, lang: str, *, disputed: bool = False) -> str | None:
    """'confirmado por 3 pessoas' from 3 confirmations on; None below, and None for a disputed
    price (interface.md: the label is a published price's; a price two people dispute waits
    for the moderators and is not shown as confirmed meanwhile)."""
    if confirmations < 3 or disputed:
        return None
    with language(lang):
        return ngettext("confirmed by %(n)d person", "confirmed by %(n)d people", confirmations) % {
            "n": confirmations
        }


@_memo
def price_label(
    *,
    price_cents: int,
    price_per_litre: float | None,
    open_bar_minutes: int | None,
    confirmations: int,
    lang: str,
    disputed: bool = False,
) -> str:
    """'R$ 12,90 (R$ 21,50/L)', 'R$ 89,90 · open bar 2h', plus the confirmed label."""
    with language(lang):
        if price_per_litre is None:
            text = money(price_cents, lang)
            if open_bar_minutes:
                text += " · " + _("open bar %(minutes)d min") % {"minutes": open_bar_minutes}
        else:
            text = _("%(price)s (%(per_litre)s/L)") % {
                "price": money(price_cents, lang),
                "per_litre": money(price_per_litre, lang),
            }
    confirmed = confirmed_label(confirmations, lang, disputed=disputed)
    return f"{text} · {confirmed}" if confirmed else text
