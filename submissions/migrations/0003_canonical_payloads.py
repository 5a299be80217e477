"""Payloads stored before submissions kept integral numbers as integers ("days": [1.0]) get
them now, so review reads every payload as stored (submissions.services.json_canonical)."""

from django.db import migrations


def _canonical(value):
    # A frozen copy of json_canonical: a migration must not change when the app code does.
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def canonical_payloads(apps, schema_editor):
    PriceSubmission = apps.get_model("submissions", "PriceSubmission")
    for submission in PriceSubmission.objects.only("payload").iterator(chunk_size=1000):
        payload = _canonical(submission.payload)
        if repr(payload) != repr(submission.payload):  # 1.0 == 1, their text differs
            submission.payload = payload
            submission.save(update_fields=["payload"])


class Migration(migrations.Migration):
    dependencies = [("submissions", "0002_moderation")]

    operations = [migrations.RunPython(canonical_payloads, migrations.RunPython.noop)]
