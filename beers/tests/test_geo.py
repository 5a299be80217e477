"""Distances (the bounding box before the exact distance: it must never leave out a point
inside) and bairro boundaries."""

import math

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

from beers.geo import (
    EARTH_RADIUS_M,
    boundary_problem,
    bounding_box,
    haversine_m,
    point_in_geometry,
)
from beers.tests.factories import NeighbourhoodFactory


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


SQUARE = [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]


@pytest.mark.parametrize(
    ("geometry", "problem"),
    [
        ({"type": "Polygon", "coordinates": [SQUARE]}, None),
        (
            {
                "type": "Polygon",
                "coordinates": [[[-46.6, -23.5, 760], *SQUARE[1:4], [-46.6, -23.5, 760]]],
            },
            None,
        ),
        ({"type": "MultiPolygon", "coordinates": [[SQUARE], [SQUARE, SQUARE]]}, None),
        ({"type": "Point", "coordinates": [0, 0]}, "Polygon or MultiPolygon"),
        ([SQUARE], "Polygon or MultiPolygon"),
        ({"type": "Polygon"}, "list of rings"),
        ({"type": "Polygon", "coordinates": []}, "list of rings"),
        ({"type": "Polygon", "coordinates": [SQUARE[:3]]}, "4 positions"),
        ({"type": "Polygon", "coordinates": [SQUARE[:4]]}, "closed"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], ["1", 1], [0, 0]]]}, "numbers"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [True, 0], [1, 1], [0, 0]]]}, "numbers"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [1], [1, 1], [0, 0]]]}, "[longitude"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [181, 0], [1, 1], [0, 0]]]}, "WGS 84"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [0, -91], [1, 1], [0, 0]]]}, "WGS 84"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [0, math.inf], [1, 1], [0, 0]]]}, "finite"),
        ({"type": "MultiPolygon", "coordinates": []}, "list of polygons"),
        ({"type": "MultiPolygon", "coordinates": [[SQUARE], [SQUARE[:4]]]}, "polygon 1: ring 0"),
        # a bowtie: its ring crosses itself at (0.5, 0.5)
        ({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]}, "cross"),
        (
            {
                "type": "MultiPolygon",
                "coordinates": [[SQUARE], [SQUARE, [[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]],
            },
            "polygon 1: ring 1 must not cross itself",
        ),
        # an audit's: a "hole" beside its shell, a ring drawn across the antimeridian (read
        # the long way round: bars of Manaus were placed in a strip of the Pacific)
        (
            {"type": "Polygon", "coordinates": [SQUARE, [[2, 2], [3, 2], [3, 3], [2, 3], [2, 2]]]},
            "ring 1 (a hole) must lie inside ring 0",
        ),
        (
            {
                "type": "MultiPolygon",
                "coordinates": [
                    [SQUARE],
                    [SQUARE, [[0.5, 0.5], [1.5, 0.5], [1.5, 0.8], [0.5, 0.8], [0.5, 0.5]]],
                ],
            },
            "polygon 1: ring 1 (a hole) must lie inside ring 0",
        ),
        (
            {"type": "Polygon", "coordinates": [SQUARE, [[0, 0], [1, 0], [1, 0.5], [0, 0]]]},
            None,  # a hole touching its shell still leaves an inside
        ),
        (
            {
                "type": "Polygon",
                "coordinates": [[[179, 0], [-179, 0], [-179, 1], [179, 1], [179, 0]]],
            },
            "cut it at the antimeridian",
        ),
        # altitudes on some positions only: RFC 7946 allows either
        (
            {"type": "Polygon", "coordinates": [[[0, 0, 9], [1, 0], [1, 1, 9], [0, 1], [0, 0, 9]]]},
            None,
        ),
    ],
)
def test_boundary_problem_names_what_rfc_7946_refuses(geometry, problem):
    found = boundary_problem(geometry)
    assert found is None if problem is None else problem in found


@pytest.mark.django_db
def test_the_admin_refuses_a_boundary_that_is_not_a_polygon():
    bairro = NeighbourhoodFactory()
    bairro.boundary = {"type": "Polygon", "coordinates": [SQUARE[:4]]}
    with pytest.raises(ValidationError, match="closed"):
        bairro.full_clean()
    bairro.boundary = {"type": "Polygon", "coordinates": [SQUARE]}
    bairro.full_clean()


def test_a_bar_is_placed_in_a_boundary_with_altitudes_on_some_positions():
    """Shapely refused such a ring (ValueError), and every new bar of its city was a 500."""
    mixed = {"type": "Polygon", "coordinates": [[[0, 0, 9], [1, 0], [1, 1, 9], [0, 1], [0, 0, 9]]]}
    assert point_in_geometry(0.5, 0.5, mixed)
    assert not point_in_geometry(2, 2, mixed)
    assert point_in_geometry(
        0.5, 0.5, {"type": "MultiPolygon", "coordinates": [[SQUARE], mixed["coordinates"]]}
    )


@pytest.mark.django_db
@pytest.mark.parametrize("empty", [{}, [], ""])
def test_an_empty_boundary_is_none(empty):
    """`{}` passed as a boundary, the activation's checklist counted it, and the city went
    live with no feature in its GeoJSON."""
    bairro = NeighbourhoodFactory()
    bairro.boundary = empty
    bairro.full_clean()
    assert bairro.boundary is None
