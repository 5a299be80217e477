"""Private data at rest: Fernet encryption with rotatable keys, a blind index, a model field.

Keys come from ``settings.FIELD_ENCRYPTION_KEYS`` (Fernet keys; the first encrypts, every one
decrypts, so rotation is: put the new key first, re-save the rows, drop the old key). A value
that no configured key opens raises ``DecryptionError`` (an ``InvalidToken``): ciphertext is
never handed out as if it were the value. Encrypted columns cannot be filtered; look rows up by
their blind index instead.
"""

import base64
import hashlib
import hmac

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models


class DecryptionError(InvalidToken):
    """A stored value could not be opened with any configured key."""


def _dev_key() -> bytes:
    # Development and tests only (no keys configured): one key derived from SECRET_KEY, so a
    # fresh checkout runs without setup. Production refuses to start encrypting without keys.
    derived = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"breja-field-encryption"
    ).derive(settings.SECRET_KEY.encode())
    return base64.urlsafe_b64encode(derived)


def field_keys() -> tuple[bytes, ...]:
    """The configured keys, or the derived development key (DEBUG or development only)."""
    keys = tuple(k.strip().encode() for k in settings.FIELD_ENCRYPTION_KEYS if k.strip())
    if keys:
        return keys
    if settings.DEBUG or settings.ENVIRONMENT == "development":
        return (_dev_key(),)
    raise ImproperlyConfigured("FIELD_ENCRYPTION_KEYS is required outside development")


_fernets: dict[tuple[bytes, ...], MultiFernet] = {}


def _fernet() -> MultiFernet:
    keys = field_keys()
    if keys not in _fernets:
        try:
            _fernets[keys] = MultiFernet([Fernet(k) for k in keys])
        except (ValueError, TypeError) as exc:
            raise ImproperlyConfigured(
                "FIELD_ENCRYPTION_KEYS must hold Fernet keys (32 url-safe base64 bytes)"
            ) from exc
    return _fernets[keys]


def encrypt(text: str) -> str:
    """A Fernet token of the text, made with the first key."""
    return _fernet().encrypt(text.encode()).decode("ascii")


def decrypt(token: str) -> str:
    """The text inside a token; DecryptionError when no configured key opens it."""
    try:
        return _fernet().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, UnicodeError) as exc:
        raise DecryptionError("an encrypted value could not be opened with any key") from exc


def normalise(text: str) -> str:
    """The form a blind index is taken of: no whitespace, case-folded."""
    return "".join(text.split()).casefold()


def blind_index(text: str) -> str:
    """A keyed hash (HMAC-SHA256) of the normalised value, to find rows by e-mail or contact.

    Keyed with ADDRESS_HASH_KEY under its own label, so it survives Fernet key rotation.
    """
    key = b"breja-blind-index:" + settings.ADDRESS_HASH_KEY.encode()
    return hmac.new(key, normalise(text).encode(), hashlib.sha256).hexdigest()


class EncryptedTextField(models.TextField):
    """Text stored as a Fernet token; decrypted on load, never returned as ciphertext."""

    description = "Encrypted text"

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return decrypt(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None:
            return None
        return encrypt(str(value))

    def get_lookup(self, lookup_name):
        # Tokens are randomised: only NULL tests mean anything. Filter on a blind index.
        if lookup_name != "isnull":
            return None
        return super().get_lookup(lookup_name)
