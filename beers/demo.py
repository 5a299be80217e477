"""Demo data: five cities in four time zones, their bairros, about ninety bars and their prices.

`demo_plan(seed)` is a pure function of the seed: the same cities, bars and prices every time.
`demo_load()` writes the plan through the services. Dates are relative to the moment of loading
(a price is "checked N days ago"), so the demo always has fresh, out-of-date and too-old prices.
A second load creates only what is missing (natural keys: slugs, format codes and, for a price,
bar + format + kind + units + packaging + beer); it never rewrites a row that exists, so edits
made by moderators survive and `verified_at` keeps the value of the first load.

The bars are invented; the bairros, streets and time zones are real, the boundaries are
rectangles drawn around each bairro's centre (they do not overlap).
"""

import datetime as dt
import random
import zoneinfo
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from .clients import address_hash
from .models import (
    DISPUTED_AT,
    SUSPENDED_AT,
    VENUE_ATTRIBUTES,
    Beer,
    Brand,
    CheckSource,
    City,
    Deal,
    DealKind,
    DealStatus,
    Format,
    Neighbourhood,
    Packaging,
    PriceCheck,
    Venue,
    VenueKind,
    VenueStatus,
)
from .services import deal_create, venue_create
from .text import slug_of

DEMO_SEED = 20261123

K = VenueKind
WEEKDAYS = [1, 2, 3, 4, 5]  # 0 = Sunday


# --- Static tables ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HoodSpec:
    slug: str
    name: str
    lat: float
    lng: float
    half_lat: float
    half_lng: float
    streets: tuple[str, ...]
    bars: tuple[tuple[str, str], ...]  # (name, venue kind)
    beach: bool = False

    @property
    def boundary(self) -> dict:
        """The bairro as a GeoJSON Polygon (lon/lat, exterior ring counter-clockwise)."""
        s, n = self.lat - self.half_lat, self.lat + self.half_lat
        w, e = self.lng - self.half_lng, self.lng + self.half_lng
        ring = [[w, s], [e, s], [e, n], [w, n], [w, s]]
        return {"type": "Polygon", "coordinates": [[[round(x, 6), round(y, 6)] for x, y in ring]]}


@dataclass(frozen=True)
class CitySpec:
    slug: str
    name: str
    state: str
    timezone: str
    lat: float
    lng: float
    active: bool
    price_factor: float  # local price level; Noronha is an island, everything comes by boat
    hoods: tuple[HoodSpec, ...] = ()


