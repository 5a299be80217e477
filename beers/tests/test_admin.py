"""The moderators' admin over the demo data: every page renders, search and filters work."""

import json

import pytest
from django.db.models import Q
from django.urls import reverse
from django.utils import translation

from beers.admin import brl
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

pytestmark = pytest.mark.django_db

MODELS = (City, Neighbourhood, Venue, Brand, Beer, Format, Deal, PriceCheck)
READ_ONLY_ADD = (Deal, PriceCheck)  # prices and checks come in through services


def admin_url(model, view: str, *args) -> str:
    return reverse(f"admin:beers_{model._meta.model_name}_{view}", args=args)


def form_data(response) -> dict:
    """The POST data of an admin change form as the browser would send it, unchanged."""
    data = {}
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        forms += [inline.formset.management_form, *inline.formset.forms]
    for form in forms:
        for name in form.fields:
            # value() is prepared for the widget already: JSON as the text box holds it (a
            # second prepare_value sent the JSON string '"[]"')
            value = form[name].value()
            if value is not None and value is not False:
                data[form.add_prefix(name)] = value
    return data


@pytest.fixture
def admin(demo_data, admin_client):
    """A superuser's browser over the demo data."""
    return admin_client


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_changelist_renders(admin, model):
    response = admin.get(admin_url(model, "changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count == model.objects.count() > 0


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_page_renders(admin, model):
    obj = model.objects.order_by("pk").last()
    response = admin.get(admin_url(model, "change", obj.pk))
    assert response.status_code == 200


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_add_page_renders_unless_rows_come_from_services(admin, model):
    response = admin.get(admin_url(model, "add"))
    assert response.status_code == (403 if model in READ_ONLY_ADD else 200)


def test_a_login_with_a_foreign_next_lands_on_the_admin(client, django_user_model):
    """An unsafe `next` is refused (no open redirect); the moderator then lands on the admin,
    not on Django's /accounts/profile/, which is a 404 here."""
    django_user_model.objects.create_user("mod", password="a-long-pass-phrase", is_staff=True)
    for unsafe in ("https://evil.example/", "//evil.example/x"):
        response = client.post(
            f"{reverse('admin:login')}?next={unsafe}",
            {"username": "mod", "password": "a-long-pass-phrase", "next": unsafe},
        )
        assert response.status_code == 302 and response["Location"] == reverse("admin:index")
        client.logout()
    response = client.post(
        reverse("admin:login"),
        {"username": "mod", "password": "a-long-pass-phrase", "next": "/admin/beers/deal/"},
    )
    assert response["Location"] == "/admin/beers/deal/"


def test_admin_pages_carry_the_sites_icon(admin, client):
    """Without one the browser asks for /favicon.ico: a 404 and a console error on every admin
    page (an outside audit in Chromium). The same icon as the site's pages."""
    icon = '<link rel="icon" href="data:image/svg+xml,'
    pages = [reverse("admin:index"), admin_url(Deal, "changelist")]
    for url in pages:
        assert icon in admin.get(url).content.decode(), url
    assert icon in client.get(reverse("admin:login")).content.decode()
    assert icon in client.get("/").content.decode()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_changelist_query_count_does_not_grow_with_rows(
    admin, model, django_assert_max_num_queries
):
    # Session, user, count, page, filters' choices: a fixed few, never one per row.
    with django_assert_max_num_queries(15):
        admin.get(admin_url(model, "changelist"))


@pytest.mark.parametrize(
    ("model", "term", "expected"),
    [
        (City, "recife", lambda: City.objects.filter(slug="recife")),
        (Neighbourhood, "Madalena", lambda: Neighbourhood.objects.filter(slug="vila-madalena")),
        (Venue, "harmonia", lambda: Venue.objects.filter(name__icontains="harmonia")),
        (
            Venue,
            "javari",  # a bar's name, or a street in its address
            lambda: Venue.objects.filter(
                Q(name__icontains="javari") | Q(address__icontains="javari")
            ),
        ),
        (Brand, "heine", lambda: Brand.objects.filter(slug="heineken")),
        (Beer, "antarctica", lambda: Beer.objects.filter(brand__slug="antarctica")),
        (Format, "torre", lambda: Format.objects.filter(type="torre")),
        (Deal, "Bar do Pina", lambda: Deal.objects.filter(venue__name__icontains="bar do pina")),
        (Deal, "litrao_1000", lambda: Deal.objects.filter(format__code="litrao_1000")),
        (
            PriceCheck,
            "Bar do Pina",
            lambda: PriceCheck.objects.filter(deal__venue__name__icontains="bar do pina"),
        ),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else v if isinstance(v, str) else "",
)
def test_search_finds_exactly_the_matching_rows(admin, model, term, expected):
    response = admin.get(admin_url(model, "changelist"), {"q": term})
    assert response.status_code == 200
    found = {obj.pk for obj in response.context["cl"].result_list}
    wanted = set(expected().values_list("pk", flat=True))
    assert wanted and response.context["cl"].result_count == len(wanted)
    assert found <= wanted


def test_search_by_deal_id(admin):
    deal = Deal.objects.order_by("pk")[10]
    response = admin.get(admin_url(Deal, "changelist"), {"q": str(deal.pk)})
    assert deal in response.context["cl"].result_list


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"status__exact": "disputed"}, {"status": "disputed"}),
        ({"kind__exact": "open_bar"}, {"kind": "open_bar"}),
        ({"packaging__exact": "balde"}, {"packaging": "balde"}),
        ({"format__type__exact": "torre"}, {"format__type": "torre"}),
    ],
)
def test_deal_filters(admin, query, expected):
    response = admin.get(admin_url(Deal, "changelist"), query)
    assert response.status_code == 200
    assert response.context["cl"].result_count == Deal.objects.filter(**expected).count() > 0


