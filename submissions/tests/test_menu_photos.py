"""Menu photos read in the background into drafts (submissions.menu_photos), with the real
OCR engine on rendered menus, and the automated reviewer."""

import base64
import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.utils import timezone
from PIL import Image, ImageDraw, ImageFont

from beers.models import Beer, Brand, CheckSource, Deal, Format, PriceCheck
from beers.text import name_key
from outreach.links import menu_link_ref
from submissions import menu_photos, menus, ocr
from submissions.models import MenuDraft, MenuPhoto, MenuPhotoUpload, PhotoState, ReviewState
from submissions.review import ReviewError

from .conftest import ALWAYS_PASS

MENU = [
    "CARDAPIO",
    "Heineken 600ml ... R$ 14,90",
    "Heineken lata 350ml ... R$ 7,50",
    "Porcao de batata ... R$ 30,00",
    "Heineken chopp 300ml ... R$ 900,00",
]


def _jpeg(image: Image.Image, **save) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=90, **save)
    return buffer.getvalue()


def menu_jpeg(lines: list[str], *, columns: list[str] | None = None) -> bytes:
    """A rendered menu; with `columns`, a second column of lines to the right."""
    font = ImageFont.load_default(size=40)
    width = 1900 if columns else 1000
    image = Image.new("RGB", (width, 60 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((30, 30 + 70 * i), line, fill="black", font=font)
    for i, line in enumerate(columns or []):
        draw.text((1000, 30 + 70 * i), line, fill="black", font=font)
    return _jpeg(image)


def data_uri(jpeg: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()


@pytest.fixture
def catalogue(world):
    heineken = Brand.objects.create(slug="heineken", name="Heineken")
    brahma = Brand.objects.create(slug="brahma", name="Brahma")
    beer = Beer.objects.create(slug="heineken", name="Heineken", brand=heineken)
    Beer.objects.create(slug="brahma-chopp", name="Brahma Chopp", brand=brahma)
    lata = Format.objects.create(
        code="lata_350", type="lata", volume_ml=350, label_pt="lata 350 ml", label_en="350 ml can"
    )
    chopp = Format.objects.create(
        code="chopp_300", type="chopp", volume_ml=300, label_pt="chopp 300", label_en="300 draught"
    )
    return {"beer": beer, "brahma": brahma, "lata": lata, "chopp": chopp}


def upload(api, world, lines, *, ref: str | None = None, columns: list[str] | None = None):
    body = {
        "city": world.city.slug,
        "venue": world.venue.slug,
        "images": [data_uri(menu_jpeg(lines, columns=columns))],
        "turnstile": ALWAYS_PASS,
    }
    if ref:
        body["ref"] = ref
    response = api.post("/api/v1/menu-photos", body)
    assert response.status_code == 202, response.content
    return MenuPhotoUpload.objects.latest("pk")


# --- reading lines ------------------------------------------------------------------------------


def test_the_engine_reads_a_rendered_menu_line_by_line():
    lines = ocr.read_lines(menu_jpeg(MENU[:3]))
    assert len(lines) == 3 and all(line.sure for line in lines)
    assert "14,90" in lines[1].text and "Heineken" in lines[1].text
    assert "7,50" in lines[2].text


def test_boxes_on_one_printed_line_are_joined_left_to_right():
    boxes = [
        (10, 40, 400, "R$ 14,90", 0.99),
        (12, 41, 20, "Heineken 600ml", 0.95),
        (50, 80, 20, "Brahma", 1.0),
    ]
    assert ocr.group_lines(boxes) == [
        ocr.Line("Heineken 600ml R$ 14,90", sure=True),
        ocr.Line("Brahma", sure=True),
    ]


@pytest.mark.parametrize(
    "box, sure",
    [
        ((10, 34, 400, "R$ 14,90", 0.9), True),
        ((10, 34, 400, "R$ 14,90", 0.89), False),  # a box the engine doubted
        ((10, 33, 400, "R$ 14,90", 1.0), False),  # print too small to trust
    ],
)
def test_a_line_is_sure_when_each_of_its_boxes_is(box, sure):
    boxes = [box, (12, 42, 20, "Heineken 600ml", 1.0)]
    assert ocr.group_lines(boxes) == [ocr.Line("Heineken 600ml R$ 14,90", sure=sure)]


def test_a_phone_photo_is_read_the_way_up_it_is_shown():
    """A phone stores a portrait photo sideways, with an EXIF orientation to show it upright."""
    upright = Image.open(io.BytesIO(menu_jpeg(MENU[:3])))
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned 90 degrees clockwise
    sideways = _jpeg(upright.rotate(90, expand=True), exif=exif)
    assert [line.text for line in ocr.read_lines(sideways)] == [
        line.text for line in ocr.read_lines(menu_jpeg(MENU[:3]))
    ]


@pytest.mark.parametrize("size", [(20_000, 1), (1, 20_000), (4000, 20)])
def test_a_strip_is_read_in_bounded_memory(size):
    """The engine scales a photo's shorter side up to 736 pixels: a 20000 x 1 JPEG (5.6 kB),
    read as 2000 x 1, asked for 11 GiB. Read in a process allowed 3 GiB of memory."""
    strip = _jpeg(Image.new("RGB", size, "white"))
    image = ocr._image(strip)
    assert max(image.size) <= ocr.MAX_ASPECT * min(image.size)
    child = subprocess.run(
        [sys.executable, "-c", READ_LIMITED],
        input=strip,
        capture_output=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr.decode()[-2000:]
    assert child.stdout.strip() == b"0"  # no text, read without running out of memory


READ_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from submissions import ocr
print(len(ocr.read_lines(sys.stdin.buffer.read())))
"""


def test_a_photo_the_engine_cannot_decode_is_unreadable():
    with pytest.raises(ocr.Unreadable):
        ocr.read_lines(b"\xff\xd8 not a jpeg")


def test_a_photo_without_text_has_no_lines():
    buffer = io.BytesIO()
    Image.new("RGB", (200, 200), "white").save(buffer, "JPEG")
    assert ocr.read_lines(buffer.getvalue()) == []


# --- lines into drafts --------------------------------------------------------------------------


CATALOGUE = menus.Catalogue(
    beers=[(name_key(n), i) for i, n in enumerate(["Heineken", "Brahma Chopp", "Original"])],
    brands=[(name_key(n), 100 + i) for i, n in enumerate(["Brahma", "Heineken"])],
    formats=[
        (1, "lata", 269),
        (2, "lata", 350),
        (4, "long_neck", 330),
        (6, "garrafa", 600),
        (7, "litrao", 1000),
        (8, "chopp", 300),
        (9, "chopp", 500),
        (10, "torre", 2500),
    ],
)


@pytest.mark.parametrize(
    "line, price, beer, brand, fmt, notes",
    [
        ("Heineken 600ml ..... R$ 14,90", 1490, 0, None, 6, []),
        ("Brahma Chopp lata 350ml  R$ 6,50", 650, 1, None, 2, []),  # a beer named "Chopp"
        ("Chopp Brahma 300ml   9,90", 990, None, 100, 8, []),
        ("Original litrão R$ 19,00", 1900, 2, None, 7, []),
        ("Heineken 14.90", 1490, 0, None, None, ["no format"]),
        ("Heineken lata 2,50", 250, 0, None, None, ["no format"]),  # three cans: which?
        ("Torre Brahma 2,5L 1.234,50", 123450, None, 100, 10, []),
        ("Agua 500ml 5,00", 500, None, None, 9, ["no beer or brand"]),
        ("Refrigerante lata 350ml 6,00", 600, None, None, 2, ["no beer or brand"]),
        # the line says it is beer: a price of an unknown beer (a submission's `beer: null`)
        ("Chopp 300ml R$ 8,00", 800, None, None, 8, []),
        ("Cerveja garrafa 600ml R$ 14,00", 1400, None, None, 6, []),
        ("Cerveja 600ml R$ 14,00", 1400, None, None, 6, []),
        ("Ginger beer lata 350ml R$ 12,00", 1200, None, None, 2, ["no beer or brand"]),
        ("Chopp de vinho 300ml R$ 12,00", 1200, None, None, 8, ["no beer or brand"]),
        ("Heineken 600ml R$ 15", 1500, 0, None, 6, []),  # whole reais after "R$"
        ("Heineken LN 330ml R$ 9,00", 900, 0, None, 4, []),
        ("Heineken 600ml R$15 - 2 por R$ 28", 2800, 0, None, 6, ["offer: 2 por"]),
        ("Balde Heineken long neck 330ml R$ 59,90", 5990, 0, None, 4, ["offer: balde"]),
    ],
)
def test_a_menu_line_with_a_price_is_a_draft(line, price, beer, brand, fmt, notes):
    draft = menus.read_line(line, CATALOGUE)
    assert (draft.price_cents, draft.beer_id, draft.brand_id, draft.format_id) == (
        price,
        beer,
        brand,
        fmt,
    )
    assert draft.notes == notes


@pytest.mark.parametrize(
    "line, drafts",
    [
        # two columns read as one printed line
        (
            "Heineken LN 330ml R$ 9,90 Brahma Chopp lata 350ml R$ 4,50",
            [(990, 0, None, 4), (450, 1, None, 2)],
        ),
        # two sizes on one line: the second price's words do not name the beer
        ("Chopp Brahma 300ml R$ 9,50 500ml R$ 14,00", [(950, None, 100, 8), (1400, None, None, 9)]),
        ("Heineken 600ml R$15 - 2 por R$ 28", [(1500, 0, None, 6), (2800, None, None, None)]),
    ],
)
def test_a_line_with_several_prices_gives_a_draft_each_for_a_person(line, drafts):
    read = menus.read_menu([line], CATALOGUE)
    assert [(d.price_cents, d.beer_id, d.brand_id, d.format_id) for d in read] == drafts
    assert all("one of 2 prices on its line" in d.notes for d in read)
    assert menus.read_menu(["Heineken 600ml ..... R$ 14,90"], CATALOGUE)[0].notes == []


@pytest.mark.parametrize("line", ["CARDÁPIO", "Heineken 600ml", "Aberto das 17h às 23h", ""])
def test_a_line_without_a_price_is_no_draft(line):
    assert menus.read_line(line, CATALOGUE) is None


# --- the whole way ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_trusted_menu_goes_live_at_once_inside_the_hard_bounds(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        sent = upload(api, world, MENU, ref=menu_link_ref(world.venue.pk))
    sent.refresh_from_db()
    assert sent.trusted and sent.state == PhotoState.DRAFTED and sent.processed_at
    assert not MenuPhoto.objects.filter(upload=sent).exists()  # photos are not kept
    drafts = {d.price_cents: d for d in MenuDraft.objects.filter(upload=sent)}
    assert sorted(drafts) == [750, 1490, 3000, 90000]

    bottle, can = drafts[1490], drafts[750]
    assert bottle.state == can.state == ReviewState.APPROVED
    assert (bottle.beer, bottle.format) == (catalogue["beer"], world.format)
    assert (can.beer, can.format) == (catalogue["beer"], catalogue["lata"])
    assert PriceCheck.objects.get(deal=bottle.deal).source == CheckSource.MENU_PHOTO
    search = api.get(f"/api/v1/search?city={world.city.slug}&brand=heineken").json()
    assert {(d["id"], d["price_brl"]) for d in search["deals"]} == {
        (bottle.deal_id, 14.9),
        (can.deal_id, 7.5),
    }

    food, dear = drafts[3000], drafts[90000]
    assert food.state == ReviewState.PENDING and "no format" in food.notes
    # R$ 900 for 300 ml is R$ 3.000 a litre: a misread, for a person to look at
    assert dear.state == ReviewState.PENDING and dear.decision_note == "outside the hard bounds"
    assert dear.deal is None


@pytest.mark.django_db
def test_a_trusted_menu_in_two_columns_waits_for_a_person_with_each_price_in_its_draft(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """The reader joins the two columns of a printed row into one line: its two prices give
    a draft each, with the right words, and neither goes live on its own."""
    with django_capture_on_commit_callbacks(execute=True):
        upload(
            api,
            world,
            ["Heineken 600ml R$ 14,90"],
            columns=["Heineken lata 350ml R$ 7,50"],
            ref=menu_link_ref(world.venue.pk),
        )
    drafts = MenuDraft.objects.order_by("price_cents")
    assert [(d.price_cents, d.beer, d.format) for d in drafts] == [
        (750, catalogue["beer"], catalogue["lata"]),
        (1490, catalogue["beer"], world.format),
    ]
    assert {d.state for d in drafts} == {ReviewState.PENDING}
    assert all("one of 2 prices on its line" in d.notes for d in drafts)
    assert not Deal.objects.filter(price_cents__in=[750, 1490]).exists()


def _bottle_at_the_bar(world, catalogue, **fields) -> Deal:
    """The bar's plain Heineken 600 ml at R$ 13,90, checked 20 days ago (the menu says 14,90)."""
    return Deal.objects.create(
        venue=world.venue,
        city=world.city,
        format=world.format,
        volume_ml=600,
        beer=catalogue["beer"],
        brand=catalogue["beer"].brand,
        price_cents=1390,
        verified_at=timezone.now() - timezone.timedelta(days=20),
        **fields,
    )


@pytest.mark.django_db
def test_a_trusted_menu_checks_the_bars_same_price_again(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    known = _bottle_at_the_bar(world, catalogue)
    with django_capture_on_commit_callbacks(execute=True):
        upload(api, world, MENU[1:2], ref=menu_link_ref(world.venue.pk))
    draft = MenuDraft.objects.get()
    assert draft.deal_id == known.pk
    known.refresh_from_db()
    assert known.price_cents == 1490
    assert (timezone.now() - known.verified_at).total_seconds() < 60
    assert Deal.objects.filter(venue=world.venue, beer=catalogue["beer"]).count() == 1


@pytest.mark.django_db
def test_a_trusted_menus_beer_of_no_known_brand_goes_live_and_its_soda_waits(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """interface.md: a trusted upload's prices inside the hard bounds are approved at once.
    "Cerveja garrafa 600ml" is such a price of an unknown beer (a submission's `beer: null`);
    a soft drink's line says no beer and waits for a person."""
    lines = ["Cerveja garrafa 600ml R$ 12,00", "Refrigerante lata 350ml R$ 6,00"]
    with django_capture_on_commit_callbacks(execute=True):
        upload(api, world, lines, ref=menu_link_ref(world.venue.pk))
    beer, soda = MenuDraft.objects.order_by("-price_cents")
    assert (beer.price_cents, beer.beer, beer.brand, beer.format) == (
        1200,
        None,
        None,
        world.format,
    )
    assert beer.state == ReviewState.APPROVED and beer.deal.beer is None
    assert soda.state == ReviewState.PENDING and "no beer or brand" in soda.notes
    search = api.get(f"/api/v1/search?city={world.city.slug}").json()
    ours = [d for d in search["deals"] if d["price_brl"] == 12.0]
    assert [(d["beer"], d["brand"], d["format"]) for d in ours] == [
        ("Cerveja", None, world.format.code)
    ]
    assert not Deal.objects.filter(price_cents=600).exists()


@pytest.mark.django_db
def test_two_beers_without_a_name_in_one_format_wait_and_stay_two_prices(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """Two bottles the catalogue cannot name (a Pilsen and an IPA) would be one price, the
    second overwriting the first: both wait, and a moderator approving both makes two prices.
    Alone, an unnamed bottle is a check of the bar's one unnamed bottle; with two of those at
    the bar, it waits too."""
    lines = ["Cerveja Pilsen garrafa 600ml R$ 12,00", "Cerveja IPA garrafa 600ml R$ 19,00"]
    with django_capture_on_commit_callbacks(execute=True):
        upload(api, world, lines, ref=menu_link_ref(world.venue.pk))
    pilsen, ipa = MenuDraft.objects.order_by("price_cents")
    assert {pilsen.state, ipa.state} == {ReviewState.PENDING}
    assert {pilsen.decision_note, ipa.decision_note} == {
        "the menu shows several amounts for this beer and format"
    }
    house = world.deal  # the bar's one unnamed bottle, R$ 12,90
    first = menu_photos.menu_draft_approve(draft_id=pilsen.pk)
    second = menu_photos.menu_draft_approve(draft_id=ipa.pk)
    assert first.pk != second.pk and house.pk not in {first.pk, second.pk}
    assert sorted(
        Deal.objects.filter(pk__in=[first.pk, second.pk]).values_list("price_cents", flat=True)
    ) == [1200, 1900]
    house.refresh_from_db()
    assert house.price_cents == 1290  # a person's approval at another amount is another price
    Deal.objects.filter(pk__in=[first.pk, second.pk]).delete()

    with django_capture_on_commit_callbacks(execute=True):
        upload(api, world, ["Cerveja garrafa 600ml R$ 12,50"], ref=menu_link_ref(world.venue.pk))
    house.refresh_from_db()
    assert house.price_cents == 1250  # the bar's own menu checks its house bottle again
    Deal.objects.create(
        venue=world.venue, city=world.city, format=world.format, volume_ml=600, price_cents=1500
    )
    with django_capture_on_commit_callbacks(execute=True):
        upload(api, world, ["Cerveja garrafa 600ml R$ 13,00"], ref=menu_link_ref(world.venue.pk))
    waiting = MenuDraft.objects.get(price_cents=1300)
    assert waiting.state == ReviewState.PENDING
    assert waiting.decision_note == "the bar has several prices this beer could be"


@pytest.mark.django_db
def test_a_named_beer_at_two_amounts_waits_and_one_read_twice_goes_live(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """Two Heineken cans at two amounts on one menu: which is the can's price? Both wait.
    The same line on two photos of one page is one amount: it goes live."""
    cases = [(("7,50", "9,00"), ReviewState.PENDING), (("7,50", "7,50"), ReviewState.APPROVED)]
    for amounts, state in cases:
        MenuDraft.objects.all().delete()
        lines = [f"Heineken lata 350ml R$ {amount}" for amount in amounts]
        with django_capture_on_commit_callbacks(execute=True):
            upload(api, world, lines, ref=menu_link_ref(world.venue.pk))
        assert {d.state for d in MenuDraft.objects.all()} == {state}, amounts
    assert Deal.objects.filter(beer=catalogue["beer"], format=catalogue["lata"]).count() == 1


@pytest.mark.django_db
def test_an_untrusted_menu_waits_for_a_moderator(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    before = Deal.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        sent = upload(api, world, MENU[:3], ref="A" * 16)  # well formed, not the bar's
    sent.refresh_from_db()
    assert not sent.trusted and sent.state == PhotoState.DRAFTED
    drafts = list(MenuDraft.objects.filter(upload=sent).order_by("position"))
    assert [d.state for d in drafts] == [ReviewState.PENDING, ReviewState.PENDING]
    assert Deal.objects.count() == before

    deal = menu_photos.menu_draft_approve(draft_id=drafts[0].pk)
    assert deal.price_cents == 1490 and deal.beer == catalogue["beer"]
    menu_photos.menu_draft_reject(draft_id=drafts[1].pk, note="already listed")
    with pytest.raises(ReviewError):
        menu_photos.menu_draft_approve(draft_id=drafts[1].pk)  # decided once


@pytest.mark.django_db
def test_a_draft_without_a_format_cannot_be_approved_as_read(world, catalogue):
    sent = MenuPhotoUpload.objects.create(
        city=world.city, venue=world.venue, address_hash="a" * 64, body_fingerprint="1"
    )
    draft = MenuDraft.objects.create(
        upload=sent, venue=world.venue, position=0, text="Heineken 9,90", price_cents=990
    )
    with pytest.raises(ReviewError):
        menu_photos.menu_draft_approve(draft_id=draft.pk)


@pytest.mark.django_db
def test_photos_that_cannot_be_read_fail_the_upload_and_are_deleted(world):
    sent = MenuPhotoUpload.objects.create(
        city=world.city, venue=world.venue, address_hash="a" * 64, body_fingerprint="1"
    )
    MenuPhoto.objects.create(upload=sent, position=0, jpeg=b"\xff\xd8 broken")
    assert menu_photos.menu_photos_read(upload_id=sent.pk) == PhotoState.FAILED
    assert not MenuPhoto.objects.exists()
    assert menu_photos.menu_photos_read(upload_id=sent.pk) is None  # read once


def _upload_of(world, jpeg: bytes, n: int = 1) -> MenuPhotoUpload:
    sent = MenuPhotoUpload.objects.create(
        city=world.city, venue=world.venue, address_hash="a" * 64, body_fingerprint=str(n)
    )
    MenuPhoto.objects.create(upload=sent, position=0, jpeg=jpeg)
    return sent


@pytest.mark.django_db(transaction=True)
def test_a_reading_is_counted_before_the_engine_runs(world, catalogue, monkeypatch):
    """A reader killed while reading (out of memory, say) leaves its count committed."""
    sent = _upload_of(world, menu_jpeg(MENU[1:2]))

    def killed(jpeg):
        raise SystemExit("killed")

    monkeypatch.setattr(ocr, "read_lines", killed)
    with pytest.raises(SystemExit):
        menu_photos.menu_photos_read(upload_id=sent.pk)
    sent.refresh_from_db()
    assert sent.read_attempts == 1 and sent.state == PhotoState.RECEIVED
    assert MenuPhoto.objects.filter(upload=sent).exists()


@pytest.mark.django_db
def test_an_upload_whose_readings_never_finish_is_given_up(world, catalogue):
    last, spent = (_upload_of(world, menu_jpeg(MENU[1:2]), n) for n in (1, 2))
    MenuPhotoUpload.objects.filter(pk=last.pk).update(read_attempts=menu_photos.MAX_READS - 1)
    MenuPhotoUpload.objects.filter(pk=spent.pk).update(read_attempts=menu_photos.MAX_READS)

    assert menu_photos.menu_photos_read(upload_id=last.pk) == PhotoState.DRAFTED
    assert menu_photos.menu_photos_read(upload_id=spent.pk) == PhotoState.FAILED
    last.refresh_from_db(), spent.refresh_from_db()
    assert last.read_attempts == spent.read_attempts == menu_photos.MAX_READS
    assert spent.processed_at and not MenuDraft.objects.filter(upload=spent).exists()
    assert not MenuPhoto.objects.exists()  # photos are not kept, read or not
    assert menu_photos.menu_photos_due() == 0


def menu_in_two_sizes(big: str, small: str) -> bytes:
    """A line in print the engine reads from boxes of 55 pixels, one from boxes of 22."""
    image = Image.new("RGB", (1000, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.text((30, 30), big, fill="black", font=ImageFont.load_default(size=40))
    draw.text((30, 130), small, fill="black", font=ImageFont.load_default(size=12))
    return _jpeg(image)


@pytest.mark.django_db
def test_a_trusted_menus_line_in_small_print_waits_for_a_person(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    jpeg = menu_in_two_sizes(MENU[1], MENU[2])
    assert [line.sure for line in ocr.read_lines(jpeg)] == [True, False]
    body = {
        "city": world.city.slug,
        "venue": world.venue.slug,
        "images": [data_uri(jpeg)],
        "ref": menu_link_ref(world.venue.pk),
        "turnstile": ALWAYS_PASS,
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/menu-photos", body).status_code == 202
    drafts = {d.price_cents: d for d in MenuDraft.objects.all()}
    assert sorted(drafts) == [750, 1490]
    assert drafts[1490].state == ReviewState.APPROVED and not drafts[1490].notes
    small = drafts[750]
    assert small.state == ReviewState.PENDING and small.notes == menu_photos.NOT_SURE
    assert (small.beer, small.format) == (catalogue["beer"], catalogue["lata"])  # as read


@pytest.mark.django_db
def test_uploads_whose_reading_was_lost_are_read_after_the_grace(world, catalogue, settings):
    settings.MENU_PHOTOS_GRACE_SECONDS = 600
    old, new = (
        MenuPhotoUpload.objects.create(
            city=world.city,
            venue=world.venue,
            address_hash="a" * 64,
            body_fingerprint=str(n),
            created_at=timezone.now() - timezone.timedelta(minutes=minutes),
        )
        for n, minutes in ((1, 30), (2, 1))
    )
    for sent in (old, new):
        MenuPhoto.objects.create(upload=sent, position=0, jpeg=menu_jpeg(MENU[1:2]))
    assert menu_photos.menu_photos_due() == 1
    old.refresh_from_db(), new.refresh_from_db()
    assert (old.state, new.state) == (PhotoState.DRAFTED, PhotoState.RECEIVED)
    assert MenuDraft.objects.get().upload == old


@pytest.mark.django_db
def test_without_a_worker_the_upload_is_answered_before_it_is_read(
    api, world, catalogue, writes_open, settings, django_capture_on_commit_callbacks
):
    """`make run`: no task is queued (one would run inside the request, tasks being eager
    there and here); the in-process beat reads the upload."""
    settings.MENU_PHOTOS_IN_PROCESS = True
    settings.MENU_PHOTOS_GRACE_SECONDS = 0
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        sent = upload(api, world, MENU[1:2], ref=menu_link_ref(world.venue.pk))
    assert callbacks == []
    sent.refresh_from_db()
    assert sent.state == PhotoState.RECEIVED
    assert menu_photos.menu_photos_due() == 1
    assert MenuDraft.objects.get().state == ReviewState.APPROVED


@pytest.mark.django_db
def test_a_moderator_decides_the_drafts_left_in_the_admin(world, catalogue):
    from django.test import Client
    from django.urls import reverse

    from submissions.moderators import moderator_create

    moderator = moderator_create(username="ana", email="ana@example.org", password="Cerveja-42!x")
    client = Client()
    client.force_login(moderator)
    sent = MenuPhotoUpload.objects.create(
        city=world.city, venue=world.venue, address_hash="a" * 64, body_fingerprint="1"
    )
    read, unread = (
        MenuDraft.objects.create(
            upload=sent,
            venue=world.venue,
            position=i,
            text=text,
            price_cents=cents,
            beer=catalogue["beer"],
            format=fmt,
        )
        for i, (text, cents, fmt) in enumerate(
            [("Heineken lata 350ml 7,50", 750, catalogue["lata"]), ("Heineken 9,90", 990, None)]
        )
    )
    listing = client.get(reverse("admin:submissions_menudraft_changelist"))
    assert listing.status_code == 200 and b"Heineken lata 350ml 7,50" in listing.content
    response = client.post(
        reverse("admin:submissions_menudraft_changelist"),
        {"action": "approve", "_selected_action": [read.pk, unread.pk]},
    )
    assert response.status_code == 302
    read.refresh_from_db(), unread.refresh_from_db()
    assert read.state == ReviewState.APPROVED and read.deal.price_cents == 750
    assert unread.state == ReviewState.PENDING  # no format: the moderator is told why
    client.post(
        reverse("admin:submissions_menudraft_changelist"),
        {"action": "reject", "_selected_action": [unread.pk]},
    )
    unread.refresh_from_db()
    assert unread.state == ReviewState.REJECTED


@pytest.mark.django_db
def test_the_same_menu_again_is_a_duplicate_while_its_drafts_wait(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """decisions.md: the same body from the same address still waiting for review is a
    `duplicate`, nothing stored twice; read into drafts no one decided yet, it still waits."""
    body = {
        "city": world.city.slug,
        "venue": world.venue.slug,
        "images": [data_uri(menu_jpeg(MENU[1:2]))],
        "turnstile": ALWAYS_PASS,
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/menu-photos", body).json() == {"status": "received"}
    draft = MenuDraft.objects.get()
    assert draft.upload.state == PhotoState.DRAFTED and draft.state == ReviewState.PENDING
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/menu-photos", body).json() == {"status": "duplicate"}
    assert MenuPhotoUpload.objects.count() == 1 and MenuDraft.objects.count() == 1
    menu_photos.menu_draft_reject(draft_id=draft.pk)
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/menu-photos", body).json() == {"status": "received"}
    assert MenuPhotoUpload.objects.count() == 2


@pytest.mark.django_db
def test_a_trusted_menu_waits_when_the_bars_same_price_is_out_of_the_rankings(
    api, world, catalogue, writes_open, celery_eager, django_capture_on_commit_callbacks
):
    """interface.md: 3 open disputes take a price out of the rankings "until checked" by a
    moderator. A menu line of that price created a second one beside it (both listed, the
    disputed amount first, once the disputes were dismissed): it now waits, and a moderator
    is told to decide the disputes first."""
    from submissions.menu_photos import menu_draft_approve
    from submissions.review import ReviewError

    suspended = _bottle_at_the_bar(world, catalogue, status="suspended", open_disputes=3)
    with django_capture_on_commit_callbacks(execute=True):
        upload(api, world, MENU[1:2], ref=menu_link_ref(world.venue.pk))
    draft = MenuDraft.objects.get()
    assert draft.state == ReviewState.PENDING and draft.deal is None
    assert "out of the rankings" in draft.decision_note
    with pytest.raises(ReviewError, match="contestações"):
        menu_draft_approve(draft_id=draft.pk)
    assert list(Deal.objects.filter(venue=world.venue, beer=catalogue["beer"])) == [suspended]


@pytest.mark.django_db
def test_a_menu_of_a_closed_bar_becomes_no_price(world, catalogue):
    """As a submission at a closed bar is refused: the drafts wait, and a moderator is told to
    reopen the bar first (a price was created there, hidden while the bar stayed closed)."""
    from submissions.menu_photos import menu_draft_approve, menu_drafts_auto_review
    from submissions.review import ReviewError

    world.venue.status = "closed"
    world.venue.save(update_fields=["status"])
    prices = list(Deal.objects.filter(venue=world.venue))
    sent = MenuPhotoUpload.objects.create(
        city=world.city, venue=world.venue, address_hash="a" * 64, body_fingerprint="1"
    )
    draft = MenuDraft.objects.create(
        upload=sent,
        venue=world.venue,
        position=0,
        text="Heineken 600ml R$ 14,90",
        price_cents=1490,
        beer=catalogue["beer"],
        format=world.format,
    )
    assert menu_drafts_auto_review(sent, [draft]) == 0
    draft.refresh_from_db()
    assert draft.state == ReviewState.PENDING and draft.decision_note == "the bar is closed"
    with pytest.raises(ReviewError, match="fechado"):
        menu_draft_approve(draft_id=draft.pk)
    assert list(Deal.objects.filter(venue=world.venue)) == prices
