"""Distances and bairro placement."""

import math

from shapely.geometry import Point, shape

EARTH_RADIUS_M = 6_371_008.8
METRES_PER_DEGREE_LAT = math.pi * EARTH_RADIUS_M / 180


def haversine_m(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance in metres (haversine, mean Earth radius)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))


def distance_m(lat1: float, lng1: float, lat2: float, lng2: float) -> int:
    """Haversine distance rounded to whole metres (half up), as the API shows it."""
    return int(math.floor(haversine_m(lat1, lng1, lat2, lng2) + 0.5))


def bounding_box(lat: float, lng: float, radius_m: float) -> tuple[float, float, float, float]:
    """(min_lat, max_lat, min_lng, max_lng) that holds every point within radius_m.

    Generous by a small margin so that the exact haversine test, not the box, decides. A
    circle that reaches a pole or crosses the antimeridian (±180°) gets every longitude.
    """
    dlat = radius_m / METRES_PER_DEGREE_LAT * 1.001 + 1e-6
    if abs(lat) + dlat >= 89.9:
        return lat - dlat, lat + dlat, -180.0, 180.0
    cos_lat = math.cos(math.radians(abs(lat) + dlat))
    dlng = radius_m / (METRES_PER_DEGREE_LAT * cos_lat) * 1.001 + 1e-6
    if lng - dlng < -180.0 or lng + dlng > 180.0:
        return lat - dlat, lat + dlat, -180.0, 180.0
    return lat - dlat, lat + dlat, lng - dlng, lng + dlng


def point_in_geometry(lat: float, lng: float, geometry: dict | None) -> bool:
    """Whether the point lies inside (or on the edge of) a GeoJSON Polygon/MultiPolygon."""
    if not geometry:
        return False
    return shape(geometry).covers(Point(lng, lat))