def test_deal_list_shows_reais_and_reais_per_litre(admin):
    deal = Deal.objects.filter(kind="regular").order_by("price_per_litre").first()
    response = admin.get(admin_url(Deal, "changelist"), {"q": str(deal.pk)})
    html = response.content.decode()
    assert brl(deal.price_cents) in html
    assert f"{brl(deal.price_per_litre)}/L" in html


def test_change_page_shows_price_per_litre_from_the_column(admin):
    deal = Deal.objects.filter(kind="regular", units=1, format__code="garrafa_600").first()
    response = admin.get(admin_url(Deal, "change", deal.pk))
    assert f"{brl(deal.price_per_litre)}/L" in response.content.decode()


def test_brl_formats_cents_as_brazilian_reais():
    with translation.override("pt-br"):
        assert brl(1290) == "R$ 12,90"
        assert brl(123456) == "R$ 1.234,56"
        assert brl(2150.0) == "R$ 21,50"
        assert brl(1234.5) == "R$ 12,35"  # half up, as the API rounds
        assert brl(3990 * 1000 / 2100) == "R$ 19,00"
        assert brl(None) == ""


def test_correcting_a_price_records_a_moderator_check(admin):
    deal = Deal.objects.filter(kind="regular", status="published").first()
    Deal.objects.filter(pk=deal.pk).update(confirmations=3)
    url = admin_url(Deal, "change", deal.pk)
    data = form_data(admin.get(url))
    data["price_cents"] = amount = deal.price_cents + 100

    response = admin.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    deal.refresh_from_db()
    # the new amount, and nobody has confirmed it yet
    assert (deal.price_cents, deal.confirmations) == (amount, 0)
    check = deal.checks.first()
    assert (check.source, check.price_cents) == (CheckSource.MODERATOR, deal.price_cents)
    assert check.checked_at == deal.verified_at
    assert deal.price_per_litre == deal.price_cents * 1000 / (deal.units * deal.volume_ml)


def test_saving_without_a_price_change_records_no_check(admin):
    deal = Deal.objects.filter(kind="happy_hour").first()
    url = admin_url(Deal, "change", deal.pk)
    data = form_data(admin.get(url))
    data["conditions"] = "Somente no balcão"
    checks = deal.checks.count()

    assert admin.post(url, data).status_code == 302
    deal.refresh_from_db()
    assert deal.conditions == "Somente no balcão"
    assert deal.checks.count() == checks