# A table reads better with one bairro per block.
# fmt: off
CITIES: tuple[CitySpec, ...] = (
    CitySpec("sao-paulo", "São Paulo", "SP", "America/Sao_Paulo", -23.5505, -46.6333, True, 1.05, (
        HoodSpec("vila-madalena", "Vila Madalena", -23.5530, -46.6900, 0.006, 0.006,
                 ("Rua Aspicuelta", "Rua Mourato Coelho", "Rua Fradique Coutinho",
                  "Rua Harmonia", "Rua Wisard"),
                 (("Boteco da Harmonia", K.BOTECO), ("Bar do Beco Azul", K.BAR),
                  ("Empório Mourato", K.BAR), ("Pub Fradique", K.PUB),
                  ("Chopperia Madalena", K.CERVEJARIA), ("Bar Esquina Wisard", K.BAR))),
        HoodSpec("pinheiros", "Pinheiros", -23.5660, -46.6920, 0.006, 0.006,
                 ("Rua dos Pinheiros", "Rua Teodoro Sampaio", "Rua Cardeal Arcoverde",
                  "Rua Butantã"),
                 (("Bar do Largo", K.BOTECO), ("Cervejaria Teodoro", K.CERVEJARIA),
                  ("Botequim Cardeal", K.BOTECO), ("Pub dos Pinheiros", K.PUB),
                  ("Adega Butantã", K.DEPOSITO))),
        HoodSpec("bela-vista", "Bela Vista", -23.5590, -46.6480, 0.006, 0.006,
                 ("Rua Treze de Maio", "Rua Rui Barbosa", "Rua Santo Antônio"),
                 (("Cantina Treze de Maio", K.RESTAURANTE), ("Bar do Bixiga", K.BOTECO),
                  ("Boteco Rui Barbosa", K.BOTECO), ("Samba da Bela Vista", K.BAR))),
        HoodSpec("liberdade", "Liberdade", -23.5590, -46.6340, 0.006, 0.006,
                 ("Rua Galvão Bueno", "Rua dos Estudantes", "Rua Tomás Gonzaga"),
                 (("Izakaya Galvão", K.RESTAURANTE), ("Bar dos Estudantes", K.BOTECO),
                  ("Boteco da Praça da Liberdade", K.BOTECO),
                  ("Karaokê Sol Nascente", K.BAR))),
        HoodSpec("mooca", "Mooca", -23.5560, -46.5990, 0.007, 0.007,
                 ("Rua da Mooca", "Rua Javari", "Rua Paes de Barros", "Rua Taquari"),
                 (("Bar do Javari", K.BOTECO), ("Cantina da Mooca", K.RESTAURANTE),
                  ("Empório Juventus", K.DEPOSITO), ("Boteco Paes de Barros", K.BOTECO),
                  ("Cervejaria Mooca Velha", K.CERVEJARIA))),
        HoodSpec("itaim-bibi", "Itaim Bibi", -23.5850, -46.6790, 0.006, 0.006,
                 ("Rua Joaquim Floriano", "Rua Tabapuã", "Rua Pedroso Alvarenga"),
                 (("Pub Joaquim Floriano", K.PUB), ("Bar da Faria Lima", K.BAR),
                  ("Chopp do Itaim", K.BAR), ("Restaurante Tabapuã", K.RESTAURANTE))),
        HoodSpec("vila-mariana", "Vila Mariana", -23.5890, -46.6350, 0.006, 0.006,
                 ("Rua Domingos de Morais", "Rua Joaquim Távora", "Rua Sena Madureira"),
                 (("Boteco Domingos", K.BOTECO), ("Bar da Vila Mariana", K.BAR),
                  ("Cervejaria Lins", K.CERVEJARIA), ("Depósito Santa Cruz", K.DEPOSITO))),
    )),
    CitySpec("rio-de-janeiro", "Rio de Janeiro", "RJ", "America/Sao_Paulo", -22.9068, -43.1729,
             True, 1.05, (
        HoodSpec("lapa", "Lapa", -22.9130, -43.1800, 0.005, 0.006,
                 ("Rua Joaquim Silva", "Rua do Lavradio", "Avenida Mem de Sá",
                  "Rua Riachuelo"),
                 (("Bar dos Arcos", K.BAR), ("Boteco Mem de Sá", K.BOTECO),
                  ("Samba do Lavradio", K.BAR), ("Bar da Joaquim Silva", K.BOTECO),
                  ("Gafieira Riachuelo", K.BAR))),
        HoodSpec("santa-teresa", "Santa Teresa", -22.9210, -43.1950, 0.005, 0.006,
                 ("Rua Almirante Alexandrino", "Rua Paschoal Carlos Magno", "Largo do Curvelo"),
                 (("Bar do Bondinho", K.BOTECO), ("Armazém Alexandrino", K.BAR),
                  ("Bar do Curvelo", K.BOTECO))),
        HoodSpec("botafogo", "Botafogo", -22.9510, -43.1840, 0.005, 0.006,
                 ("Rua Voluntários da Pátria", "Rua São Clemente", "Rua Real Grandeza",
                  "Rua Nelson Mandela"),
                 (("Boteco Voluntários", K.BOTECO), ("Cervejaria São Clemente", K.CERVEJARIA),
                  ("Bar da Real Grandeza", K.BAR), ("Pub Mena Barreto", K.PUB),
                  ("Bar Nelson Mandela", K.BOTECO))),
        HoodSpec("copacabana", "Copacabana", -22.9690, -43.1860, 0.005, 0.006,
                 ("Avenida Atlântica", "Rua Barata Ribeiro",
                  "Avenida Nossa Senhora de Copacabana", "Rua Siqueira Campos"),
                 (("Barraca do Posto 4", K.BARRACA), ("Bar da Barata Ribeiro", K.BOTECO),
                  ("Quiosque Atlântica", K.BARRACA), ("Boteco do Lido", K.BOTECO),
                  ("Chopp da Siqueira Campos", K.BAR)), beach=True),
        HoodSpec("ipanema", "Ipanema", -22.9840, -43.2030, 0.005, 0.006,
                 ("Rua Visconde de Pirajá", "Rua Farme de Amoedo", "Rua Vinicius de Moraes",
                  "Avenida Vieira Souto"),
                 (("Barraca do Posto 9", K.BARRACA), ("Bar Farme", K.BAR),
                  ("Boteco Vinicius", K.BOTECO), ("Pub Garcia d'Ávila", K.PUB)), beach=True),
        HoodSpec("tijuca", "Tijuca", -22.9250, -43.2330, 0.006, 0.006,
                 ("Rua Conde de Bonfim", "Praça Saens Peña", "Rua Uruguai",
                  "Rua Haddock Lobo"),
                 (("Bar da Saens Peña", K.BOTECO), ("Bar do Conde", K.BAR),
                  ("Boteco Uruguai", K.BOTECO), ("Depósito Haddock Lobo", K.DEPOSITO))),
    )),
    CitySpec("recife", "Recife", "PE", "America/Recife", -8.0476, -34.8770, True, 0.95, (
        HoodSpec("boa-viagem", "Boa Viagem", -8.1180, -34.9010, 0.005, 0.005,
                 ("Avenida Boa Viagem", "Rua dos Navegantes", "Avenida Conselheiro Aguiar"),
                 (("Barraca do Segundo Jardim", K.BARRACA), ("Bar dos Navegantes", K.BAR),
                  ("Boteco Conselheiro Aguiar", K.BOTECO), ("Barraca Pracinha", K.BARRACA)),
                 beach=True),
        HoodSpec("pina", "Pina", -8.0900, -34.8850, 0.005, 0.005,
                 ("Avenida Herculano Bandeira", "Rua Marquês de Valença", "Avenida Brasília"),
                 (("Bar do Pina", K.BOTECO), ("Bar Herculano", K.BAR),
                  ("Bar da Brasília Teimosa", K.BOTECO))),
        HoodSpec("recife-antigo", "Recife Antigo", -8.0630, -34.8710, 0.005, 0.004,
                 ("Rua do Bom Jesus", "Rua da Moeda", "Rua do Apolo"),
                 (("Bar do Bom Jesus", K.BAR), ("Boteco da Moeda", K.BOTECO),
                  ("Cervejaria Marco Zero", K.CERVEJARIA), ("Bar do Arsenal", K.BAR))),
        HoodSpec("gracas", "Graças", -8.0480, -34.9000, 0.005, 0.005,
                 ("Rua das Graças", "Avenida Rosa e Silva"),
                 (("Bar das Graças", K.BOTECO), ("Pub Rosa e Silva", K.PUB))),
        HoodSpec("casa-forte", "Casa Forte", -8.0340, -34.9180, 0.005, 0.005,
                 ("Praça de Casa Forte", "Estrada do Encanamento", "Rua Poço da Panela"),
                 (("Bar da Praça de Casa Forte", K.BAR), ("Boteco do Encanamento", K.BOTECO),
                  ("Restaurante Poço da Panela", K.RESTAURANTE))),
    )),
    CitySpec("manaus", "Manaus", "AM", "America/Manaus", -3.1190, -60.0217, True, 1.0, (
        HoodSpec("centro", "Centro", -3.1320, -60.0230, 0.006, 0.006,
                 ("Rua 10 de Julho", "Avenida Eduardo Ribeiro", "Rua José Clemente"),
                 (("Bar do Largo de São Sebastião", K.BAR),
                  ("Boteco Eduardo Ribeiro", K.BOTECO),
                  ("Bar da 10 de Julho", K.BOTECO), ("Bar do Teatro", K.BAR))),
        HoodSpec("adrianopolis", "Adrianópolis", -3.1000, -60.0130, 0.006, 0.006,
                 ("Rua Rio Madeira", "Avenida Mário Ypiranga", "Rua Pará"),
                 (("Bar do Vieiralves", K.BAR), ("Cervejaria Amazonas", K.CERVEJARIA),
                  ("Pub Mário Ypiranga", K.PUB))),
        HoodSpec("parque-10-de-novembro", "Parque 10 de Novembro", -3.0830, -60.0080,
                 0.006, 0.006,
                 ("Avenida Perimetral Thales Loureiro", "Rua Recife",
                  "Avenida Ephigênio Salles"),
                 (("Boteco do Parque 10", K.BOTECO), ("Depósito Perimetral", K.DEPOSITO),
                  ("Bar da Lagoa", K.BAR))),
        HoodSpec("ponta-negra", "Ponta Negra", -3.0640, -60.0990, 0.006, 0.006,
                 ("Avenida Coronel Teixeira", "Rua Praia da Ponta Negra"),
                 (("Barraca da Ponta Negra", K.BARRACA), ("Bar do Anfiteatro", K.BAR),
                  ("Boteco do Tupé", K.BOTECO),
                  ("Restaurante Coronel Teixeira", K.RESTAURANTE)),
                 beach=True),
    )),
    CitySpec("fernando-de-noronha", "Fernando de Noronha", "PE", "America/Noronha",
             -3.8547, -32.4247, True, 1.6, (
        HoodSpec("vila-dos-remedios", "Vila dos Remédios", -3.8420, -32.4110, 0.004, 0.004,
                 ("Rua Nice Cordeiro", "Alameda do Boldró", "Travessa do Forte"),
                 (("Bar da Vila", K.BAR), ("Boteco dos Remédios", K.BOTECO),
                  ("Bar do Forte", K.BAR))),
        HoodSpec("boldro", "Boldró", -3.8520, -32.4290, 0.004, 0.004,
                 ("BR-363", "Mirante do Boldró"),
                 (("Bar do Mirante Boldró", K.BAR), ("Barraca do Boldró", K.BARRACA)),
                 beach=True),
    )),
    # Requested, not live yet: no bairros, no bars.
    CitySpec("belo-horizonte", "Belo Horizonte", "MG", "America/Sao_Paulo", -19.9167, -43.9345,
             False, 1.0),
)
# fmt: on

