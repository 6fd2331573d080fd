"""Reads of SSH profiles, always scoped to a person.

Everything agent-related is behind the "use agent chats" permission: without
it a person has no profiles at all, not even their own (so a revoked
permission takes effect at once, and their profiles are 404 like anyone's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404

from apps.accounts.permissions import USE_AGENT_CHATS
from apps.agents.models import SSHProfile

if TYPE_CHECKING:
    from apps.accounts.models import User


def may_use_agents(user: User) -> bool:
    # has_perm is False for inactive and anonymous users; superusers pass.
    return user.has_perm(USE_AGENT_CHATS)


def profiles_of(user: User) -> QuerySet[SSHProfile]:
    """The profiles `user` may connect with: their own and those shared with a
    group they are in."""
    if not may_use_agents(user):
        return SSHProfile.objects.none()
    return (
        SSHProfile.objects.filter(Q(owner=user) | Q(shared_groups__in=user.groups.all()))
        .select_related("owner")
        .distinct()
    )


def own_profiles_of(user: User) -> QuerySet[SSHProfile]:
    """The profiles `user` may change (and accept host keys for): their own."""
    if not may_use_agents(user):
        return SSHProfile.objects.none()
    return SSHProfile.objects.filter(owner=user)


def get_profile_for(user: User, pk: int) -> SSHProfile:
    # 404, not 403: someone else's profile does not exist for you.
    return get_object_or_404(profiles_of(user), pk=pk)


def get_own_profile_for(user: User, pk: int) -> SSHProfile:
    return get_object_or_404(own_profiles_of(user), pk=pk)


def profile_named_for(user: User, name: str) -> SSHProfile | None:
    """By name, case-insensitive: their own first, else a shared one, if only
    one shared profile has that name (two owners may both call theirs "server")."""
    profiles = profiles_of(user).filter(name__iexact=name.strip())
    own = profiles.filter(owner=user).first()
    if own is not None:
        return own
    shared = list(profiles[:2])
    return shared[0] if len(shared) == 1 else None
