"""A small world for the dataset tests: two active cities (one at UTC−4), an inactive one,
bairros with and without boundaries, bars open and closed, prices of every kind and status."""

import datetime as dt
from types import SimpleNamespace

import pytest

from beers.models import (
    Beer,
    Brand,
    CheckSource,
    City,
    Format,
    Neighbourhood,
)
from beers.services import deal_create, deal_record_check, venue_create

UTC = dt.UTC


def at(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


# Clockwise on purpose: the export turns outer rings counter-clockwise (RFC 7946).
VILA_MADALENA = {
    "type": "Polygon",
    "coordinates": [
        [[-46.70, -23.56], [-46.70, -23.54], [-46.68, -23.54], [-46.68, -23.56], [-46.70, -23.56]]
    ],
}
PINHEIROS = {
    "type": "MultiPolygon",
    "coordinates": [
        [[[-46.68, -23.58], [-46.66, -23.58], [-46.66, -23.56], [-46.68, -23.56], [-46.68, -23.58]]]
    ],
}
MANAUS_CENTRO = {
    "type": "Polygon",
    "coordinates": [
        [[-60.03, -3.14], [-60.01, -3.14], [-60.01, -3.12], [-60.03, -3.12], [-60.03, -3.14]]
    ],
}


@pytest.fixture
def world(db):
    sp = City.objects.create(
        slug="sao-paulo",
        name="São Paulo",
        state="SP",
        timezone="America/Sao_Paulo",
        lat=-23.55,
        lng=-46.63,
        active=True,
    )
    manaus = City.objects.create(
        slug="manaus",
        name="Manaus",
        state="AM",
        timezone="America/Manaus",
        lat=-3.12,
        lng=-60.02,
        active=True,
    )
    curitiba = City.objects.create(
        slug="curitiba",
        name="Curitiba",
        state="PR",
        timezone="America/Sao_Paulo",
        lat=-25.43,
        lng=-49.27,
        active=False,
    )
    vila = Neighbourhood.objects.create(
        city=sp, slug="vila-madalena", name="Vila Madalena", boundary=VILA_MADALENA
    )
    Neighbourhood.objects.create(city=sp, slug="pinheiros", name="Pinheiros", boundary=PINHEIROS)
    Neighbourhood.objects.create(city=sp, slug="se", name="Sé", boundary=None)
    Neighbourhood.objects.create(city=manaus, slug="centro", name="Centro", boundary=MANAUS_CENTRO)

    brahma = Brand.objects.create(slug="brahma", name="Brahma")
    heineken_brand = Brand.objects.create(slug="heineken", name="Heineken")
    Brand.objects.create(slug="cervejaria-x", name="Cervejaria X")
    chopp_brahma = Beer.objects.create(slug="brahma-chopp", name="Brahma Chopp", brand=brahma)
    heineken = Beer.objects.create(slug="heineken", name="Heineken", brand=heineken_brand)
    da_casa = Beer.objects.create(slug="artesanal-da-casa", name="Artesanal da Casa")

    def fmt(code, type_, ml, pt, en):
        return Format.objects.create(code=code, type=type_, volume_ml=ml, label_pt=pt, label_en=en)

    garrafa = fmt("garrafa_600", "garrafa", 600, "garrafa 600 ml", "600 ml bottle")
    lata = fmt("lata_350", "lata", 350, "lata 350 ml", "350 ml can")
    chopp = fmt("chopp_300", "chopp", 300, "chopp 300 ml", "300 ml draught")
    torre = fmt("torre_2000", "torre", 2000, "torre 2 l", "2 l tower")
    fmt("litrao_1000", "litrao", 1000, "litrão 1 l", "1 l bottle")

    ze = venue_create(
        city=sp,
        name="Bar do Zé",
        lat=-23.55,
        lng=-46.69,
        kind="boteco",
        on_site=True,
        address="Rua Aspicuelta, 100",
        instagram="bardoze",
        opening_hours="seg-sáb 17h-1h",
        attributes=["musica_ao_vivo", "area_externa"],
    )
    aspas = venue_create(
        city=sp, name='Boteco "Aspas", Vírgula', lat=-23.57, lng=-46.67, kind="bar", on_site=True
    )
    sem_bairro = venue_create(
        city=sp, name="Depósito Longe", lat=-23.70, lng=-46.80, kind="deposito", on_site=False
    )
    fechado = venue_create(
        city=sp, name="Bar Fechado", lat=-23.55, lng=-46.69, kind="bar", on_site=True
    )
    so_suspenso = venue_create(
        city=sp, name="Só Suspenso", lat=-23.55, lng=-46.69, kind="pub", on_site=True
    )
    fechado.status = "closed"
    fechado.save()

    t0 = at(2026, 10, 5, 21, 0, 0)
    deals = SimpleNamespace()
    deals.regular = deal_create(
        venue=ze, format=garrafa, beer=chopp_brahma, price_cents=1290, verified_at=t0
    )
    deals.balde = deal_create(
        venue=ze,
        format=lata,
        beer=heineken,
        units=12,
        packaging="balde",
        kind="combo",
        price_cents=8990,
        verified_at=at(2026, 11, 1, 2, 30, 15, 123456),
    )
    deals.happy = deal_create(
        venue=aspas,
        format=chopp,
        beer=chopp_brahma,
        kind="happy_hour",
        price_cents=590,
        schedules=[
            {"days": [1, 2, 3, 4, 5], "start": "17:00", "end": "20:00"},
            {"days": [6], "start": "22:00", "end": "02:00"},
        ],
        service_charge_pct=10,
        couvert_cents=1500,
        verified_at=at(2026, 11, 10, 12),
    )
    deals.open_bar = deal_create(
        venue=aspas,
        format=chopp,
        beer=None,
        kind="open_bar",
        open_bar_minutes=120,
        price_cents=7990,
        verified_at=at(2026, 11, 12, 1),
    )
    deals.promo = deal_create(
        venue=sem_bairro,
        format=lata,
        beer=da_casa,
        kind="promo",
        price_cents=499,
        conditions='Só no balcão, "gelada"\npague 2, leve 3',
        valid_from=dt.date(2026, 11, 1),
        valid_until=dt.date(2026, 11, 30),
        verified_at=at(2026, 11, 15, 18),
    )
    # 999 cents for 2 l: exactly 499.5 cents per litre, rounded half-up to 500.
    deals.half = deal_create(
        venue=sem_bairro,
        format=torre,
        beer=None,
        brand=brahma,
        packaging="torre",
        price_cents=999,
        verified_at=at(2026, 9, 1, 12),
    )
    deals.no_beer = deal_create(
        venue=ze, format=garrafa, beer=None, price_cents=1100, verified_at=at(2026, 11, 2, 12)
    )
    deals.disputed = deal_create(
        venue=ze,
        format=lata,
        beer=heineken,
        price_cents=650,
        status="disputed",
        verified_at=at(2026, 11, 3, 12),
    )
    deals.disputed.confirmations, deals.disputed.open_disputes = 3, 2
    deals.disputed.save()
    deals.suspended = deal_create(
        venue=so_suspenso,
        format=lata,
        beer=heineken,
        price_cents=600,
        status="suspended",
        verified_at=at(2026, 11, 3, 12),
    )
    deals.retired = deal_create(
        venue=ze,
        format=lata,
        beer=heineken,
        price_cents=400,
        status="retired",
        verified_at=at(2026, 8, 3, 12),
    )
    deals.at_closed = deal_create(
        venue=fechado,
        format=garrafa,
        beer=chopp_brahma,
        price_cents=1000,
        verified_at=at(2026, 11, 3, 12),
    )

    # Inactive city: must not appear anywhere.
    cwb_bar = venue_create(
        city=curitiba, name="Bar de Curitiba", lat=-25.43, lng=-49.27, kind="bar", on_site=True
    )
    deal_create(venue=cwb_bar, format=garrafa, beer=chopp_brahma, price_cents=1500)

    # Manaus (UTC−4): one price checked around a month boundary.
    mao_bar = venue_create(
        city=manaus, name="Bar do Porto", lat=-3.13, lng=-60.02, kind="bar", on_site=True
    )
    deals.manaus = deal_create(
        venue=mao_bar,
        format=garrafa,
        beer=heineken,
        price_cents=1200,
        verified_at=at(2026, 10, 1, 3, 30),
        source=CheckSource.SUBMISSION,
    )
    return SimpleNamespace(
        sp=sp,
        manaus=manaus,
        curitiba=curitiba,
        vila=vila,
        ze=ze,
        aspas=aspas,
        sem_bairro=sem_bairro,
        fechado=fechado,
        so_suspenso=so_suspenso,
        deals=deals,
        garrafa=garrafa,
        lata=lata,
        chopp=chopp,
        torre=torre,
        brahma=brahma,
        record_check=deal_record_check,
    )