CLOSED_BARS = {("sao-paulo", "karaoke-sol-nascente"), ("rio-de-janeiro", "bar-do-curvelo")}
CARRY_OUT_ONLY = {("sao-paulo", "deposito-santa-cruz"), ("manaus", "deposito-perimetral")}

# (type, volume_ml, label_pt, label_en)
FORMATS = (
    ("lata", 269, "Lata 269 ml", "269 ml can"),
    ("lata", 350, "Lata 350 ml", "350 ml can"),
    ("lata", 473, "Lata 473 ml", "473 ml can"),
    ("long_neck", 330, "Long neck 330 ml", "330 ml long neck"),
    ("long_neck", 355, "Long neck 355 ml", "355 ml long neck"),
    ("garrafa", 600, "Garrafa 600 ml", "600 ml bottle"),
    ("litrao", 1000, "Litrão 1 L", "1 L bottle (litrão)"),
    ("chopp", 300, "Chopp 300 ml", "300 ml draught"),
    ("chopp", 500, "Chopp 500 ml", "500 ml draught"),
    ("torre", 2500, "Torre 2,5 L", "2.5 L tower"),
    ("torre", 3000, "Torre 3 L", "3 L tower"),
)
VOLUME = {f"{kind}_{ml}": ml for kind, ml, _, _ in FORMATS}

# fmt: off
BRANDS = {
    "brahma": "Brahma", "skol": "Skol", "antarctica": "Antarctica", "heineken": "Heineken",
    "amstel": "Amstel", "itaipava": "Itaipava", "budweiser": "Budweiser",
    "stella-artois": "Stella Artois", "eisenbahn": "Eisenbahn", "colorado": "Colorado",
    "baden-baden": "Baden Baden", "bohemia": "Bohemia", "spaten": "Spaten", "corona": "Corona",
}
# fmt: on

