"""Distances, bairro boundaries and placement."""

import math

from django.core.exceptions import ValidationError

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
    # Imported here: beers.models imports this module, and only placing a bar needs shapely
    # (5 MB of every process's memory otherwise).
    from shapely.geometry import Point, shape

    return shape(_flat(geometry)).covers(Point(lng, lat))


def _flat(geometry: dict) -> dict:
    """The geometry with longitude and latitude only: an altitude on some positions and not on
    others (RFC 7946 allows either) made shapely refuse it, and every new bar of the city 500."""
    if geometry["type"] == "Polygon":
        rings = [[p[:2] for p in ring] for ring in geometry["coordinates"]]
        return {"type": "Polygon", "coordinates": rings}
    polygons = [[[p[:2] for p in ring] for ring in rings] for rings in geometry["coordinates"]]
    return {"type": "MultiPolygon", "coordinates": polygons}


def _position_problem(position) -> str | None:
    if not isinstance(position, list) or len(position) not in (2, 3):
        return "a position must be [longitude, latitude] (an altitude may follow)"
    if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in position):
        return "a position holds numbers only"
    if not all(math.isfinite(n) for n in position):
        return "a position holds finite numbers only"
    lng, lat = position[0], position[1]
    if not (-180 <= lng <= 180 and -90 <= lat <= 90):
        return "a position must be WGS 84: longitude -180 to 180, latitude -90 to 90"
    return None


def _polygon_problem(rings, where: str) -> str | None:
    if not isinstance(rings, list) or not rings:
        return f"{where}must be a list of rings (the outer one first)"
    for r, ring in enumerate(rings):
        if not isinstance(ring, list) or len(ring) < 4:
            return f"{where}ring {r} must hold 4 positions at least"
        for position in ring:
            problem = _position_problem(position)
            if problem:
                return f"{where}ring {r}: {problem}"
        if ring[0] != ring[-1]:
            return f"{where}ring {r} must end where it starts (closed)"
    return None


def boundary_problem(geometry) -> str | None:
    """Why a bairro boundary is not an RFC 7946 Polygon or MultiPolygon in WGS 84 lon/lat
    (closed rings of 4 positions at least, none crossing itself), or None when it is one.
    Winding is not checked: the export writes RFC 7946's (datasets.services.geometry_rfc7946)."""
    if not isinstance(geometry, dict) or geometry.get("type") not in ("Polygon", "MultiPolygon"):
        return "must be a Polygon or MultiPolygon"
    coordinates = geometry.get("coordinates")
    if geometry["type"] == "Polygon":
        problem = _polygon_problem(coordinates, "")
    elif not isinstance(coordinates, list) or not coordinates:
        return "must be a list of polygons"
    else:
        problem = next(
            filter(
                None, (_polygon_problem(r, f"polygon {p}: ") for p, r in enumerate(coordinates))
            ),
            None,
        )
    return problem or _area_problem(geometry)


def _area_problem(geometry: dict) -> str | None:
    """A ring that crosses itself (a bowtie) has no inside to place bars in; a hole outside its
    shell is no hole (RFC 7946: interior rings bound holes of the surface); a ring spanning
    more than 180° of longitude is read the long way round (RFC 7946 §3.1.9: cut it at the
    antimeridian). Only these: parts of a MultiPolygon that overlap, or a hole touching its
    shell, still have an inside."""
    from shapely.geometry import LinearRing, Polygon  # see point_in_geometry

    flat = _flat(geometry)["coordinates"]  # altitudes aside
    polygons = [flat] if geometry["type"] == "Polygon" else flat
    for p, rings in enumerate(polygons):
        where = f"polygon {p}: " if geometry["type"] == "MultiPolygon" else ""
        for r, ring in enumerate(rings):
            if not LinearRing(ring).is_simple:
                return f"{where}ring {r} must not cross itself"
            longitudes = [lng for lng, _lat in ring]
            if max(longitudes) - min(longitudes) > 180:
                return (
                    f"{where}ring {r} spans more than 180° of longitude: cut it at the "
                    "antimeridian (RFC 7946 §3.1.9)"
                )
        shell = Polygon(rings[0])
        for r, hole in enumerate(rings[1:], start=1):
            if not shell.covers(LinearRing(hole)):
                return f"{where}ring {r} (a hole) must lie inside ring 0"
    return None


def validate_boundary(geometry) -> None:
    """Model field validator (the admin): see boundary_problem."""
    problem = boundary_problem(geometry)
    if problem:
        raise ValidationError(f"GeoJSON: {problem}.")
