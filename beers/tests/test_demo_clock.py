"""The demo data against the clock: loaded at any hour, it looks like a live city's data.
(Its own module: test_demo.py's demo data, loaded once for that module, would be found
already loaded.)"""

import datetime as dt

import pytest

from beers.demo import demo_load
from beers.models import City, Deal


@pytest.mark.django_db
def test_a_load_just_after_local_midnight_still_has_prices_checked_today():
    """Loaded at 00:05 in São Paulo (03:05 UTC), São Paulo still has prices checked that
    local day (they were all "yesterday" before), and no city has a check after the load."""
    now = dt.datetime(2026, 11, 25, 3, 5, tzinfo=dt.UTC)
    demo_load(now=now)
    assert Deal.objects.filter(verified_at__gt=now).count() == 0
    sao_paulo = City.objects.get(slug="sao-paulo")
    checks = Deal.objects.filter(city=sao_paulo).values_list("verified_at", flat=True)
    today = [at for at in checks if at.astimezone(sao_paulo.tz).date() == dt.date(2026, 11, 25)]
    assert len(today) >= 3