# slug: (name, brand slug, price level relative to a mainstream pilsen)
BEERS = {
    "brahma-chopp": ("Brahma Chopp", "brahma", 1.0),
    "brahma-duplo-malte": ("Brahma Duplo Malte", "brahma", 1.1),
    "skol-pilsen": ("Skol", "skol", 0.97),
    "antarctica-original": ("Antarctica Original", "antarctica", 1.2),
    "antarctica-subzero": ("Antarctica Subzero", "antarctica", 0.9),
    "antarctica-pilsen": ("Antarctica Pilsen", "antarctica", 0.97),
    "heineken": ("Heineken", "heineken", 1.35),
    "amstel": ("Amstel", "amstel", 1.1),
    "itaipava-pilsen": ("Itaipava", "itaipava", 0.9),
    "budweiser": ("Budweiser", "budweiser", 1.15),
    "stella-artois": ("Stella Artois", "stella-artois", 1.35),
    "eisenbahn-pilsen": ("Eisenbahn Pilsen", "eisenbahn", 1.3),
    "colorado-appia": ("Colorado Appia", "colorado", 1.8),
    "baden-baden-golden": ("Baden Baden Golden Ale", "baden-baden", 1.8),
    "bohemia-puro-malte": ("Bohemia", "bohemia", 1.1),
    "spaten": ("Spaten", "spaten", 1.15),
    "corona-extra": ("Corona Extra", "corona", 1.45),
}
HOUSE_DRAUGHT_LEVEL = 0.95  # "chopp da casa": beer unknown

# fmt: off
# Beers sold in each format (None = the house draught, beer unknown).
BEERS_BY_FORMAT: dict[str, tuple[str | None, ...]] = {
    "lata_269": ("skol-pilsen", "brahma-chopp", "itaipava-pilsen", "antarctica-subzero"),
    "lata_350": ("skol-pilsen", "brahma-chopp", "brahma-duplo-malte", "itaipava-pilsen",
                 "antarctica-subzero", "antarctica-original", "heineken", "amstel", "budweiser",
                 "spaten"),
    "lata_473": ("skol-pilsen", "brahma-chopp", "itaipava-pilsen", "heineken", "amstel",
                 "spaten", "budweiser"),
    "long_neck_330": ("heineken", "corona-extra", "budweiser", "stella-artois", "amstel"),
    "long_neck_355": ("spaten", "colorado-appia", "eisenbahn-pilsen", "bohemia-puro-malte",
                      "brahma-duplo-malte"),
    "garrafa_600": ("brahma-chopp", "skol-pilsen", "antarctica-original", "antarctica-pilsen",
                    "heineken", "amstel", "itaipava-pilsen", "bohemia-puro-malte", "spaten",
                    "budweiser", "eisenbahn-pilsen", "colorado-appia", "stella-artois"),
    "litrao_1000": ("brahma-chopp", "skol-pilsen", "antarctica-subzero", "antarctica-pilsen",
                    "itaipava-pilsen"),
    "chopp_300": ("brahma-chopp", "heineken", "stella-artois", "colorado-appia",
                  "baden-baden-golden", "eisenbahn-pilsen", None),
    "chopp_500": ("brahma-chopp", "heineken", "stella-artois", "colorado-appia",
                  "eisenbahn-pilsen", None),
    "torre_2500": ("brahma-chopp", "heineken", "eisenbahn-pilsen", None),
    "torre_3000": ("brahma-chopp", "heineken", "stella-artois", None),
}

# Cents per litre of a mainstream beer at an average bar, per format.
BASE_CENTS_PER_LITRE = {
    "lata_269": 2000, "lata_350": 1800, "lata_473": 1700, "long_neck_330": 3000,
    "long_neck_355": 2900, "garrafa_600": 2000, "litrao_1000": 1500, "chopp_300": 3200,
    "chopp_500": 3000, "torre_2500": 2600, "torre_3000": 2500,
}
KIND_PRICE_LEVEL = {
    K.DEPOSITO: 0.75, K.BOTECO: 0.95, K.BAR: 1.05, K.PUB: 1.25, K.RESTAURANTE: 1.2,
    K.CERVEJARIA: 1.15, K.BARRACA: 1.1, K.OUTRO: 1.0,
}
# What each kind of place pours as its everyday menu (repeats weigh the draw).
KIND_FORMATS = {
    K.BOTECO: ("garrafa_600", "garrafa_600", "litrao_1000", "lata_350", "long_neck_330",
               "chopp_300"),
    K.BAR: ("chopp_300", "chopp_500", "garrafa_600", "long_neck_330", "long_neck_355"),
    K.PUB: ("chopp_500", "chopp_300", "long_neck_330", "long_neck_355"),
    K.BARRACA: ("lata_269", "lata_350", "lata_350", "lata_473", "long_neck_330"),
    K.RESTAURANTE: ("garrafa_600", "long_neck_355", "long_neck_330", "chopp_300"),
    K.DEPOSITO: ("lata_269", "lata_350", "lata_473", "litrao_1000", "garrafa_600"),
    K.CERVEJARIA: ("chopp_300", "chopp_500", "torre_2500", "torre_3000", "garrafa_600"),
}
BALDE_UNITS = {
    "lata_269": (10, 12), "lata_350": (5, 6, 10), "lata_473": (4, 6),
    "long_neck_330": (5, 6), "long_neck_355": (5, 6),
}
# fmt: on
OPENING_HOURS = {
    K.BOTECO: ("Seg–Sáb 11h–00h; Dom 11h–18h", "Todos os dias 10h–23h"),
    K.BAR: ("Ter–Dom 17h–02h", "Seg–Sáb 18h–01h"),
    K.PUB: ("Ter–Sáb 18h–02h", "Qua–Dom 19h–03h"),
    K.BARRACA: ("Todos os dias 8h–18h", "Ter–Dom 9h–17h"),
    K.RESTAURANTE: ("Ter–Dom 12h–23h", "Seg–Sáb 11h30–15h e 18h–23h"),
    K.DEPOSITO: ("Seg–Sáb 9h–22h", "Todos os dias 8h–00h"),
    K.CERVEJARIA: ("Qua–Dom 16h–00h", "Ter–Dom 17h–01h"),
}
COMBO_SIDES = (
    ("Acompanha porção de batata frita", 2500),
    ("Acompanha porção de calabresa acebolada", 3000),
    ("Acompanha porção de mandioca frita", 2200),
    ("Acompanha caldinho de feijão para dois", 1800),
    ("Acompanha isca de peixe", 3900),
)


