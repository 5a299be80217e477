"""Fixtures shared by the beers tests."""

import pytest
from django.db import transaction

from beers.demo import demo_load


@pytest.fixture(scope="module")
def demo_data(django_db_setup, django_db_blocker):
    """The demo data set, loaded once per test module inside a transaction rolled back after it.

    Tests that use it need the django_db mark (pytest-django creates the test database only for
    marked tests); each runs in a savepoint inside this transaction, so what a test writes is
    undone before the next one. Not for `transaction=True` tests.
    """
    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        created = demo_load()
    try:
        yield created
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
