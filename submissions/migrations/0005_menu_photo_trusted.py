"""Menu-photo uploads keep whether their `ref` was the bar's menu link, not the token itself."""

from django.db import migrations, models


def trust_from_ref(apps, schema_editor):
    from outreach.links import menu_link_trusts

    MenuPhotoUpload = apps.get_model("submissions", "MenuPhotoUpload")
    for upload in MenuPhotoUpload.objects.exclude(ref="").only("pk", "venue_id", "ref"):
        if menu_link_trusts(upload.ref, upload.venue_id):
            MenuPhotoUpload.objects.filter(pk=upload.pk).update(trusted=True)


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0004_forget_plain_fingerprints"),
    ]

    operations = [
        migrations.AddField(
            model_name="menuphotoupload",
            name="trusted",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "Enviadas com o link do próprio bar (ref válido): preços dentro dos limites "
                    "são aprovados na leitura."
                ),
            ),
        ),
        migrations.RunPython(trust_from_ref, migrations.RunPython.noop),
        migrations.RemoveField(model_name="menuphotoupload", name="ref"),
    ]