# --- The plan --------------------------------------------------------------------------------


@dataclass(frozen=True)
class VenueSpec:
    city: str
    slug: str
    name: str
    kind: str
    on_site: bool
    lat: float
    lng: float
    hood: str
    address: str
    instagram: str
    opening_hours: str
    attributes: tuple[str, ...]
    closed: bool


@dataclass(frozen=True)
class DealSpec:
    """One price; days and minutes are counted back from the moment of loading."""

    city: str
    venue: str
    beer: str | None
    format: str
    units: int
    packaging: str
    kind: str
    price_cents: int
    age_minutes: int
    status: str = DealStatus.PUBLISHED
    confirmations: int = 0
    open_disputes: int = 0
    open_bar_minutes: int | None = None
    service_charge_pct: int | None = None
    couvert_cents: int | None = None
    conditions: str = ""
    valid_from_days: int | None = None  # relative to the city-local date of loading
    valid_until_days: int | None = None
    schedules: tuple[dict, ...] = ()
    # Earlier checks of the same price: (minutes ago, price in cents), oldest first.
    history: tuple[tuple[int, int], ...] = field(default=())

    @property
    def key(self) -> tuple:
        return (
            self.city,
            self.venue,
            self.format,
            self.kind,
            self.units,
            self.packaging,
            self.beer,
        )


@dataclass(frozen=True)
class DemoPlan:
    cities: tuple[CitySpec, ...]
    venues: tuple[VenueSpec, ...]
    deals: tuple[DealSpec, ...]


def demo_plan(seed: int = DEMO_SEED) -> DemoPlan:
    """Every bar and price of the demo, as a pure function of the seed."""
    rng = random.Random(seed)
    venues: list[VenueSpec] = []
    deals: list[DealSpec] = []
    for city in CITIES:
        for hood in city.hoods:
            for name, kind in hood.bars:
                venue = _venue_spec(rng, city, hood, name, kind)
                venues.append(venue)
                deals.extend(_venue_deals(rng, city, venue))
    return DemoPlan(cities=CITIES, venues=tuple(venues), deals=tuple(deals))


def _venue_spec(
    rng: random.Random, city: CitySpec, hood: HoodSpec, name: str, kind: str
) -> VenueSpec:
    slug = slug_of(name, 120)
    # Keep bars off the edges so the boundary, not rounding, decides the bairro.
    lat = hood.lat + rng.uniform(-0.8, 0.8) * hood.half_lat
    lng = hood.lng + rng.uniform(-0.8, 0.8) * hood.half_lng
    instagram = ""
    if rng.random() < 0.6:
        instagram = slug.replace("-", rng.choice(("", "_", ".")))[:30].strip("._")
    attributes = set()
    if kind in (K.BAR, K.BOTECO, K.PUB, K.CERVEJARIA):
        if rng.random() < 0.3:
            attributes.add("musica_ao_vivo")
        if rng.random() < 0.45:
            attributes.add("transmite_jogos")
    if rng.random() < 0.4:
        attributes.add("area_externa")
    if kind == K.BARRACA or (hood.beach and rng.random() < 0.3):
        attributes.add("pe_na_areia")
    return VenueSpec(
        city=city.slug,
        slug=slug,
        name=name,
        kind=kind,
        on_site=(city.slug, slug) not in CARRY_OUT_ONLY,
        lat=round(lat, 6),
        lng=round(lng, 6),
        hood=hood.slug,
        address=f"{rng.choice(hood.streets)}, {rng.randint(10, 1999)}",
        instagram=instagram,
        opening_hours=rng.choice(OPENING_HOURS[kind]),
        attributes=tuple(a for a in VENUE_ATTRIBUTES if a in attributes),
        closed=(city.slug, slug) in CLOSED_BARS,
    )


def _menu_price(rng: random.Random, raw_cents: float) -> int:
    """A price as a menu would print it: whole reais, often ending in ,90 or ,50."""
    reais = max(2, round(raw_cents / 100))
    return reais * 100 + rng.choice((-10, -10, -10, 0, -50))


