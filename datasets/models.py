"""The export's row cache (PostgreSQL): each price's line of deals.csv and item of deals.json.

A price's texts change rarely while the files are rewritten every few minutes, and formatting
them was most of an export's work (on 1M prices, 2 cores: 8.5 s of the export's 13 s). So the
export keeps each published price's formatted texts (DealRow) and formats again only what
changed:
- Triggers (migration 0001, PostgreSQL) write to RowChange, in the writer's own transaction,
  each price inserted, updated or deleted and each bar, bairro, beer or brand updated. They
  see every write, the ORM's bulk updates and raw SQL included; a TRUNCATE of any of those
  tables drops every city's recipe instead.
- What the database cannot see is in a city's recipe (DealRowCity): a digest of the
  formatting SQL, the city's time zone, the formats and the Python code and catalogues that
  label servings and schedules. A city whose recipe differs is formatted whole.
- The export's snapshot finds the prices those changes concern (a changed bar's prices as
  they are in that snapshot), drops their rows, formats those still published, and forgets
  the changes it saw (`datasets.pgcopy.refresh_rows`); the files then come from DealRow
  alone: the last export's files patched with the changed prices' rows (datasets.patch), or
  every row read.
The cache tables are UNLOGGED: a crash empties both, and the next export formats every row.
"""

from django.db import models


class DealRow(models.Model):
    # No foreign keys: changed prices' rows are dropped by the refresh, and checking a key on
    # each of 1M inserted rows would cost seconds.
    deal_id = models.BigIntegerField(primary_key=True)
    city_id = models.BigIntegerField()
    venue_id = models.BigIntegerField()
    line = models.TextField()
    item = models.TextField()

    class Meta:
        verbose_name = "export row"
        indexes = [models.Index(fields=["city_id", "deal_id"], name="dealrow_city")]

    def __str__(self) -> str:
        return f"export row of price {self.deal_id}"


class DealRowCity(models.Model):
    """A city whose published prices all have their DealRow, made by `recipe`."""

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

    kind = models.CharField(max_length=16)  # deal, venue, neighbourhood, beer, brand
    row_id = models.BigIntegerField()

    def __str__(self) -> str:
        return f"changed {self.kind} {self.row_id}"
