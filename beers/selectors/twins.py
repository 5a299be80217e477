"""Bars that are probably the same bar: near the same point, with a similar name.

Used by the review of a price for a new bar, so that an approval links the bar already listed
instead of creating its twin.
"""

from difflib import SequenceMatcher

from beers.geo import bounding_box, haversine_m
from beers.models import City, Venue
from beers.text import name_key

TWIN_RADIUS_M = 150
TWIN_SIMILARITY = 0.75
# Words that say what kind of place it is, not which one ("Bar do Zé" ~ "Boteco do Zé").
GENERIC_WORDS = frozenset(
    "bar bares boteco botequim buteco pub choperia chopperia cervejaria restaurante "
    "barraca deposito do da dos das de o a e the".split()
)


def _core(name: str) -> str:
    words = [w for w in name_key(name).split() if w not in GENERIC_WORDS]
    return " ".join(words) or name_key(name)


def names_similar(a: str, b: str) -> bool:
    """Same core words, one inside the other, or close spelling (typos, missing accents)."""
    ca, cb = _core(a), _core(b)
    if not ca or not cb:
        return False
    if ca == cb or f" {ca} " in f" {cb} " or f" {cb} " in f" {ca} ":
        return True
    return SequenceMatcher(None, ca, cb).ratio() >= TWIN_SIMILARITY


def venue_find_twins(
    *, city: City, name: str, lat: float, lng: float, radius_m: int = TWIN_RADIUS_M
) -> list[Venue]:
    """Bars of the city within `radius_m` of the point whose name is similar, nearest first.
    One query (bounding box on the (city, lat, lng) index), then exact distances."""
    min_lat, max_lat, min_lng, max_lng = bounding_box(lat, lng, radius_m)
    near = Venue.objects.filter(
        city=city, lat__gte=min_lat, lat__lte=max_lat, lng__gte=min_lng, lng__lte=max_lng
    ).select_related("neighbourhood")
    found = []
    for venue in near:
        distance = haversine_m(lat, lng, venue.lat, venue.lng)
        if distance <= radius_m and names_similar(name, venue.name):
            found.append((distance, venue.pk, venue))
    return [venue for _d, _pk, venue in sorted(found, key=lambda t: (t[0], t[1]))]