def _happy_hour_schedules(rng: random.Random) -> tuple[dict, ...]:
    roll = rng.random()
    if roll < 0.5:
        return ({"days": WEEKDAYS, "start": "17:00", "end": "20:00"},)
    if roll < 0.7:  # late happy hour, closes after midnight
        return ({"days": [4, 5, 6], "start": "22:00", "end": "02:00"},)
    if roll < 0.85:  # until the end of the day
        return ({"days": [5, 6], "start": "20:00", "end": "24:00"},)
    return (
        {"days": [1, 2, 3, 4], "start": "18:00", "end": "21:00"},
        {"days": [0], "start": "16:00", "end": "19:00"},
    )


def _promo_window(rng: random.Random) -> tuple[int | None, int | None]:
    """valid_from / valid_until in days from today: running, expired, future or open-ended."""
    roll = rng.random()
    if roll < 0.5:
        return -rng.randint(1, 20), rng.randint(3, 30)
    if roll < 0.7:
        start = -rng.randint(30, 60)
        return start, start + rng.randint(7, 25)
    if roll < 0.85:
        start = rng.randint(2, 10)
        return start, start + rng.randint(7, 30)
    return -rng.randint(1, 15), None


def _age_minutes(rng: random.Random) -> int:
    """Minutes since the last check: mostly recent, some out of date, a few too old to rank."""
    low, high = rng.choices(((0, 30), (31, 89), (92, 178), (182, 249)), (50, 30, 13, 7))[0]
    return rng.randint(low, high) * 1440 + rng.randint(0, 1439)


def _checked_at(now: dt.datetime, tz, age_minutes: int) -> dt.datetime:
    """The last check `age_minutes // 1440` city-local days before today, at that minute of
    the day: a price checked "today" is today's whatever the hour of the load (just after
    local midnight too), and never in the future."""
    days, minute = divmod(age_minutes, 1440)
    local = now.astimezone(tz)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if days == 0:  # within the part of today that has passed
        return midnight + (local - midnight) * (minute / 1440)
    return midnight - dt.timedelta(days=days) + dt.timedelta(minutes=minute)


def _standing(rng: random.Random) -> tuple[str, int, int]:
    """(status, confirmations, open disputes)."""
    confirmations = rng.choices(range(7), (30, 20, 15, 12, 10, 8, 5))[0]
    roll = rng.random()
    if roll < 0.05:
        return DealStatus.DISPUTED, confirmations, DISPUTED_AT
    if roll < 0.07:
        return DealStatus.SUSPENDED, confirmations, SUSPENDED_AT
    if roll < 0.08:
        return DealStatus.RETIRED, confirmations, 0
    return DealStatus.PUBLISHED, confirmations, 0


