"""Shared fixtures: the three personas every view test uses.

- owner: a household member whose content most tests are about;
- member: another household member (sees what the owner shares with the household);
- outsider: an account outside the household (a guest), who must see nothing of
  the owner's unless shared with a group they are in.
"""

from __future__ import annotations

import pytest

PASSWORD = "correct horse battery staple"


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
