"""The export's row cache (PostgreSQL): each price's line of deals.csv and item of deals.json.

A price's texts change rarely while the files are rewritten every few minutes, and formatting
them was most of an export's work (on 1M prices, 2 cores: 8.5 s of the export's 13 s). So the
export keeps each published price's formatted texts (DealRow) and formats again only what
changed:
- Triggers (migration 0001, PostgreSQL) write the id of every price whose texts may have
  changed to DirtyDeal, in the writer's own transaction: a price inserted, updated or
  deleted, and the prices of an updated bar, bairro, beer or brand. They see every write,
  the ORM's bulk updates and raw SQL included.
- What the database cannot see is in a city's recipe (DealRowCity): a digest of the
  formatting SQL, the city's time zone, the formats and the Python code and catalogues that
  label servings and schedules. A city whose recipe differs is formatted whole.
- The export's snapshot drops the rows of the changed prices, formats those still published,
  and forgets the changes it saw (`datasets.pgcopy.refresh_rows`); the files are then read
  from DealRow alone.
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

    def __str__(self) -> str:
        return f"export rows of city {self.city_id}"


class DirtyDeal(models.Model):
    """A price whose texts may have changed since the export rows were made (written by the
    triggers; one row per change, no key on the price: a writer never waits on the export)."""

    deal_id = models.BigIntegerField()

    def __str__(self) -> str:
        return f"changed price {self.deal_id}"