def _venue_deals(rng: random.Random, city: CitySpec, venue: VenueSpec) -> list[DealSpec]:
    level = city.price_factor * KIND_PRICE_LEVEL[venue.kind] * rng.uniform(0.9, 1.1)
    service = {K.RESTAURANTE: 0.9, K.PUB: 0.8, K.CERVEJARIA: 0.7, K.BAR: 0.5, K.BOTECO: 0.2}
    service_charge_pct = 10 if rng.random() < service.get(venue.kind, 0.0) else None
    couvert_cents = None
    if "musica_ao_vivo" in venue.attributes and rng.random() < 0.6:
        couvert_cents = rng.choice((1000, 1200, 1500, 2000, 2500))
    deals: dict[tuple, DealSpec] = {}

    def unit_cents(beer: str | None, code: str) -> float:
        beer_level = BEERS[beer][2] if beer else HOUSE_DRAUGHT_LEVEL
        return BASE_CENTS_PER_LITRE[code] * VOLUME[code] / 1000 * beer_level * level

    def add(
        *,
        code: str,
        beer: str | None,
        price_cents: int,
        kind: str = DealKind.REGULAR,
        units: int = 1,
        packaging: str = Packaging.SINGLE,
        **extra,
    ) -> None:
        age = _age_minutes(rng)
        status, confirmations, disputes = _standing(rng)
        history = []
        if kind == DealKind.REGULAR and age < 150 * 1440 and rng.random() < 0.35:
            minutes, cents = age, price_cents
            for _ in range(rng.randint(1, 3)):
                minutes += rng.randint(25, 40) * 1440
                cents = max(100, _menu_price(rng, cents * rng.uniform(0.9, 0.98)))
                history.append((minutes, cents))
        spec = DealSpec(
            city=city.slug,
            venue=venue.slug,
            beer=beer,
            format=code,
            units=units,
            packaging=packaging,
            kind=kind,
            price_cents=price_cents,
            age_minutes=age,
            status=status,
            confirmations=confirmations,
            open_disputes=disputes,
            service_charge_pct=service_charge_pct,
            couvert_cents=couvert_cents,
            history=tuple(reversed(history)),
            **extra,
        )
        deals.setdefault(spec.key, spec)  # a repeat of an existing price is dropped

    menu = KIND_FORMATS[venue.kind]
    bar_like = venue.kind in (K.BAR, K.BOTECO, K.PUB, K.CERVEJARIA, K.RESTAURANTE)

    for _ in range(rng.randint(3, 5)):
        code = rng.choice(menu)
        beer = rng.choice(BEERS_BY_FORMAT[code])
        packaging = Packaging.TORRE if code.startswith("torre") else Packaging.SINGLE
        add(
            code=code,
            beer=beer,
            packaging=packaging,
            price_cents=_menu_price(rng, unit_cents(beer, code)),
        )

    if rng.random() < (0.3 if venue.kind in (K.PUB, K.RESTAURANTE) else 0.55):
        code = rng.choice(tuple(BALDE_UNITS))
        beer = rng.choice(BEERS_BY_FORMAT[code])
        units = rng.choice(BALDE_UNITS[code])
        kind = rng.choices((DealKind.REGULAR, DealKind.PROMO, DealKind.HAPPY_HOUR), (6, 2, 2))[0]
        extra: dict = {}
        if kind == DealKind.PROMO:
            extra["valid_from_days"], extra["valid_until_days"] = _promo_window(rng)
        elif kind == DealKind.HAPPY_HOUR:
            extra["schedules"] = _happy_hour_schedules(rng)
        add(
            code=code,
            beer=beer,
            units=units,
            packaging=Packaging.BALDE,
            kind=kind,
            price_cents=_menu_price(rng, units * unit_cents(beer, code) * 0.85),
            **extra,
        )

    if venue.kind in (K.BAR, K.PUB, K.CERVEJARIA) and rng.random() < 0.45:
        code = rng.choice(("torre_2500", "torre_3000"))
        beer = rng.choice(BEERS_BY_FORMAT[code])
        happy = rng.random() < 0.3
        add(
            code=code,
            beer=beer,
            packaging=Packaging.TORRE,
            kind=DealKind.HAPPY_HOUR if happy else DealKind.REGULAR,
            schedules=_happy_hour_schedules(rng) if happy else (),
            price_cents=_menu_price(rng, unit_cents(beer, code) * (0.8 if happy else 1.0)),
        )

    if bar_like and rng.random() < 0.55:
        code = rng.choice(("chopp_300", "chopp_300", "chopp_500", "garrafa_600"))
        beer = rng.choice(BEERS_BY_FORMAT[code])
        schedules = _happy_hour_schedules(rng)
        if rng.random() < 0.4:  # two for the price of one
            add(
                code=code,
                beer=beer,
                units=2,
                packaging=Packaging.DOBRO,
                kind=DealKind.HAPPY_HOUR,
                schedules=schedules,
                conditions="Dose dupla: pague 1, leve 2",
                price_cents=_menu_price(rng, unit_cents(beer, code)),
            )
        else:
            add(
                code=code,
                beer=beer,
                kind=DealKind.HAPPY_HOUR,
                schedules=schedules,
                price_cents=_menu_price(rng, unit_cents(beer, code) * 0.75),
            )

    if rng.random() < 0.3:
        code = rng.choice(menu)
        beer = rng.choice(BEERS_BY_FORMAT[code])
        valid_from, valid_until = _promo_window(rng)
        weekly = rng.random() < 0.3
        add(
            code=code,
            beer=beer,
            kind=DealKind.PROMO,
            packaging=Packaging.TORRE if code.startswith("torre") else Packaging.SINGLE,
            valid_from_days=valid_from,
            valid_until_days=valid_until,
            schedules=({"days": [2], "start": "18:00", "end": "23:00"},) if weekly else (),
            conditions=rng.choice(("", "Enquanto durar o estoque", "Somente no salão")),
            price_cents=_menu_price(rng, unit_cents(beer, code) * 0.8),
        )

    if venue.kind != K.DEPOSITO and rng.random() < 0.22:
        code = rng.choice(("garrafa_600", "lata_350", "long_neck_330", "chopp_300"))
        beer = rng.choice(BEERS_BY_FORMAT[code])
        units = rng.choice((2, 3, 4))
        side, side_cents = rng.choice(COMBO_SIDES)
        add(
            code=code,
            beer=beer,
            units=units,
            packaging=Packaging.COMBO,
            kind=DealKind.COMBO,
            conditions=side,
            price_cents=_menu_price(rng, units * unit_cents(beer, code) * 0.9 + side_cents),
        )

    if venue.kind in (K.BAR, K.PUB, K.CERVEJARIA) and rng.random() < 0.2:
        minutes = rng.choice((120, 180, 240))
        beer = rng.choice(("brahma-chopp", "brahma-chopp", "heineken", None))
        friday_night = rng.random() < 0.5
        add(
            code="chopp_300",
            beer=beer,
            kind=DealKind.OPEN_BAR,
            open_bar_minutes=minutes,
            schedules=({"days": [5], "start": "20:00", "end": "24:00"},) if friday_night else (),
            conditions=rng.choice(("Mínimo de 2 pessoas", "Pulseira individual", "")),
            price_cents=_menu_price(rng, city.price_factor * (4000 + minutes / 60 * 1500)),
        )

    return list(deals.values())


# --- Loading ---------------------------------------------------------------------------------


