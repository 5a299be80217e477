"""Shared fixtures of the cross-app tests: a small city with a bairro, formats and a bar."""

import pytest

from beers.models import Brand, City, Format, Neighbourhood
from beers.services import deal_create, venue_create


@pytest.fixture
def city(db):
    city = City.objects.create(
        slug="sao-paulo",
        name="São Paulo",
        state="SP",
        timezone="America/Sao_Paulo",
        lat=-23.55,
        lng=-46.63,
        active=True,
    )
    Neighbourhood.objects.create(
        city=city,
        slug="vila-madalena",
        name="Vila Madalena",
        boundary={
            "type": "Polygon",
            "coordinates": [
                [
                    [-46.70, -23.57],
                    [-46.68, -23.57],
                    [-46.68, -23.54],
                    [-46.70, -23.54],
                    [-46.70, -23.57],
                ]
            ],
        },
    )
    return city


@pytest.fixture
def formats(db):
    return {
        "garrafa_600": Format.objects.create(
            code="garrafa_600",
            type="garrafa",
            volume_ml=600,
            label_pt="Garrafa 600 ml",
            label_en="600 ml bottle",
        ),
        "lata_350": Format.objects.create(
            code="lata_350",
            type="lata",
            volume_ml=350,
            label_pt="Lata 350 ml",
            label_en="350 ml can",
        ),
    }


@pytest.fixture
def bar(city):
    return venue_create(
        city=city,
        name="Bar do Zé",
        lat=-23.555,
        lng=-46.69,
        kind="boteco",
        on_site=True,
        instagram="bardoze",
    )


def make_deals(bar, formats, n, **extra):
    brand, _ = Brand.objects.get_or_create(slug="brahma", defaults={"name": "Brahma"})
    return [
        deal_create(
            venue=bar, format=formats["garrafa_600"], price_cents=900 + i, brand=brand, **extra
        )
        for i in range(n)
    ]
