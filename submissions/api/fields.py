"""Strict JSON fields: DRF's fields coerce ("3" -> 3, "true" -> True, 5 -> "5"); these do not.

A value must already have the JSON type the interface names. Messages never echo the value
(it may be an e-mail or a contact).
"""

import base64
import binascii
import datetime as dt
import io
import itertools
import math
import re

from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator, RegexValidator
from drf_spectacular.utils import extend_schema_field
from PIL import Image, UnidentifiedImageError
from rest_framework import serializers
from rest_framework.settings import api_settings
from rfc3986_validator import validate_rfc3986

from beers.api.errors import BodyKey

# Unknown keys named in one answer, the first ones in the body: naming each of 180,000 took
# 2.6 s and an 8 MB answer.
MAX_UNKNOWN_KEYS = 20


# An object with no keys beyond the declared fields (at every level that uses it). A comment,
# not a docstring: drf-spectacular would copy a docstring into every body's description.
class StrictSerializer(serializers.Serializer):
    default_error_messages = {"invalid": "Must be a JSON object."}

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError(
                {api_settings.NON_FIELD_ERRORS_KEY: [self.error_messages["invalid"]]},
                code="invalid",
            )
        errors: dict = {}
        value = None
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            errors = dict(exc.detail)
        unknown = (key for key in data if key not in self.fields)
        for key in itertools.islice(unknown, MAX_UNKNOWN_KEYS):
            errors[BodyKey(key)] = ["Unknown field."]
        self.cross_errors(data, errors)
        if errors:
            raise serializers.ValidationError(errors)
        return value

    def cross_errors(self, data: dict, errors: dict) -> None:
        """Rules between fields; add to ``errors`` (field name -> messages)."""


class StrictCharField(serializers.CharField):
    """A JSON string, taken as written (no trimming); length bounds in code points."""

    default_error_messages = {"invalid": "Must be a string."}

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        # '' is a string like any other unless a minimum length or a pattern excludes it.
        kwargs.setdefault("allow_blank", not kwargs.get("min_length"))
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return data

    def run_validation(self, data=serializers.empty):
        # DRF's CharField answers '' before the validators run, so min_length would never
        # see it; skip that shortcut.
        if isinstance(data, str) and data == "" and not self.allow_blank:
            self.fail("blank")
        return serializers.Field.run_validation(self, data)


class WholeValueRegexValidator(RegexValidator):
    """The pattern matches the whole value, as JSON Schema's `pattern` means: RegexValidator
    searches, and `$` also matches before a final newline ("12:00\n")."""

    def __call__(self, value):
        if not self.regex.fullmatch(str(value)):
            raise ValidationError(self.message, code=self.code, params={"value": value})


class StrictRegexField(StrictCharField):
    """A string matching a pattern (anchored, as in the OpenAPI description)."""

    def __init__(self, regex: str, message: str, **kwargs):
        kwargs.setdefault("allow_blank", False)
        super().__init__(**kwargs)
        self.regex = re.compile(regex)
        # drf-spectacular reads the pattern from the RegexValidator.
        self.validators.append(WholeValueRegexValidator(self.regex, message=message))


# JSON Schema's (ECMAScript's) white space, spelled out so that Python's `re` reads the pattern
# alike (its \s adds \x1c-\x1f and \x85, and lacks U+FEFF).
_WHITE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
VISIBLE_RE = f"^[^\\u0000]*[^\\u0000{_WHITE}][^\\u0000]*$"


class VisibleTextField(StrictRegexField):
    """Text taken as written that holds more than white space: a name, a city, a contact to
    reply to (five spaces pass a length of 5 to 120, yet name nothing and nobody)."""

    def __init__(self, **kwargs):
        super().__init__(VISIBLE_RE, "Must hold more than white space.", **kwargs)


