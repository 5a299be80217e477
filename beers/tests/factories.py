"""factory_boy factories for the ground-floor models; rows go in through `Model.objects.create`.

Defaults make a valid row that ranks: an open bar in São Paulo, a published regular price of a
600 ml bottle checked just now. A Deal's `city` and `volume_ml` follow its venue and format, as
`beers.services.deal_create` sets them.
"""

import factory
from django.utils import timezone

from beers.models import (
    Beer,
    Brand,
    CheckSource,
    City,
    Deal,
    Format,
    Neighbourhood,
    PriceCheck,
    Venue,
)


def square(lat: float, lng: float, half: float = 0.01) -> dict:
    """A GeoJSON Polygon: the square of side 2·half degrees centred on the point."""
    s, n, w, e = lat - half, lat + half, lng - half, lng + half
    return {"type": "Polygon", "coordinates": [[[w, s], [e, s], [e, n], [w, n], [w, s]]]}


class CityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = City

    slug = factory.Sequence(lambda n: f"cidade-{n}")
    name = factory.Sequence(lambda n: f"Cidade {n}")
    state = "SP"
    timezone = "America/Sao_Paulo"
    lat = -23.55
    lng = -46.63
    active = True


class NeighbourhoodFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Neighbourhood

    city = factory.SubFactory(CityFactory)
    slug = factory.Sequence(lambda n: f"bairro-{n}")
    name = factory.Sequence(lambda n: f"Bairro {n}")
    boundary = factory.LazyAttribute(lambda o: square(o.city.lat, o.city.lng))


class VenueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Venue

    city = factory.SubFactory(CityFactory)
    slug = factory.Sequence(lambda n: f"bar-{n}")
    name = factory.Sequence(lambda n: f"Bar {n}")
    kind = "bar"
    on_site = True
    neighbourhood = None
    lat = factory.LazyAttribute(lambda o: o.city.lat)
    lng = factory.LazyAttribute(lambda o: o.city.lng)


class BrandFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Brand

    slug = factory.Sequence(lambda n: f"marca-{n}")
    name = factory.Sequence(lambda n: f"Marca {n}")


class BeerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Beer

    slug = factory.Sequence(lambda n: f"cerveja-{n}")
    name = factory.Sequence(lambda n: f"Cerveja {n}")
    brand = factory.SubFactory(BrandFactory)


class FormatFactory(factory.django.DjangoModelFactory):
    """`FormatFactory(type="lata", volume_ml=350)` gives (or reuses) `lata_350`."""

    class Meta:
        model = Format
        django_get_or_create = ("code",)

    type = "garrafa"
    volume_ml = 600
    code = factory.LazyAttribute(lambda o: f"{o.type}_{o.volume_ml}")
    label_pt = factory.LazyAttribute(
        lambda o: f"{o.type.replace('_', ' ').title()} {o.volume_ml} ml"
    )
    label_en = factory.LazyAttribute(lambda o: f"{o.volume_ml} ml {o.type.replace('_', ' ')}")


class DealFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Deal

    venue = factory.SubFactory(VenueFactory)
    city = factory.LazyAttribute(lambda o: o.venue.city)
    format = factory.SubFactory(FormatFactory)
    volume_ml = factory.LazyAttribute(lambda o: o.format.volume_ml)
    beer = factory.SubFactory(BeerFactory)
    brand = factory.LazyAttribute(lambda o: o.beer.brand if o.beer else None)
    units = 1
    packaging = "single"
    kind = "regular"
    price_cents = 1290
    verified_at = factory.LazyFunction(timezone.now)
    created_at = factory.LazyAttribute(lambda o: o.verified_at)
    status = "published"


class PriceCheckFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PriceCheck

    deal = factory.SubFactory(DealFactory)
    price_cents = factory.LazyAttribute(lambda o: o.deal.price_cents)
    checked_at = factory.LazyAttribute(lambda o: o.deal.verified_at)
    source = CheckSource.SUBMISSION
