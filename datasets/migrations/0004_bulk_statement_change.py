# A statement that changes more rows than the export patches (datasets.pgcopy.BULK_CHANGES,
# 50,000: a bulk load, an import, a city's prices deleted) notes one 'bulk' change instead of
# one per row: the export then formats every city whole anyway. On 1M inserted prices the
# rows noted one by one took the insert seconds more, and the export 3 s to delete them.

from django.db import migrations

BULK_CHANGES = 50_000

PER_ROW = (
    "CREATE OR REPLACE FUNCTION datasets_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN INSERT INTO datasets_rowchange (kind, row_id) SELECT TG_ARGV[0], id FROM changed; "
    "RETURN NULL; END $$"
)

BULK = (
    "CREATE OR REPLACE FUNCTION datasets_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN "
    f"IF (SELECT count(*) FROM (SELECT 1 FROM changed LIMIT {BULK_CHANGES + 1}) c) "
    f"> {BULK_CHANGES} THEN "
    "INSERT INTO datasets_rowchange (kind, row_id) VALUES ('bulk', 0); "
    "ELSE INSERT INTO datasets_rowchange (kind, row_id) SELECT TG_ARGV[0], id FROM changed; "
    "END IF; RETURN NULL; END $$"
)


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BULK)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PER_ROW)


class Migration(migrations.Migration):
    dependencies = [
        ("datasets", "0003_no_stored_rows"),
    ]

    operations = [migrations.RunPython(install, uninstall)]
