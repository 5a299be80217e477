"""Cities, bairros, venues, the beer catalogue and prices (deals).

Every bound of the interface that concerns stored data is also a database CheckConstraint, so
a bad row is refused by the database itself, whatever door it came through.
"""

import re
import zoneinfo

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Case, F, Q, Value, When
from django.db.models.functions import Cast, Concat
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .geo import validate_boundary

SLUG_RE = r"^[a-z0-9]+(-[a-z0-9]+)*$"
FORMAT_CODE_RE = r"^[a-z][a-z_]*_[0-9]+$"
# A format type: lowercase words joined by `_`, no digits (a code is `{type}_{volume_ml}`), two
# letters at least (the `format` query takes 2 to 40 characters: a type `x` could not be asked).
FORMAT_TYPE_RE = r"^([a-z]{2,}|[a-z]+(_[a-z]+)+)$"
INSTAGRAM_RE = r"^[a-z0-9._]{1,30}$"
UF_CODES = (
    "AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO".split()
)


# First path segments of the site's own routes (beers/urls.py, config/urls.py, /mcp), and those
# under /api/v1/ that a city's dataset files would fall under (/api/v1/venues/{id},
# /api/v1/optout/{token}): a city of such a slug would have pages and files that answer as
# something else (the opt-out page for every file of a city `optout`).
SITE_SEGMENTS = ("admin", "api", "en", "mcp", "static")
RESERVED_CITY_SLUGS = frozenset({*SITE_SEGMENTS, "optout", "venues"})
# Names the tz database holds that are no place's zone: the machine's own clock ("localtime",
# which a city's times must never follow) and the zone of no place ("Factory").
NOT_PLACE_ZONES = frozenset({"localtime", "posixrules", "Factory"})


def validate_timezone(value: str) -> None:
    """An IANA zone name that this machine's tz database knows, of a place."""
    if value in NOT_PLACE_ZONES or value not in zoneinfo.available_timezones():
        raise ValidationError(_("%(value)s is not an IANA time zone"), params={"value": value})


def validate_city_slug(value: str) -> None:
    if value in RESERVED_CITY_SLUGS:
        raise ValidationError(
            _("“%(value)s” é um endereço do próprio site; escolha outro."),
            params={"value": value},
        )


# What a moderator reads when a form breaks one of the tables' own rules (the constraints'
# default names the rule, as "Constraint “venue_lat_range” is violated").
SLUG_MESSAGE = _(
    "Slug: letras minúsculas e dígitos, em grupos unidos por um hífen (vila-madalena)."
)
LAT_MESSAGE = _("Latitude: de -90 a 90.")
LNG_MESSAGE = _("Longitude: de -180 a 180.")
PRICE_MESSAGE = _("Preço: de R$ 0,01 a R$ 10.000,00.")


class City(models.Model):
    slug = models.SlugField(max_length=80, unique=True, validators=[validate_city_slug])
    name = models.CharField(_("nome"), max_length=80)
    state = models.CharField(_("UF"), max_length=2, choices=[(uf, uf) for uf in UF_CODES])
    timezone = models.CharField(_("fuso horário"), max_length=64, validators=[validate_timezone])
    lat = models.FloatField()
    lng = models.FloatField()
    active = models.BooleanField(_("ativa"), default=False)
    # The last month ("YYYY-MM", city-local) of the price index kept as it was when it closed
    # (PriceIndexHistory): months up to it no longer follow the data. "" while none is.
    price_index_closed_through = models.CharField(
        max_length=7, blank=True, default="", editable=False
    )

    class Meta:
        verbose_name = _("cidade")
        verbose_name_plural = _("cidades")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(slug__regex=SLUG_RE),
                name="city_slug_format",
                violation_error_message=SLUG_MESSAGE,
            ),
            models.CheckConstraint(
                condition=Q(state__in=UF_CODES),
                name="city_state_uf",
                violation_error_message=_("Estado: a sigla de uma UF (SP, RJ, …)."),
            ),
            models.CheckConstraint(
                condition=Q(lat__gte=-90, lat__lte=90),
                name="city_lat_range",
                violation_error_message=LAT_MESSAGE,
            ),
            models.CheckConstraint(
                condition=Q(lng__gte=-180, lng__lte=180),
                name="city_lng_range",
                violation_error_message=LNG_MESSAGE,
            ),
            models.CheckConstraint(
                condition=~Q(timezone=""),
                name="city_timezone_set",
                violation_error_message=_("Informe o fuso horário (America/Sao_Paulo, …)."),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.state})"

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.timezone)

    def local_now(self):
        return timezone.now().astimezone(self.tz)


