"""The demo household `make run` creates: one admin and two members."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.accounts.models import User
from apps.accounts.services import user_create

DEMO_PEOPLE = (
    # username, display name, admin
    ("admin", "Household admin", True),
    ("alice", "Alice", False),
    ("bob", "Bob", False),
)
# Members get the everyday features; cloud models stay an explicit admin grant.
DEMO_GROUP = "adults"
DEMO_GROUP_FLAGS = (permissions.USE_AGENT_CHATS, permissions.RUN_PAPER_DIGEST)


@dataclass
class Created:
    username: str
    password: str
    admin: bool


def demo_group() -> Group:
    group, _ = Group.objects.get_or_create(name=DEMO_GROUP)
    codenames = [permissions.codename(flag) for flag in DEMO_GROUP_FLAGS]
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="accounts", codename__in=codenames)
    )
    return group


def seed_demo_household() -> list[Created]:
    """Create the demo people that do not exist yet; return who was created
    with their one-time passwords (existing people are left alone)."""
    created = []
    group = demo_group()
    for username, display_name, admin in DEMO_PEOPLE:
        if User.objects.filter(username__iexact=username).exists():
            continue
        password = secrets.token_urlsafe(9)
        user = user_create(
            username=username,
            password=password,
            display_name=display_name,
            is_admin=admin,
            validate=False,
        )
        if not admin:
            user.groups.add(group)
        created.append(Created(username=username, password=password, admin=admin))
    return created
