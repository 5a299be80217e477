"""Prices' times in whole seconds, as the datasets write them (Deal.save keeps them so)."""

import datetime as dt

from django.db import migrations, models
from django.db.models.functions import Trunc


def to_whole_seconds(apps, schema_editor):
    Deal = apps.get_model("beers", "Deal")
    second = {"kind": "second", "output_field": models.DateTimeField(), "tzinfo": dt.UTC}
    Deal.objects.update(
        verified_at=Trunc("verified_at", **second), created_at=Trunc("created_at", **second)
    )


class Migration(migrations.Migration):
    dependencies = [("beers", "0009_price_index_closed_through")]

    operations = [migrations.RunPython(to_whole_seconds, migrations.RunPython.noop)]
