"""Fixtures of the outreach tests."""

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def staff(client):
    """A superuser's browser in the admin."""
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return client