class Neighbourhood(models.Model):
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="neighbourhoods")
    slug = models.SlugField(max_length=80)
    name = models.CharField(_("nome"), max_length=120)
    boundary = models.JSONField(
        _("limite (GeoJSON)"),
        null=True,
        blank=True,
        help_text=_("Geometria GeoJSON (Polygon ou MultiPolygon), lon/lat WGS 84."),
        validators=[validate_boundary],
    )

    class Meta:
        verbose_name = _("bairro")
        verbose_name_plural = _("bairros")
        ordering = ["city", "name"]
        constraints = [
            models.UniqueConstraint(fields=["city", "slug"], name="neighbourhood_slug_per_city"),
            models.CheckConstraint(
                condition=Q(slug__regex=SLUG_RE),
                name="neighbourhood_slug_format",
                violation_error_message=SLUG_MESSAGE,
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        # An empty JSON value typed for "no boundary" is none (the activation's checklist
        # counted `{}` as a boundary, and the city went live with no feature).
        if self.boundary in ({}, [], ""):
            self.boundary = None


PRICE_MAX_CENTS = 1_000_000  # interface.md: a price is > 0, at most R$ 10.000


class VenueKind(models.TextChoices):
    BAR = "bar", _("bar")
    BOTECO = "boteco", _("boteco")
    PUB = "pub", _("pub")
    BARRACA = "barraca", _("barraca")
    RESTAURANTE = "restaurante", _("restaurante")
    DEPOSITO = "deposito", _("depósito")
    CERVEJARIA = "cervejaria", _("cervejaria")
    OUTRO = "outro", _("outro")


class VenueStatus(models.TextChoices):
    OPEN = "open", _("aberto")
    CLOSED = "closed", _("fechado")


VENUE_ATTRIBUTES = ("musica_ao_vivo", "transmite_jogos", "area_externa", "pe_na_areia")


class Venue(models.Model):
    city = models.ForeignKey(City, on_delete=models.PROTECT, related_name="venues")
    slug = models.SlugField(max_length=140)
    name = models.CharField(_("nome"), max_length=120)
    kind = models.CharField(_("tipo"), max_length=16, choices=VenueKind.choices)
    on_site = models.BooleanField(_("consumo no local"), default=True)
    neighbourhood = models.ForeignKey(
        Neighbourhood, on_delete=models.SET_NULL, null=True, blank=True, related_name="venues"
    )
    address = models.CharField(_("endereço"), max_length=200, blank=True, default="")
    lat = models.FloatField()
    lng = models.FloatField()
    instagram = models.CharField(max_length=30, blank=True, default="")
    opening_hours = models.CharField(_("horário"), max_length=255, blank=True, default="")
    attributes = models.JSONField(_("atributos"), default=list, blank=True)
    status = models.CharField(max_length=8, choices=VenueStatus.choices, default=VenueStatus.OPEN)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("bar")
        verbose_name_plural = _("bares")
        ordering = ["city", "name"]
        constraints = [
            models.UniqueConstraint(fields=["city", "slug"], name="venue_slug_per_city"),
            models.CheckConstraint(
                condition=Q(slug__regex=SLUG_RE),
                name="venue_slug_format",
                violation_error_message=SLUG_MESSAGE,
            ),
            models.CheckConstraint(condition=Q(kind__in=VenueKind.values), name="venue_kind_valid"),
            models.CheckConstraint(
                condition=Q(status__in=VenueStatus.values), name="venue_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(lat__gte=-90, lat__lte=90),
                name="venue_lat_range",
                violation_error_message=LAT_MESSAGE,
            ),
            models.CheckConstraint(
                condition=Q(lng__gte=-180, lng__lte=180),
                name="venue_lng_range",
                violation_error_message=LNG_MESSAGE,
            ),
            models.CheckConstraint(
                condition=Q(instagram="") | Q(instagram__regex=INSTAGRAM_RE),
                name="venue_instagram_format",
                violation_error_message=_(
                    "Instagram: de 1 a 30 letras minúsculas, dígitos, pontos e _, sem @."
                ),
            ),
        ]
        indexes = [models.Index(fields=["city", "lat", "lng"], name="venue_city_point")]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        errors = {}
        if self.attributes is None:  # "null" typed for none
            self.attributes = []
        if not isinstance(self.attributes, list):
            errors["attributes"] = _("Uma lista de: %s") % ", ".join(VENUE_ATTRIBUTES)
        else:
            bad = [a for a in self.attributes if a not in VENUE_ATTRIBUTES]
            if bad:
                errors["attributes"] = _("Atributos desconhecidos: %s") % bad
            else:  # each once, as the import holds a tree to
                self.attributes = list(dict.fromkeys(self.attributes))
        if (
            self.neighbourhood_id is not None
            and self.city_id is not None
            and self.neighbourhood.city_id != self.city_id
        ):
            errors["neighbourhood"] = _("Esse bairro é de outra cidade.")
        if errors:
            raise ValidationError(errors)


class Brand(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(_("nome"), max_length=80)

    class Meta:
        verbose_name = _("marca")
        verbose_name_plural = _("marcas")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(slug__regex=SLUG_RE),
                name="brand_slug_format",
                violation_error_message=SLUG_MESSAGE,
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Beer(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(_("nome"), max_length=80)
    brand = models.ForeignKey(
        Brand, on_delete=models.PROTECT, null=True, blank=True, related_name="beers"
    )

    class Meta:
        verbose_name = _("cerveja")
        verbose_name_plural = _("cervejas")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(slug__regex=SLUG_RE),
                name="beer_slug_format",
                violation_error_message=SLUG_MESSAGE,
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        # A price's brand is its beer's (datasets.md): a beer given a brand, another one or
        # none takes its prices along, so live answers and the datasets agree.
        Deal.objects.filter(beer=self).exclude(brand_id=self.brand_id).update(
            brand_id=self.brand_id
        )

    @staticmethod
    def prices_follow_their_beers() -> int:
        """The same rule for every beer at once (after a bulk upsert, which skips save())."""
        return Deal.objects.filter(beer__isnull=False).update(
            brand_id=models.Subquery(
                Beer.objects.filter(pk=models.OuterRef("beer_id")).values("brand_id")[:1]
            )
        )


class FormatType(models.TextChoices):
    """The types decisions.md's codes name (the demo data's). The catalogue may hold others
    (an imported tree's): a type is any FORMAT_TYPE_RE word."""

    LATA = "lata", _("lata")
    LONG_NECK = "long_neck", _("long neck")
    GARRAFA = "garrafa", _("garrafa")
    LITRAO = "litrao", _("litrão")
    CHOPP = "chopp", _("chopp")
    TORRE = "torre", _("torre")


class Format(models.Model):
    code = models.CharField(_("código"), max_length=40, unique=True)
    type = models.CharField(_("tipo"), max_length=16)
    volume_ml = models.PositiveIntegerField(_("volume (ml)"))
    label_pt = models.CharField(max_length=60)
    label_en = models.CharField(max_length=60)

    class Meta:
        verbose_name = _("formato")
        verbose_name_plural = _("formatos")
        ordering = ["type", "volume_ml"]
        constraints = [
            models.CheckConstraint(
                condition=Q(code__regex=FORMAT_CODE_RE),
                name="format_code_pattern",
                violation_error_message=_("Código: o tipo e o volume em ml, como garrafa_600."),
            ),
            models.CheckConstraint(
                condition=Q(type__regex=FORMAT_TYPE_RE),
                name="format_type_valid",
                violation_error_message=_(
                    "Tipo: palavras de letras minúsculas unidas por _, como long_neck."
                ),
            ),
            models.CheckConstraint(
                condition=Q(volume_ml__gt=0, volume_ml__lte=20000),
                name="format_volume_range",
                violation_error_message=_("Volume: de 1 a 20.000 ml."),
            ),
            # decisions.md: codes are {type}_{volume_ml}
            models.CheckConstraint(
                condition=Q(
                    code=Concat(F("type"), Value("_"), Cast(F("volume_ml"), models.CharField()))
                ),
                name="format_volume_in_code",
                violation_error_message=_("O código é tipo_volume (ex.: garrafa_600)."),
            ),
        ]

    def __str__(self) -> str:
        return self.code

    def label(self, lang: str) -> str:
        return self.label_en if lang == "en" else self.label_pt


class Packaging(models.TextChoices):
    SINGLE = "single", _("unidade")
    BALDE = "balde", _("balde")
    TORRE = "torre", _("torre")
    COMBO = "combo", _("combo")
    DOBRO = "dobro", _("dobro")


# A weekly window of a price (ScheduleDraft in interface.md): opens at `start`, closes at `end`.
HOUR_START_RE = r"^(?:[01][0-9]|2[0-3]):[0-5][0-9]$"
HOUR_END_RE = r"^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$"
SCHEDULES_MAX = 14


class ScheduleProblem(ValueError):
    """Why a value is not a price's list of schedules: `part` is "list", "object", "days",
    "start" or "end", `index` the schedule's place (None for the list itself)."""

    def __init__(self, part: str, index: int | None = None):
        super().__init__(part if index is None else f"{index}: {part}")
        self.part, self.index = part, index


SCHEDULE_MESSAGES = {
    "list": _('Uma lista de até 14 horários {"days": […], "start": "HH:MM", "end": "HH:MM"}.'),
    "object": _('Horário %(n)d: um objeto {"days": […], "start": "HH:MM", "end": "HH:MM"}.'),
    "days": _("Horário %(n)d: days são de 1 a 7 números de 0 (domingo) a 6 (sábado)."),
    "start": _("Horário %(n)d: start é HH:MM, hora de 00 a 23."),
    "end": _("Horário %(n)d: end é HH:MM, hora de 00 a 23, ou 24:00."),
}


def schedules_checked(value) -> list[dict]:
    """A price's schedules as stored: at most 14 of `{days, start, end}`, days 1 to 7 integers
    0..6 (0 = Sunday), start HH:MM (hour 00 to 23), end HH:MM (hour 00 to 23, or 24:00).
    Other keys are dropped. Raises ScheduleProblem: what the pages, the API and the export
    read must have this shape (the admin, the import and the submissions all hold to it)."""
    if not isinstance(value, list) or len(value) > SCHEDULES_MAX:
        raise ScheduleProblem("list")
    out = []
    for i, schedule in enumerate(value):
        if not isinstance(schedule, dict):
            raise ScheduleProblem("object", i)
        days, start, end = schedule.get("days"), schedule.get("start"), schedule.get("end")
        if (
            not isinstance(days, list)
            or not 1 <= len(days) <= 7
            or any(isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= 6 for d in days)
        ):
            raise ScheduleProblem("days", i)
        if not isinstance(start, str) or not re.fullmatch(HOUR_START_RE, start):
            raise ScheduleProblem("start", i)
        if not isinstance(end, str) or not re.fullmatch(HOUR_END_RE, end):
            raise ScheduleProblem("end", i)
        out.append({"days": days, "start": start, "end": end})
    return out


class DealKind(models.TextChoices):
    REGULAR = "regular", _("normal")
    HAPPY_HOUR = "happy_hour", _("happy hour")
    PROMO = "promo", _("promoção")
    COMBO = "combo", _("combo")
    OPEN_BAR = "open_bar", _("open bar")


class DealStatus(models.TextChoices):
    PUBLISHED = "published", _("publicado")
    DISPUTED = "disputed", _("contestado")
    SUSPENDED = "suspended", _("fora do ranking (aguarda checagem)")
    RETIRED = "retired", _("retirado")


RANKED_STATUSES = (DealStatus.PUBLISHED, DealStatus.DISPUTED)
# The standing machine (interface.md): this many open disputes make a price disputed, and
# this many take it out of the rankings (suspended) until a moderator decides.
DISPUTED_AT = 2
SUSPENDED_AT = 3


# The ranking's order: cheapest per litre, then by package price, the latest check, the id
# (open bars by package price: the same without the first). The indexes below spell it too.
PRICE_ORDER = ("price_per_litre", "price_cents", "-verified_at", "id")
OPEN_BAR_ORDER = PRICE_ORDER[1:]
_PRICE_ORDER = tuple(F(f[1:]).desc() if f.startswith("-") else f for f in PRICE_ORDER)
_RANKED_PER_LITRE = Q(status__in=RANKED_STATUSES) & ~Q(kind=DealKind.OPEN_BAR)


class Deal(models.Model):
    """One price of one serving at one bar.

    `price_per_litre` is a stored generated column (cents per litre, unrounded double) so that
    "cheapest per litre first" is an index scan. `volume_ml` is the format's volume, copied on
    creation (a format code names its volume, so it never changes).
    """

    city = models.ForeignKey(City, on_delete=models.PROTECT, related_name="deals")
    venue = models.ForeignKey(Venue, on_delete=models.CASCADE, related_name="deals")
    beer = models.ForeignKey(Beer, on_delete=models.PROTECT, null=True, blank=True)
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, null=True, blank=True)
    format = models.ForeignKey(Format, on_delete=models.PROTECT)
    volume_ml = models.PositiveIntegerField(_("volume da unidade (ml)"))
    units = models.PositiveSmallIntegerField(_("unidades"), default=1)
    packaging = models.CharField(
        _("embalagem"), max_length=8, choices=Packaging.choices, default=Packaging.SINGLE
    )
    kind = models.CharField(
        _("tipo"), max_length=12, choices=DealKind.choices, default=DealKind.REGULAR
    )
    price_cents = models.PositiveIntegerField(_("preço (centavos)"))
    price_per_litre = models.GeneratedField(
        expression=Case(
            When(kind=DealKind.OPEN_BAR, then=None),
            default=Cast(F("price_cents"), models.FloatField())
            * 1000.0
            / Cast(F("units") * F("volume_ml"), models.FloatField()),
        ),
        output_field=models.FloatField(null=True),
        db_persist=True,
    )
    open_bar_minutes = models.PositiveSmallIntegerField(null=True, blank=True)
    service_charge_pct = models.PositiveSmallIntegerField(null=True, blank=True)
    couvert_cents = models.PositiveIntegerField(null=True, blank=True)
    conditions = models.CharField(_("condições"), max_length=280, blank=True, default="")
    valid_from = models.DateField(_("válido de"), null=True, blank=True)
    valid_until = models.DateField(_("válido até"), null=True, blank=True)
    schedules = models.JSONField(
        _("horários"),
        default=list,
        blank=True,
        help_text=_('Lista de {"days": [0-6], "start": "HH:MM", "end": "HH:MM"}; 0 = domingo.'),
    )
    verified_at = models.DateTimeField(_("última checagem"), default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    confirmations = models.PositiveIntegerField(_("confirmações"), default=0)
    open_disputes = models.PositiveIntegerField(_("contestações abertas"), default=0)
    status = models.CharField(
        max_length=10, choices=DealStatus.choices, default=DealStatus.PUBLISHED
    )
    credit = models.CharField(
        _("enviado por"),
        max_length=40,
        blank=True,
        default="",
        help_text=_("Apelido de quem enviou o preço, creditado no site."),
    )

    class Meta:
        verbose_name = _("preço")
        verbose_name_plural = _("preços")
        constraints = [
            models.CheckConstraint(
                condition=Q(price_cents__gt=0, price_cents__lte=PRICE_MAX_CENTS),
                name="deal_price_range",
                violation_error_message=PRICE_MESSAGE,
            ),
            models.CheckConstraint(
                condition=Q(units__gte=1, units__lte=50),
                name="deal_units_range",
                violation_error_message=_("Unidades: de 1 a 50."),
            ),
            models.CheckConstraint(condition=Q(volume_ml__gt=0), name="deal_volume_positive"),
            models.CheckConstraint(
                condition=Q(packaging__in=Packaging.values), name="deal_packaging_valid"
            ),
            models.CheckConstraint(condition=Q(kind__in=DealKind.values), name="deal_kind_valid"),
            models.CheckConstraint(
                condition=Q(status__in=DealStatus.values), name="deal_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(open_bar_minutes__isnull=True)
                | Q(open_bar_minutes__gt=0, open_bar_minutes__lte=1440),
                name="deal_open_bar_minutes_range",
                violation_error_message=_("Minutos de open bar: de 1 a 1.440."),
            ),
            models.CheckConstraint(
                condition=Q(service_charge_pct__isnull=True)
                | Q(service_charge_pct__gte=0, service_charge_pct__lte=30),
                name="deal_service_charge_range",
                violation_error_message=_("Taxa de serviço: de 0 a 30%%."),
            ),
            models.CheckConstraint(
                condition=Q(couvert_cents__isnull=True)
                | Q(couvert_cents__gte=0, couvert_cents__lte=100_000),
                name="deal_couvert_range",
                violation_error_message=_("Couvert: de R$ 0,00 a R$ 1.000,00."),
            ),
            models.CheckConstraint(
                condition=Q(valid_from__isnull=True)
                | Q(valid_until__isnull=True)
                | Q(valid_from__lte=F("valid_until")),
                name="deal_validity_order",
                violation_error_message=_("A validade termina antes de começar."),
            ),
        ]
        indexes = [
            # Ranking: "top N of a city by price per litre" as an ordered index scan.
            models.Index("city", *_PRICE_ORDER, name="deal_rank", condition=_RANKED_PER_LITRE),
            # A brand's ranking in a city (search with brand=): without it PostgreSQL walked the
            # whole city ranking or intersected bitmaps (27 ms on 1M prices; 3.3 ms with it).
            models.Index(
                "city", "brand", *_PRICE_ORDER, name="deal_rank_brand", condition=_RANKED_PER_LITRE
            ),
            # The distinct schedules of a city (when a cached "cheapest" answer must end): an
            # index-only scan.
            models.Index(
                fields=["city", "schedules"],
                name="deal_schedules",
                condition=_RANKED_PER_LITRE & ~Q(schedules=[]),
            ),
            # Open bars rank by package price.
            models.Index(
                "city",
                *_PRICE_ORDER[1:],
                name="deal_rank_open_bar",
                condition=Q(status__in=RANKED_STATUSES) & Q(kind=DealKind.OPEN_BAR),
            ),
            models.Index(fields=["venue", "status"], name="deal_venue_status"),
        ]

    def __str__(self) -> str:
        # the format's code, not its number: which serving of the bar (the admin's lists
        # select the format with the price)
        return f"{self.venue} · {self.format.code} · {self.price_cents / 100:.2f}"

    def save(self, *args, **kwargs):
        """The brand of a price with a known beer is that beer's brand, none for a beer without
        one (datasets.md: "the beer's brand, or the brand alone when the beer is unknown")."""
        fields = kwargs.get("update_fields")
        touched = fields is None or bool({"beer", "beer_id", "brand", "brand_id"} & set(fields))
        if self.beer_id is not None and touched:
            if Deal.beer.is_cached(self):
                beer_brand = self.beer.brand_id
            else:
                beer_brand = Beer.objects.filter(pk=self.beer_id).values_list(
                    "brand_id", flat=True
                )[0]
            if beer_brand != self.brand_id:
                self.brand_id = beer_brand
                if fields is not None:
                    kwargs["update_fields"] = {*fields, "brand"}
        super().save(*args, **kwargs)

    def clean(self):
        """What a form (the admin) may not save: schedules the pages, the API and the export
        cannot read (a moderator's "5pm" took a city's search and every export down), and
        minutes of an open bar on a price that is not one (the answers carry them)."""
        errors = {}
        try:
            self.schedules = schedules_checked([] if self.schedules is None else self.schedules)
        except ScheduleProblem as problem:
            errors["schedules"] = SCHEDULE_MESSAGES[problem.part] % {"n": (problem.index or 0) + 1}
        if self.open_bar_minutes is not None and self.kind != DealKind.OPEN_BAR:
            errors["open_bar_minutes"] = _("Só um open bar tem minutos; deixe em branco.")
        if errors:
            raise ValidationError(errors)


class CheckSource(models.TextChoices):
    SUBMISSION = "submission", _("envio")
    CONFIRMATION = "confirmation", _("confirmação")
    MODERATOR = "moderator", _("moderação")
    MENU_PHOTO = "menu_photo", _("foto do cardápio")
    IMPORT = "import", _("importação")


class PriceCheck(models.Model):
    """One check of a price: what it cost and when someone saw it."""

    deal = models.ForeignKey(Deal, on_delete=models.CASCADE, related_name="checks")
    price_cents = models.PositiveIntegerField()
    checked_at = models.DateTimeField(default=timezone.now)
    source = models.CharField(max_length=16, choices=CheckSource.choices)

    class Meta:
        verbose_name = _("checagem de preço")
        verbose_name_plural = _("checagens de preço")
        ordering = ["-checked_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(price_cents__gt=0, price_cents__lte=PRICE_MAX_CENTS),
                name="pricecheck_price_range",
                violation_error_message=PRICE_MESSAGE,
            ),
            models.CheckConstraint(
                condition=Q(source__in=CheckSource.values), name="pricecheck_source_valid"
            ),
        ]
        indexes = [models.Index(fields=["deal", "checked_at"], name="pricecheck_deal_time")]

    def __str__(self) -> str:
        return f"{self.deal_id} · {self.price_cents / 100:.2f} · {self.checked_at:%Y-%m-%d}"


class PriceIndexHistory(models.Model):
    """Cells of the closed (`final`) months of a city's price index, as they were when the
    month closed (beers.services.price_index_close_months) or as an imported tree's
    price-index.json gives them (a tree carries each price's last check only, not the checks
    the index of earlier months rests on). The selector serves these months from here alone,
    so a final month's figures never change and a mirror keeps its source's
    (beers/selectors/price_index.py)."""

    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="+")
    month = models.CharField(max_length=7)  # YYYY-MM, city-local
    scope = models.CharField(max_length=16)
    key = models.CharField(max_length=140, blank=True, default="")  # "" is the city's null key
    n = models.PositiveIntegerField()
    min_cents = models.PositiveIntegerField()
    p25_cents = models.PositiveIntegerField()
    median_cents = models.PositiveIntegerField()
    p75_cents = models.PositiveIntegerField()

    class Meta:
        verbose_name = _("mês fechado do índice de preços")
        verbose_name_plural = _("meses fechados do índice de preços")
        constraints = [
            models.UniqueConstraint(
                fields=["city", "month", "scope", "key"], name="price_index_history_cell"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.city_id} {self.month} {self.scope} {self.key}"
