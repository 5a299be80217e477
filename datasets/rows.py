"""One row of the database → one item of a JSON file → one row of its CSV twin.

Pure functions, no queries: the export feeds them rows from `.values()`, the tests feed them
items read back from the files.

Choices the format leaves open (written down in datasets/README.md):
- JSON: empty text (`conditions`, `address`, `instagram`, `opening_hours`) is `null`.
- CSV: `null` is an empty cell; booleans are `true` / `false`; bars, bairros, beers and brands
  are named by their slugs, as in the JSON (datasets use slugs; the live answers carry display
  names).
"""

import datetime as dt
from decimal import Decimal

from beers.labels import price_per_litre_cents

DEAL_KEYS = (
    "id",
    "venue_id",
    "beer",
    "brand",
    "format_code",
    "units",
    "packaging",
    "kind",
    "price_cents",
    "price_per_litre_cents",
    "open_bar_minutes",
    "service_charge_pct",
    "couvert_cents",
    "conditions",
    "valid_from",
    "valid_until",
    "schedules",
    "verified_at",
    "created_at",
    "confirmations",
    "open_disputes",
    "status",
)
VENUE_KEYS = (
    "id",
    "slug",
    "name",
    "kind",
    "on_site",
    "neighbourhood",
    "address",
    "lat",
    "lng",
    "instagram",
    "opening_hours",
    "attributes",
    "status",
    "created_at",
)
DEALS_CSV_COLUMNS = (
    "id",
    "venue_id",
    "venue",
    "neighbourhood",
    "beer",
    "brand",
    "format_code",
    "serving",
    "units",
    "litres",
    "packaging",
    "kind",
    "price_brl",
    "price_per_litre_brl",
    "when",
    "valid_from",
    "valid_until",
    "service_charge_pct",
    "couvert_brl",
    "conditions",
    "verified_on",
    "confirmations",
    "status",
)
VENUES_CSV_COLUMNS = (
    "id",
    "slug",
    "name",
    "kind",
    "on_site",
    "neighbourhood",
    "address",
    "lat",
    "lng",
    "instagram",
    "opening_hours",
    "attributes",
    "url",
)
PRICE_INDEX_KEYS = (
    "month",
    "final",
    "scope",
    "key",
    "n",
    "min_cents",
    "p25_cents",
    "median_cents",
    "p75_cents",
)
PRICE_INDEX_CSV_COLUMNS = (
    "month",
    "final",
    "scope",
    "key",
    "n",
    "min_brl",
    "p25_brl",
    "median_brl",
    "p75_brl",
)


def from_unix(seconds: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)


def local_date(seconds: int, tz) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=tz).date().isoformat()


def brl(cents: int | None) -> str:
    """Integer cents as reais with a dot and two decimals (`1290` → `12.90`)."""
    if cents is None:
        return ""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def litres(units: int, volume_ml: int) -> str:
    """`units × volume_ml / 1000` in plain decimal notation (`0.6`, `2.5`, `1`)."""
    return format((Decimal(units * volume_ml) / 1000).normalize(), "f")


def cell(value) -> str | int | float:
    """A JSON value as a CSV cell."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return value


def none_if_empty(text: str | None) -> str | None:
    return text if text else None


def schedules_item(schedules) -> list[dict]:
    return [
        {"days": list(s["days"]), "start": s["start"], "end": s["end"]} for s in (schedules or [])
    ]


def deal_item(row: dict) -> dict:
    """A `deals.json` item from a row of DEAL_FIELDS (see datasets.services)."""
    return {
        "id": row["id"],
        "venue_id": row["venue_id"],
        "beer": row["beer__slug"],
        "brand": row["beer__brand__slug"] or row["brand__slug"],
        "format_code": row["format__code"],
        "units": row["units"],
        "packaging": row["packaging"],
        "kind": row["kind"],
        "price_cents": row["price_cents"],
        "price_per_litre_cents": price_per_litre_cents(
            row["price_cents"], row["units"], row["volume_ml"], row["kind"]
        ),
        "open_bar_minutes": row["open_bar_minutes"],
        "service_charge_pct": row["service_charge_pct"],
        "couvert_cents": row["couvert_cents"],
        "conditions": none_if_empty(row["conditions"]),
        "valid_from": row["valid_from"].isoformat() if row["valid_from"] else None,
        "valid_until": row["valid_until"].isoformat() if row["valid_until"] else None,
        "schedules": schedules_item(row["schedules"]),
        "verified_at": row["verified_unix"],
        "created_at": row["created_unix"],
        "confirmations": row["confirmations"],
        "open_disputes": row["open_disputes"],
        "status": row["status"],
    }


def deal_csv_row(
    item: dict,
    *,
    venue: str,
    neighbourhood: str | None,
    volume_ml: int,
    serving: str,
    when: str | None,
    tz,
) -> list:
    """The `deals.csv` row of a `deals.json` item, with what it lacks: its bar's slug and its
    bar's bairro's slug, the serving's and the schedule's texts."""
    return [
        item["id"],
        item["venue_id"],
        venue,
        cell(neighbourhood),
        cell(item["beer"]),
        cell(item["brand"]),
        item["format_code"],
        serving,
        item["units"],
        litres(item["units"], volume_ml),
        item["packaging"],
        item["kind"],
        brl(item["price_cents"]),
        brl(item["price_per_litre_cents"]),
        cell(when),
        cell(item["valid_from"]),
        cell(item["valid_until"]),
        cell(item["service_charge_pct"]),
        brl(item["couvert_cents"]),
        cell(item["conditions"]),
        local_date(item["verified_at"], tz),
        item["confirmations"],
        item["status"],
    ]


def venue_item(row: dict) -> dict:
    """A `venues.json` / `venues-all.json` item from a row of VENUE_FIELDS."""
    return {
        "id": row["id"],
        "slug": row["slug"],
        "name": row["name"],
        "kind": row["kind"],
        "on_site": row["on_site"],
        "neighbourhood": row["neighbourhood__slug"],
        "address": none_if_empty(row["address"]),
        "lat": row["lat"],
        "lng": row["lng"],
        "instagram": none_if_empty(row["instagram"]),
        "opening_hours": none_if_empty(row["opening_hours"]),
        "attributes": list(row["attributes"] or []),
        "status": row["status"],
        "created_at": row["created_unix"],
    }


def venue_csv_row(item: dict, *, url: str) -> list:
    return [
        item["id"],
        item["slug"],
        item["name"],
        item["kind"],
        cell(item["on_site"]),
        cell(item["neighbourhood"]),
        cell(item["address"]),
        item["lat"],
        item["lng"],
        cell(item["instagram"]),
        cell(item["opening_hours"]),
        "|".join(item["attributes"]),
        url,
    ]


def price_index_csv_row(item: dict) -> list:
    return [
        item["month"],
        cell(item["final"]),
        item["scope"],
        cell(item["key"]),
        item["n"],
        brl(item["min_cents"]),
        brl(item["p25_cents"]),
        brl(item["median_cents"]),
        brl(item["p75_cents"]),
    ]
