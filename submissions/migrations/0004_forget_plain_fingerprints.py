"""Body fingerprints became keyed (HMAC, submissions.services.body_fingerprint). The plain
SHA-256 ones of rows no longer compared (decided writes, closed uploads) are blanked: with the
row's other fields in clear, they let anyone holding the table try names until one matched.
Rows still waiting keep theirs until decided: their bodies cannot be rebuilt to re-key them
(contacts and names were never stored with them), so a repeat of one of those bodies, sent
after this migration, is stored a second time rather than answered `duplicate`."""

from django.db import migrations

QUEUED = ("PriceSubmission", "CityRequest", "BarOwnerMessage", "Report")
PHOTOS_OPEN = ("received", "awaiting_ocr")


def forget(apps, schema_editor):
    for name in QUEUED:
        model = apps.get_model("submissions", name)
        model.objects.exclude(state="pending").update(body_fingerprint="")
    uploads = apps.get_model("submissions", "MenuPhotoUpload")
    uploads.objects.exclude(state__in=PHOTOS_OPEN).update(body_fingerprint="")


class Migration(migrations.Migration):
    dependencies = [("submissions", "0003_canonical_payloads")]

    operations = [migrations.RunPython(forget, migrations.RunPython.noop)]
