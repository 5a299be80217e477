"""Migration 0003 remembers the addresses that opted out before it (OptedOutAddress)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from beers.crypto import blind_index


@pytest.mark.django_db(transaction=True)
def test_addresses_that_opted_out_before_are_remembered():
    before, after = (
        [("outreach", "0002_optout_confirmation_due")],
        [("outreach", "0003_opted_out_addresses")],
    )
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    Lead = old.get_model("outreach", "Lead")
    common = {"status": "do_not_contact", "by_email": False, "opted_out_at": timezone.now()}
    Lead.objects.create(
        name="A", email="a@example.com", email_index=blind_index("a@example.com"),
        confirmation_sent_at=timezone.now(), **common,
    )  # fmt: skip
    Lead.objects.create(  # owed its confirmation still
        name="B", email="b@example.com", email_index=blind_index("b@example.com"),
        confirmation_due=True, **common,
    )  # fmt: skip
    Lead.objects.create(  # moved in the admin: the moderators' to undo
        name="C", email="c@example.com", email_index=blind_index("c@example.com"), **common
    )
    Lead.objects.create(name="D", email="d@example.com", email_index=blind_index("d@example.com"))
    try:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
        new = executor.loader.project_state(after).apps
        remembered = set(
            new.get_model("outreach", "OptedOutAddress").objects.values_list(
                "email_index", flat=True
            )
        )
        assert remembered == {blind_index("a@example.com"), blind_index("b@example.com")}
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