class StrictChoiceField(serializers.ChoiceField):
    default_error_messages = {
        "invalid_choice": "Must be one of the listed values.",
        "invalid": "Must be a string.",
    }

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer (3 or 3.0, as JSON Schema counts them); never "3", 3.5 or true."""

    default_error_messages = {"invalid": "Must be an integer."}

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        if isinstance(data, int):
            return data
        if isinstance(data, float) and math.isfinite(data) and data.is_integer():
            return int(data)
        self.fail("invalid")


class StrictFloatField(serializers.FloatField):
    """A JSON number (never a string or a boolean)."""

    default_error_messages = {"invalid": "Must be a number."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not math.isfinite(data):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "number", "exclusiveMinimum": 0, "maximum": 10000})
class PriceField(StrictFloatField):
    """A price in reais: > 0 and at most 10000."""

    default_error_messages = {
        "too_small": "Must be greater than 0.",
        "too_large": "Must be at most 10000.",
    }

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value <= 0:
            self.fail("too_small")
        if value > 10000:
            self.fail("too_large")
        return value


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "boolean", "enum": [True]})
class TrueField(StrictBooleanField):
    """A boolean that must be true (consent of a bar-owner request)."""

    default_error_messages = {"not_true": "Must be true."}

    def to_internal_value(self, data):
        if super().to_internal_value(data) is not True:
            self.fail("not_true")
        return True


DATE_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


@extend_schema_field({"type": "string", "format": "date"})
class StrictDateField(serializers.Field):
    """A calendar date written YYYY-MM-DD (RFC 3339 full-date)."""

    default_error_messages = {"invalid": "Must be a date written YYYY-MM-DD."}

    def to_internal_value(self, data):
        if not isinstance(data, str) or not DATE_RE.fullmatch(data):
            self.fail("invalid")
        try:
            return dt.date.fromisoformat(data)
        except ValueError:
            self.fail("invalid")

    def to_representation(self, value):
        return value.isoformat()


# The address part after the "@": dot-separated ASCII labels (letters, digits, hyphens), at
# least two, the last not all digits. The e-mail is only ever written to, so it must be an
# address at a domain name on the Internet: no address literals, quoted local parts, bare
# hosts (localhost) or non-ASCII domains (JSON Schema's "email", not "idn-email").
DOMAIN_RE = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$"
)
LOCAL_PART_MAX = 64  # RFC 5321, 4.5.3.1.1


def _mailbox(value: str) -> None:
    local, _, domain = value.rpartition("@")
    if len(local) > LOCAL_PART_MAX or not DOMAIN_RE.fullmatch(domain):
        raise ValidationError("Must be an e-mail address.", code="invalid_email")


class StrictEmailField(StrictCharField):
    default_error_messages = {"invalid_email": "Must be an e-mail address."}

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_blank", False)
        super().__init__(**kwargs)
        self.validators.append(
            EmailValidator(message=self.error_messages["invalid_email"], allowlist=())
        )
        self.validators.append(_mailbox)


@extend_schema_field({"type": "string", "format": "uri", "maxLength": 500})
class StrictUriField(StrictCharField):
    """An absolute URI by RFC 3986's grammar (rfc3986-validator, the checker jsonschema uses
    for "format": "uri"): scheme, authority with a numeric port and well-formed IP literals,
    one fragment."""

    default_error_messages = {"invalid_uri": "Must be an absolute URI."}

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_blank", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        # its pattern ends in `$`, which lets one trailing newline through
        if value.endswith("\n") or not validate_rfc3986(value, rule="URI"):
            self.fail("invalid_uri")
        return value


JPEG_PREFIX = "data:image/jpeg;base64,"
IMAGE_MAX_CHARS = 700_000
IMAGE_MAX_PIXELS = 24_000_000  # and 3 channels' worth of samples (see JpegDataUriField)
# Scans (SOS markers) a JPEG may hold: a progressive photo has about 10; each scan is decoded
# over the full-size coefficients, and 136 KB repeating one scan 1000 times took 16 s.
IMAGE_MAX_SCANS = 50


@extend_schema_field(
    {
        "type": "string",
        "maxLength": IMAGE_MAX_CHARS,
        "pattern": r"^data:image/jpeg;base64,[A-Za-z0-9+/]+={0,2}$",
        "description": "a JPEG as a base64 data URI",
    }
)
class JpegDataUriField(serializers.Field):
    """A JPEG as a ``data:image/jpeg;base64,...`` string of at most 700000 characters.

    Decoded strictly and checked with Pillow (decoded at reduced scale so a huge declared size
    costs little); returns the JPEG bytes. Reduced scale does not spare the full-size
    coefficients of a progressive JPEG, or of a baseline one that sends each channel in a scan
    of its own: 1 KB declaring 13377 × 13377 took 2 s and 1.4 GB to check. So the header is
    read first and a JPEG may hold at most IMAGE_MAX_PIXELS pixels, and as many samples as
    that many colour pixels (18 megapixels in CMYK): about 150 MB to check at worst; and at
    most IMAGE_MAX_SCANS scans, since each scan is decoded over the full-size coefficients.
    """

    default_error_messages = {
        "invalid": "Must be a string.",
        "too_long": f"Must be at most {IMAGE_MAX_CHARS} characters.",
        "not_data_uri": f"Must be a JPEG as a data URI starting with {JPEG_PREFIX!r}.",
        "not_jpeg": "Must be a decodable JPEG image.",
        "too_large": "Must be at most 24 megapixels (18 in CMYK).",
        "too_many_scans": f"Must hold at most {IMAGE_MAX_SCANS} scans.",
    }

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if len(data) > IMAGE_MAX_CHARS:
            self.fail("too_long")
        if not data.startswith(JPEG_PREFIX):
            self.fail("not_data_uri")
        try:
            raw = base64.b64decode(data[len(JPEG_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            self.fail("not_data_uri")
        if not raw:
            self.fail("not_jpeg")
        # 0xFFDA starts a scan; entropy-coded data never holds it (0xFF is stuffed there)
        if raw.count(b"\xff\xda") > IMAGE_MAX_SCANS:
            self.fail("too_many_scans")
        try:
            with Image.open(io.BytesIO(raw)) as img:
                if img.format != "JPEG":
                    self.fail("not_jpeg")
                pixels = img.width * img.height
                if pixels > IMAGE_MAX_PIXELS or pixels * len(img.getbands()) > (
                    IMAGE_MAX_PIXELS * 3
                ):
                    self.fail("too_large")
                img.draft("RGB", (max(1, img.width // 8), max(1, img.height // 8)))
                img.load()
        except serializers.ValidationError:
            raise
        except (
            UnidentifiedImageError,
            OSError,
            ValueError,
            SyntaxError,
            Image.DecompressionBombError,
        ):
            self.fail("not_jpeg")
        return raw

    def to_representation(self, value):
        return JPEG_PREFIX + base64.b64encode(value).decode("ascii")


class CountedListField(serializers.ListField):
    """A list whose length is checked before its items, each of which may cost much to check
    (400,000 images of "x" took 11 s and a 43 MB answer when each item was checked first)."""

    def to_internal_value(self, data):
        if isinstance(data, list):
            if self.max_length is not None and len(data) > self.max_length:
                self.fail("max_length", max_length=self.max_length)
            if self.min_length is not None and len(data) < self.min_length:
                self.fail("min_length", min_length=self.min_length)
        return super().to_internal_value(data)