BAD_SCHEDULES = [
    # an audit saved each of these in the price form: the city's search, its bar pages and
    # every export then failed (500s, KeyError/TypeError) until someone mended the price
    ('[{"days": [1], "start": "5pm", "end": "8pm"}]', "start é HH:MM"),
    ('"abc"', "Uma lista de até 14 horários"),
    ('{"days": [1], "start": "17:00", "end": "20:00"}', "Uma lista de até 14 horários"),
    ('[{"foo": 1}]', "Horário 1: days"),
    ('[{"days": ["1"], "start": "17:00", "end": "20:00"}]', "Horário 1: days"),
    # these saved and showed nonsense ("ter" for day 9, "seg 25h–26h", " 17h–20h")
    ('[{"days": [9], "start": "17:00", "end": "20:00"}]', "Horário 1: days"),
    ('[{"days": [], "start": "17:00", "end": "20:00"}]', "Horário 1: days"),
    ('[{"days": [1], "start": "17:00", "end": "20:00"}, 3]', "Horário 2: um objeto"),
    ('[{"days": [1], "start": "25:00", "end": "26:00"}]', "start é HH:MM"),
    ('[{"days": [1], "start": "24:00", "end": "02:00"}]', "start é HH:MM"),
    ('[{"days": [1], "start": "17:00", "end": "24:30"}]', "end é HH:MM"),
    ('[{"days": [true], "start": "17:00", "end": "20:00"}]', "Horário 1: days"),
    (json.dumps([{"days": [1], "start": "17:00", "end": "20:00"}] * 15), "até 14 horários"),
]


@pytest.mark.parametrize(("typed", "words"), BAD_SCHEDULES, ids=[t[:48] for t, _ in BAD_SCHEDULES])
def test_schedules_the_site_cannot_read_are_a_form_error(admin, client, typed, words):
    deal = Deal.objects.filter(kind="happy_hour").first()
    url = admin_url(Deal, "change", deal.pk)
    data = form_data(admin.get(url))
    data["schedules"] = typed

    response = admin.post(url, data)

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert words in " ".join(errors.get("schedules", [])), errors
    assert Deal.objects.get(pk=deal.pk).schedules == deal.schedules
    assert client.get(f"/api/v1/search?city={deal.city.slug}").status_code == 200


def test_schedules_typed_null_are_none_and_other_keys_are_dropped(admin):
    """`null` was a 500 (the column is NOT NULL); a key the site does not read is not kept."""
    deal = Deal.objects.filter(kind="happy_hour").first()
    url = admin_url(Deal, "change", deal.pk)
    data = form_data(admin.get(url))
    data["schedules"] = "null"
    assert admin.post(url, data).status_code == 302
    assert Deal.objects.get(pk=deal.pk).schedules == []
    data["schedules"] = '[{"days": [5, 6], "start": "18:00", "end": "24:00", "note": "x"}]'
    assert admin.post(url, data).status_code == 302
    assert Deal.objects.get(pk=deal.pk).schedules == [
        {"days": [5, 6], "start": "18:00", "end": "24:00"}
    ]


def test_minutes_of_an_open_bar_only_on_an_open_bar(admin):
    deal = Deal.objects.filter(kind="regular", open_bar_minutes__isnull=True).first()
    url = admin_url(Deal, "change", deal.pk)
    data = form_data(admin.get(url))
    data["open_bar_minutes"] = 60

    response = admin.post(url, data)

    assert response.status_code == 200
    assert "open_bar_minutes" in response.context["adminform"].form.errors
    assert Deal.objects.get(pk=deal.pk).open_bar_minutes is None
    open_bar = Deal.objects.filter(kind="open_bar").first()
    url = admin_url(Deal, "change", open_bar.pk)
    data = form_data(admin.get(url))
    data["open_bar_minutes"] = 90
    assert admin.post(url, data).status_code == 302
    assert Deal.objects.get(pk=open_bar.pk).open_bar_minutes == 90


