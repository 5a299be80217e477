"""Serving labels: the human label of a price's serving in both languages."""

import pytest

from beers import labels
from beers.models import Format

TOWER = Format(
    code="torre_3000", type="torre", volume_ml=3000, label_pt="Torre 3 L", label_en="3 L tower"
)
BOTTLE = Format(
    code="garrafa_600",
    type="garrafa",
    volume_ml=600,
    label_pt="Garrafa 600 ml",
    label_en="600 ml bottle",
)


@pytest.mark.parametrize(
    ("fmt", "units", "packaging", "lang", "label"),
    [
        (BOTTLE, 1, "single", "pt-BR", "Garrafa 600 ml"),
        (BOTTLE, 3, "single", "en", "3 × 600 ml bottle"),
        (BOTTLE, 5, "balde", "en", "Bucket of 5 × 600 ml bottle"),
        # the format already says it is a tower: not "Tower of 1 × 3 L tower"
        (TOWER, 1, "torre", "pt-BR", "Torre 3 L"),
        (TOWER, 1, "torre", "en", "3 L tower"),
        (TOWER, 2, "torre", "en", "2 × 3 L tower"),
        (BOTTLE, 4, "torre", "en", "Tower of 4 × 600 ml bottle"),
    ],
)
def test_serving_label(fmt, units, packaging, lang, label):
    assert labels.serving_label(fmt=fmt, units=units, packaging=packaging, lang=lang) == label
