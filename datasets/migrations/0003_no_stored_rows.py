# The export no longer stores every price's formatted rows: it patches the files it kept
# (datasets.patch) and formats only the changed prices' rows (datasets.models).

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("datasets", "0002_dealrowcity_token"),
    ]

    operations = [
        migrations.DeleteModel(name="DealRow"),
    ]
