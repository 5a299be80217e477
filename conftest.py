"""Project-wide test fixtures."""

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _clean_cache():
    """Each test starts with an empty cache (answers, counters), known to answer."""
    from beers import data_version, outage

    outage.STORE.back()
    outage.DATABASE.back()
    cache.clear()
    data_version.store().clear()
    yield
    cache.clear()
    data_version.store().clear()


@pytest.fixture(autouse=True)
def _fresh_names():
    """Rolled-back tests reuse ids: never carry the catalogue or city snapshot from one to the
    next."""
    from beers.selectors import cities, names

    names.forget()
    cities.forget()
    yield
    names.forget()
    cities.forget()


@pytest.fixture(autouse=True)
def _no_degraded(settings, tmp_path):
    settings.DEGRADED_FLAG_PATH = tmp_path / "degraded.json"
    settings.DATASETS_ROOT = tmp_path / "datasets"
    settings.DATASETS_WORK_DIR = tmp_path / "datasets-work"
