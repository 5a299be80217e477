"""E-mails and contacts: encrypted at rest, never in clear in the database, logs or answers."""

import logging

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from beers import crypto
from submissions.models import BarOwnerMessage, CityRequest, MenuPhotoUpload, PriceSubmission

from .conftest import jpeg_data_uri

EMAIL = "maria.segredo@example.com"
PHONE = "+55 11 91234-5678"
NAME = "Maria Segredo"


def raw_rows(table: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table}")  # noqa: S608 - fixed table names
        return repr(cursor.fetchall())


@pytest.mark.django_db
def test_private_data_is_never_in_clear_in_the_database_or_the_logs(
    api, world, writes_open, caplog
):
    caplog.set_level(logging.DEBUG)
    sent = [
        (
            "/api/v1/submissions",
            {
                "city": "sao-paulo",
                "venue": {"id": world.venue.pk},
                "beer": None,
                "format_code": "garrafa_600",
                "price": 9,
                "email": EMAIL,
                "consent": True,
                "turnstile": "t",
            },
        ),
        (
            "/api/v1/city-requests",
            {"city": "Campinas", "email": EMAIL, "consent": True, "turnstile": "t"},
        ),
        (
            "/api/v1/bar-owners",
            {
                "city": "sao-paulo",
                "bar": "Bar",
                "topic": "other",
                "name": NAME,
                "contact": PHONE,
                "consent": True,
                "turnstile": "t",
            },
        ),
        (
            "/api/v1/menu-photos",
            {
                "city": "sao-paulo",
                "venue": "bar-do-ze",
                "images": [jpeg_data_uri()],
                "contact": EMAIL,
                "consent": True,
                "turnstile": "t",
            },
        ),
    ]
    for path, body in sent:
        assert api.post(path, body).status_code == 202
    # Invalid bodies and failures must not echo or log them either.
    bad = api.post("/api/v1/submissions", {**sent[0][1], "email": "maria.segredo@", "x": 1})
    assert "maria.segredo" not in bad.content.decode()
    no_consent = api.post("/api/v1/bar-owners", {**sent[2][1], "consent": False})
    assert PHONE not in no_consent.content.decode()
    writes_open.TURNSTILE_SECRET_KEY = "2x0000000000000000000000000000000AA"
    assert PHONE not in api.post("/api/v1/bar-owners", sent[2][1]).content.decode()

    for model in (PriceSubmission, CityRequest, BarOwnerMessage, MenuPhotoUpload):
        dump = raw_rows(model._meta.db_table)
        for secret in (EMAIL, PHONE, NAME, "segredo", "91234"):
            assert secret not in dump, (model, secret)
    assert "gAAAAA" in raw_rows(PriceSubmission._meta.db_table)  # a Fernet token is there
    log_text = caplog.text + " ".join(str(r.args) for r in caplog.records)
    for secret in (EMAIL, PHONE, NAME, "segredo"):
        assert secret not in log_text

    # The application reads them back; the blind index finds them.
    assert PriceSubmission.objects.get().email == EMAIL
    assert BarOwnerMessage.objects.get().contact == PHONE
    assert BarOwnerMessage.objects.get().name == NAME
    assert (
        CityRequest.objects.filter(
            email_index=crypto.blind_index(" Maria.Segredo@example.com")
        ).count()
        == 1
    )


@pytest.mark.django_db
def test_wrong_key_raises_instead_of_returning_ciphertext(world, settings):
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    CityRequest.objects.create(address_hash="a", body_fingerprint="f", city="X", email=EMAIL)
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(crypto.DecryptionError):
        CityRequest.objects.get()


@pytest.mark.django_db
def test_keys_rotate_old_key_still_decrypts(world, settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [old]
    CityRequest.objects.create(address_hash="a", body_fingerprint="f", city="X", email=EMAIL)
    settings.FIELD_ENCRYPTION_KEYS = [new, old]
    row = CityRequest.objects.get()
    assert row.email == EMAIL
    row.save()  # re-encrypted with the new key
    settings.FIELD_ENCRYPTION_KEYS = [new]
    assert CityRequest.objects.get().email == EMAIL


def test_production_requires_keys(settings):
    settings.FIELD_ENCRYPTION_KEYS = []
    settings.DEBUG = False
    settings.ENVIRONMENT = "production"
    with pytest.raises(ImproperlyConfigured):
        crypto.encrypt("x")
    settings.ENVIRONMENT = "development"
    assert crypto.decrypt(crypto.encrypt("x")) == "x"


def test_bad_key_is_a_configuration_error(settings):
    settings.FIELD_ENCRYPTION_KEYS = ["not-a-fernet-key"]
    with pytest.raises(ImproperlyConfigured):
        crypto.encrypt("x")


@pytest.mark.django_db
def test_encrypted_columns_cannot_be_filtered_by_value(world):
    from django.core.exceptions import FieldError

    with pytest.raises(FieldError):
        list(CityRequest.objects.filter(email=EMAIL))


@pytest.mark.django_db
def test_only_a_keyed_hash_of_the_address_is_stored(api, world, writes_open):
    api.post("/api/v1/city-requests", {"city": "Campinas", "turnstile": "t"})
    assert "203.0.113.7" not in raw_rows(CityRequest._meta.db_table)


def test_production_warns_of_a_test_turnstile_secret(settings):
    from submissions.checks import writes_secrets

    settings.DEBUG = False
    settings.ENVIRONMENT = "production"
    assert writes_secrets() == []
    settings.TURNSTILE_SECRET_KEY = "1x0000000000000000000000000000000AA"
    assert [p.id for p in writes_secrets()] == ["submissions.W001"]
