"""The bounding box before the exact distance: it must never leave out a point inside."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from beers.geo import EARTH_RADIUS_M, bounding_box, haversine_m


def destination(lat: float, lng: float, bearing: float, metres: float) -> tuple[float, float]:
    """The point `metres` away from (lat, lng) along `bearing` on the sphere."""
    p, lam, theta = math.radians(lat), math.radians(lng), math.radians(bearing)
    d = metres / EARTH_RADIUS_M
    p2 = math.asin(math.sin(p) * math.cos(d) + math.cos(p) * math.sin(d) * math.cos(theta))
    lam2 = lam + math.atan2(
        math.sin(theta) * math.sin(d) * math.cos(p), math.cos(d) - math.sin(p) * math.sin(p2)
    )
    lng2 = (math.degrees(lam2) + 540) % 360 - 180
    return math.degrees(p2), lng2


@settings(max_examples=500, deadline=None)
@given(
    lat=st.floats(-90, 90),
    lng=st.floats(-180, 180),
    radius=st.integers(100, 10_000),
    bearing=st.floats(0, 360),
    fraction=st.floats(0, 1),
)
def test_every_point_within_the_radius_is_in_the_box(lat, lng, radius, bearing, fraction):
    lat2, lng2 = destination(lat, lng, bearing, radius * fraction)
    if haversine_m(lat, lng, lat2, lng2) > radius:  # rounding at the edge
        return
    min_lat, max_lat, min_lng, max_lng = bounding_box(lat, lng, radius)
    assert min_lat <= lat2 <= max_lat
    assert min_lng <= lng2 <= max_lng


def test_the_box_stays_narrow_away_from_the_poles_and_the_antimeridian():
    min_lat, max_lat, min_lng, max_lng = bounding_box(-23.55, -46.63, 2000)
    assert max_lat - min_lat < 0.04 and max_lng - min_lng < 0.05
