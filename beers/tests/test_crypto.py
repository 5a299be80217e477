"""Encryption at rest: round trip, key rotation, refusal of a wrong or missing key."""

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.core.exceptions import ImproperlyConfigured

from beers import crypto


def test_round_trip_and_ciphertext_hides_the_text():
    token = crypto.encrypt("ana@example.com")
    assert "ana" not in token
    assert token != crypto.encrypt("ana@example.com")  # randomised
    assert crypto.decrypt(token) == "ana@example.com"


def test_rotation_first_key_encrypts_every_key_decrypts(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [old]
    under_old = crypto.encrypt("x@y.z")
    settings.FIELD_ENCRYPTION_KEYS = [new, old]
    under_new = crypto.encrypt("x@y.z")
    assert crypto.decrypt(under_old) == crypto.decrypt(under_new) == "x@y.z"
    settings.FIELD_ENCRYPTION_KEYS = [new]
    assert crypto.decrypt(under_new) == "x@y.z"
    with pytest.raises(InvalidToken):
        crypto.decrypt(under_old)


def test_wrong_key_raises_never_returns_ciphertext(settings):
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    token = crypto.encrypt("secret")
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(crypto.DecryptionError):
        crypto.decrypt(token)


def test_no_keys_outside_development_is_refused(settings):
    settings.FIELD_ENCRYPTION_KEYS = []
    settings.DEBUG = False
    settings.ENVIRONMENT = "production"
    with pytest.raises(ImproperlyConfigured):
        crypto.encrypt("x")


def test_malformed_key_is_refused(settings):
    settings.FIELD_ENCRYPTION_KEYS = ["not-a-fernet-key"]
    with pytest.raises(ImproperlyConfigured):
        crypto.encrypt("x")


def test_blind_index_ignores_case_and_spaces_and_is_keyed(settings):
    assert crypto.blind_index(" Ana@Example.com ") == crypto.blind_index("ana@example.com")
    assert crypto.blind_index("ana@example.com") != crypto.blind_index("bia@example.com")
    before = crypto.blind_index("ana@example.com")
    settings.ADDRESS_HASH_KEY = "another"
    assert crypto.blind_index("ana@example.com") != before