@pytest.mark.parametrize(
    ("model", "changes", "message"),
    [
        (Deal, {"units": 51}, "Unidades: de 1 a 50."),
        (Deal, {"service_charge_pct": 31}, "Taxa de serviço: de 0 a 30%."),
        (Deal, {"couvert_cents": 100_001}, "Couvert: de R$ 0,00 a R$ 1.000,00."),
        (
            Deal,
            {"valid_from": "2026-12-10", "valid_until": "2026-12-01"},
            "A validade termina antes de começar.",
        ),
        (Venue, {"lat": 95}, "Latitude: de -90 a 90."),
        (Venue, {"lng": 200}, "Longitude: de -180 a 180."),
        (Venue, {"instagram": "@quiosque"}, "Instagram: de 1 a 30 letras minúsculas"),
        (City, {"lat": -95}, "Latitude: de -90 a 90."),
    ],
)
def test_a_form_breaking_a_tables_rule_says_what_to_fix(admin, model, changes, message):
    """The constraint's own message, not "Constraint “deal_units_range” is violated"."""
    row = model.objects.order_by("pk").first()
    url = admin_url(model, "change", row.pk)
    data = form_data(admin.get(url))
    data.update(changes)

    with translation.override("pt-br"):
        response = admin.post(url, data)

    assert response.status_code == 200
    errors = " ".join(str(e) for e in response.context["adminform"].form.non_field_errors())
    assert message in errors and "Constraint" not in errors
    row_after = model.objects.get(pk=row.pk)
    assert all(getattr(row_after, name) == getattr(row, name) for name in changes)


def test_a_bars_attributes_are_ticked_not_typed(admin):
    """The JSON box took `null` (a 500: the column is NOT NULL) and any text."""
    venue = Venue.objects.filter(attributes=[]).first()
    url = admin_url(Venue, "change", venue.pk)
    data = form_data(admin.get(url))
    data["attributes"] = ["pe_na_areia", "musica_ao_vivo"]
    assert admin.post(url, data).status_code == 302
    assert Venue.objects.get(pk=venue.pk).attributes == ["pe_na_areia", "musica_ao_vivo"]
    data["attributes"] = ["null"]
    response = admin.post(url, data)
    assert response.status_code == 200
    assert "attributes" in response.context["adminform"].form.errors
    data.pop("attributes")
    assert admin.post(url, data).status_code == 302
    assert Venue.objects.get(pk=venue.pk).attributes == []


def test_record_check_action_marks_prices_checked_now(admin):
    old = list(Deal.objects.order_by("verified_at")[:3])
    response = admin.post(
        admin_url(Deal, "changelist"),
        {"action": "record_check", "_selected_action": [d.pk for d in old]},
    )
    assert response.status_code == 302
    for deal in old:
        fresh = Deal.objects.get(pk=deal.pk)
        assert fresh.verified_at > deal.verified_at
        assert fresh.checks.first().source == CheckSource.MODERATOR


