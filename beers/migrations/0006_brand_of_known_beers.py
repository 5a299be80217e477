"""A price with a known beer has that beer's brand, none for a beer without one (datasets.md:
"the beer's brand, or the brand alone when the beer is unknown"). Prices of unbranded beers
that kept a brand of their own lose it."""

from django.db import migrations
from django.db.models import OuterRef, Subquery


def follow_the_beer(apps, schema_editor):
    Beer = apps.get_model("beers", "Beer")
    Deal = apps.get_model("beers", "Deal")
    Deal.objects.filter(beer__isnull=False).update(
        brand_id=Subquery(Beer.objects.filter(pk=OuterRef("beer_id")).values("brand_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [("beers", "0005_price_index_history")]

    operations = [migrations.RunPython(follow_the_beer, migrations.RunPython.noop)]
