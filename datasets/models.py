"""What the export needs to patch its last files (PostgreSQL) rather than format every row.

A price's texts change rarely while the files are rewritten every few minutes, and formatting
every row is most of an export's work. So each export keeps its deals files (datasets.patch)
and the next one formats again only the rows of what changed:
- Triggers (migration 0001, PostgreSQL) write to RowChange, in the writer's own transaction,
  each price inserted, updated or deleted and each bar, bairro, beer or brand updated. They
  see every write, the ORM's bulk updates and raw SQL included; a TRUNCATE of any of those
  tables drops every city's recipe instead.
- What the database cannot see is in a city's recipe (DealRowCity): a digest of the
  formatting SQL, the city's time zone, the formats and the Python code and catalogues that
  label servings and schedules. A city whose recipe differs is formatted whole.
- The export's snapshot finds the prices those changes concern (a changed bar's prices as
  they are in that snapshot) and forgets the changes it saw
  (`datasets.pgcopy.refresh_rows`); the last export's files are then patched with those
  prices' rows, formatted afresh, or a city's rows are all formatted.
The table of cities is UNLOGGED: a crash empties it, and the next export formats every row.
(Until migration 0003 every row was also stored formatted, in DealRow: writing 1M of them
took longer than formatting and writing the files, and the kept files hold the same bytes.)
"""

from django.db import models


class DealRowCity(models.Model):
    """A city whose last files were made by `recipe` and kept under `token`."""

    city_id = models.BigIntegerField(primary_key=True)
    recipe = models.CharField(max_length=64)
    # Changes whenever the city's rows may have: names the export's kept copy of its files
    # (datasets.patch).
    token = models.CharField(max_length=32, default="")

    def __str__(self) -> str:
        return f"export rows of city {self.city_id}"


class RowChange(models.Model):
    """A row whose change may change prices' texts: a price, or a bar, bairro, beer or brand
    (whose prices the export finds in its own snapshot, so a price that points at it later,
    in a transaction that commits first, is found too). Written by the triggers; one row per
    changed row, no key: a writer never waits on the export."""

    # deal, venue, neighbourhood, beer, brand; or bulk (row_id 0): a statement of more rows
    # than the export patches (migration 0004)
    kind = models.CharField(max_length=16)
    row_id = models.BigIntegerField()

    def __str__(self) -> str:
        return f"changed {self.kind} {self.row_id}"
