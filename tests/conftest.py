"""Shared fixtures: the three personas every view test uses.

- owner: a household member whose content most tests are about;
- member: another household member (sees what the owner shares with the household);
- outsider: an account outside the household (a guest), who must see nothing of
  the owner's unless shared with a group they are in.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# Property tests run on loaded 2-core machines (CI, a busy laptop): how long
# an example takes says nothing about whether it passes, so there is no
# deadline and no "too slow" health check, for every test that does not say otherwise.
settings.register_profile("jarvis", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("jarvis")

PASSWORD = "correct horse battery staple"

# The fixtures and helpers more than one folder uses (signed_in, the library's
# vaults and embedder, the fake model, run_turn, the MCP household).
pytest_plugins = ["tests.support.fixtures", "tests.support.redis_server"]


@pytest.fixture
def make_user(db):
    from apps.accounts.services import user_create

    def make(username: str, *, household: bool = True, admin: bool = False, **kwargs):
        return user_create(
            username=username,
            password=PASSWORD,
            household=household,
            is_admin=admin,
            validate=False,
            **kwargs,
        )

    return make


@pytest.fixture
def owner(make_user):
    return make_user("olivia", display_name="Olivia")


@pytest.fixture
def member(make_user):
    return make_user("max", display_name="Max")


@pytest.fixture
def outsider(make_user):
    return make_user("oscar", household=False, display_name="Oscar")


@pytest.fixture
def admin(make_user):
    return make_user("root", admin=True, display_name="Admin")


@pytest.fixture(autouse=True)
def _empty_search_index(request):
    """Transactional tests end with a flush that empties model tables but not
    the FTS and vector tables; clear those too so no test sees another's rows.
    (Other tests roll back, which covers virtual tables as well.)"""
    marker = request.node.get_closest_marker("django_db")
    transactional = "transactional_db" in request.fixturenames or (
        marker is not None and marker.kwargs.get("transaction")
    )
    yield
    if transactional:
        from apps.library.index import tables

        with request.getfixturevalue("django_db_blocker").unblock():
            tables.clear_all()