def test_new_bar_without_bairro_gets_the_one_that_holds_its_point(admin):
    hood = Neighbourhood.objects.get(slug="lapa")
    centre = hood.boundary["coordinates"][0]
    lng = (centre[0][0] + centre[2][0]) / 2
    lat = (centre[0][1] + centre[2][1]) / 2
    data = form_data(admin.get(admin_url(Venue, "add")))
    data.update(
        city=hood.city_id,
        name="Bar Novo da Lapa",
        slug="bar-novo-da-lapa",
        kind="bar",
        on_site="on",
        status="open",
        lat=lat,
        lng=lng,
    )

    response = admin.post(admin_url(Venue, "add"), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Venue.objects.get(slug="bar-novo-da-lapa").neighbourhood == hood


def test_slugs_and_format_volume_are_read_only_once_saved(admin):
    venue = Venue.objects.first()
    form = admin.get(admin_url(Venue, "change", venue.pk)).context["adminform"].form
    # a bar's prices carry its city: it cannot be moved away from them
    assert not {"slug", "city"} & set(form.fields)
    fmt = Format.objects.get(code="garrafa_600")
    form = admin.get(admin_url(Format, "change", fmt.pk)).context["adminform"].form
    assert not {"code", "type", "volume_ml"} & set(form.fields)


def test_a_bar_cannot_take_a_bairro_of_another_city(admin):
    venue = Venue.objects.filter(neighbourhood__isnull=False).first()
    elsewhere = Neighbourhood.objects.exclude(city=venue.city_id).first()
    data = form_data(admin.get(admin_url(Venue, "change", venue.pk)))
    data.update(neighbourhood=elsewhere.pk)

    response = admin.post(admin_url(Venue, "change", venue.pk), data)

    assert response.status_code == 200
    assert "neighbourhood" in response.context["adminform"].form.errors
    assert Venue.objects.get(pk=venue.pk).neighbourhood_id == venue.neighbourhood_id


def test_a_bairro_stays_in_its_city_with_its_slug(admin):
    """Moved to Recife, São Paulo's Pinheiros left its bars behind: São Paulo's answers and
    files still named it, Recife's map held a polygon in São Paulo."""
    bairro = Neighbourhood.objects.get(slug="pinheiros")
    form = admin.get(admin_url(Neighbourhood, "change", bairro.pk)).context["adminform"].form
    assert not {"slug", "city"} & set(form.fields)
    data = form_data(admin.get(admin_url(Neighbourhood, "change", bairro.pk)))
    elsewhere = City.objects.exclude(pk=bairro.city_id).first()
    data.update(city=elsewhere.pk, slug="outro", name="Pinheiros de Cima")
    assert admin.post(admin_url(Neighbourhood, "change", bairro.pk), data).status_code == 302
    moved = Neighbourhood.objects.get(pk=bairro.pk)
    assert (moved.city_id, moved.slug, moved.name) == (
        bairro.city_id,
        "pinheiros",
        "Pinheiros de Cima",
    )


def test_price_checks_are_read_only(admin):
    check = PriceCheck.objects.exclude(price_cents=100).first()
    response = admin.post(admin_url(PriceCheck, "change", check.pk), {"price_cents": 100})
    assert response.status_code == 403
    assert PriceCheck.objects.get(pk=check.pk).price_cents == check.price_cents


def test_a_price_check_is_deleted_only_with_its_price(admin):
    """A superuser deleted four checks: the prices kept their `verified_at`, the price index
    left them out of the month, and the files disagreed. A price still goes, checks and all."""
    from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

    check = PriceCheck.objects.first()
    changelist = admin_url(PriceCheck, "changelist")
    assert "delete_selected" not in admin.get(changelist).content.decode()
    admin.post(changelist, {"action": "delete_selected", ACTION_CHECKBOX_NAME: [check.pk]})
    assert admin.post(admin_url(PriceCheck, "delete", check.pk), {"post": "yes"}).status_code == 403
    assert "deletelink" not in admin.get(admin_url(PriceCheck, "change", check.pk)).content.decode()
    assert PriceCheck.objects.filter(pk=check.pk).exists()

    deal = check.deal
    response = admin.post(admin_url(Deal, "delete", deal.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not PriceCheck.objects.filter(deal_id=deal.pk).exists()


def test_admin_autocomplete_for_bars(admin):
    response = admin.get(
        reverse("admin:autocomplete"),
        {
            "app_label": "beers",
            "model_name": "venue",
            "field_name": "neighbourhood",
            "term": "Copa",
        },
    )
    assert response.status_code == 200
    assert [r["text"] for r in response.json()["results"]] == ["Copacabana"]


def test_staff_without_permissions_cannot_see_prices(admin, django_user_model):
    django_user_model.objects.create_user("moderadora", password="x", is_staff=True)
    admin.logout()
    admin.login(username="moderadora", password="x")
    assert admin.get(admin_url(Deal, "changelist")).status_code == 403