@transaction.atomic
def demo_load(*, now: dt.datetime | None = None, seed: int = DEMO_SEED) -> Counter:
    """Write the demo plan, creating only the rows that are missing; counts of rows created."""
    plan = demo_plan(seed)
    now = now or timezone.now()
    created: Counter = Counter()

    cities: dict[str, City] = {}
    for spec in plan.cities:
        city, made = City.objects.get_or_create(
            slug=spec.slug,
            defaults={
                "name": spec.name,
                "state": spec.state,
                "timezone": spec.timezone,
                "lat": spec.lat,
                "lng": spec.lng,
                "active": spec.active,
            },
        )
        cities[spec.slug] = city
        created["cities"] += made
        for hood in spec.hoods:
            _, made = Neighbourhood.objects.get_or_create(
                city=city, slug=hood.slug, defaults={"name": hood.name, "boundary": hood.boundary}
            )
            created["neighbourhoods"] += made

    formats: dict[str, Format] = {}
    for kind, ml, label_pt, label_en in FORMATS:
        formats[f"{kind}_{ml}"], made = Format.objects.get_or_create(
            code=f"{kind}_{ml}",
            defaults={"type": kind, "volume_ml": ml, "label_pt": label_pt, "label_en": label_en},
        )
        created["formats"] += made

    brands: dict[str, Brand] = {}
    for slug, name in BRANDS.items():
        brands[slug], made = Brand.objects.get_or_create(slug=slug, defaults={"name": name})
        created["brands"] += made
    beers: dict[str, Beer] = {}
    for slug, (name, brand, _) in BEERS.items():
        beers[slug], made = Beer.objects.get_or_create(
            slug=slug, defaults={"name": name, "brand": brands[brand]}
        )
        created["beers"] += made

    venues = {
        (v.city.slug, v.slug): v
        for v in Venue.objects.filter(city__in=cities.values()).select_related("city")
    }
    for spec in plan.venues:
        if (spec.city, spec.slug) in venues:
            continue
        venue = venue_create(
            city=cities[spec.city],
            name=spec.name,
            slug=spec.slug,
            lat=spec.lat,
            lng=spec.lng,
            kind=spec.kind,
            on_site=spec.on_site,
            address=spec.address,
            instagram=spec.instagram,
            opening_hours=spec.opening_hours,
            attributes=list(spec.attributes),
        )
        if spec.closed:
            venue.status = VenueStatus.CLOSED
            venue.save(update_fields=["status"])
        venues[(spec.city, spec.slug)] = venue
        created["venues"] += 1

    created["deals"], created["price_checks"] = _load_deals(plan, now, venues, formats, beers)
    return created


def _load_deals(
    plan: DemoPlan, now: dt.datetime, venues: dict, formats: dict, beers: dict
) -> tuple[int, int]:
    existing = set(
        Deal.objects.filter(venue__in=venues.values()).values_list(
            "venue_id", "format_id", "kind", "units", "packaging", "beer_id"
        )
    )
    zones = {c.slug: zoneinfo.ZoneInfo(c.timezone) for c in plan.cities}
    today = {slug: now.astimezone(tz).date() for slug, tz in zones.items()}
    made = 0
    history: list[PriceCheck] = []
    backdated: list[Deal] = []  # first seen before the last check
    standing: dict[tuple[int, int], list[int]] = defaultdict(list)
    disputed: list[tuple[int, str, int]] = []  # (price, city, open disputes)
    for spec in plan.deals:
        venue, fmt = venues[(spec.city, spec.venue)], formats[spec.format]
        beer = beers[spec.beer] if spec.beer else None
        key = (venue.pk, fmt.pk, spec.kind, spec.units, spec.packaging, beer and beer.pk)
        if key in existing:
            continue
        existing.add(key)
        deal = deal_create(
            venue=venue,
            format=fmt,
            beer=beer,
            price_cents=spec.price_cents,
            units=spec.units,
            packaging=spec.packaging,
            kind=spec.kind,
            open_bar_minutes=spec.open_bar_minutes,
            service_charge_pct=spec.service_charge_pct,
            couvert_cents=spec.couvert_cents,
            conditions=spec.conditions,
            valid_from=_days_from(today[spec.city], spec.valid_from_days),
            valid_until=_days_from(today[spec.city], spec.valid_until_days),
            schedules=list(spec.schedules),
            verified_at=_checked_at(now, zones[spec.city], spec.age_minutes),
            status=spec.status,
            source=CheckSource.IMPORT,
        )
        made += 1
        standing[spec.confirmations, spec.open_disputes].append(deal.pk)
        if spec.open_disputes:
            disputed.append((deal.pk, spec.city, spec.open_disputes))
        for minutes, cents in spec.history:
            at = now - dt.timedelta(minutes=minutes)
            history.append(
                PriceCheck(deal=deal, price_cents=cents, checked_at=at, source=CheckSource.IMPORT)
            )
        if spec.history:  # the price was first seen at its oldest check
            deal.created_at = now - dt.timedelta(minutes=spec.history[0][0])
            backdated.append(deal)
    # What deal_create leaves at its defaults: one UPDATE per standing, not one per price.
    for (confirmations, disputes), ids in standing.items():
        if confirmations or disputes:
            Deal.objects.filter(pk__in=ids).update(
                confirmations=confirmations, open_disputes=disputes
            )
    Deal.objects.bulk_update(backdated, ["created_at"], batch_size=500)
    PriceCheck.objects.bulk_create(history, batch_size=500)
    _load_disputes(disputed, now, zones)
    return made, made + len(history)


def _load_disputes(disputed: list[tuple[int, str, int]], now: dt.datetime, zones: dict) -> None:
    """The disputes a disputed or suspended price's count stands on, waiting in the
    moderators' queue (a count with none behind it could never be decided there): one from
    each of as many documentation addresses (192.0.2.0/24), an hour apart."""
    from submissions.models import DealDispute  # the demo fills the moderators' queue too

    disputes = []
    for deal_id, city, count in disputed:
        for n in range(count):
            at = now - dt.timedelta(hours=n + 1)
            disputes.append(
                DealDispute(
                    deal_id=deal_id,
                    address_hash=address_hash(f"192.0.2.{n + 1}"),
                    day=at.astimezone(zones[city]).date(),
                    created_at=at,
                )
            )
    DealDispute.objects.bulk_create(disputes, batch_size=500)


def _days_from(today: dt.date, offset: int | None) -> dt.date | None:
    return None if offset is None else today + dt.timedelta(days=offset)
