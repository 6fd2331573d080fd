"""Reads of SSH profiles and agent chats, always scoped to a person.

Everything agent-related is behind the "use agent chats" permission: without
it a person has no profiles at all, not even their own (so a revoked
permission takes effect at once, and their profiles are 404 like anyone's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404

from apps.accounts.permissions import USE_AGENT_CHATS
from apps.agents.models import AgentSession, SSHProfile
from apps.chats.models import Chat

if TYPE_CHECKING:
    from apps.accounts.models import User


def may_use_agents(*, user: User) -> bool:
    # has_perm is False for inactive and anonymous users; superusers pass.
    return user.has_perm(USE_AGENT_CHATS)


def profiles_for(*, user: User) -> QuerySet[SSHProfile]:
    """The profiles `user` may connect with: their own and those shared with a
    group they are in."""
    if not may_use_agents(user=user):
        return SSHProfile.objects.none()
    return (
        SSHProfile.objects.filter(Q(owner=user) | Q(shared_groups__in=user.groups.all()))
        .select_related("owner")
        .distinct()
    )


def own_profiles_for(*, user: User) -> QuerySet[SSHProfile]:
    """The profiles `user` may change (and accept host keys for): their own."""
    if not may_use_agents(user=user):
        return SSHProfile.objects.none()
    return SSHProfile.objects.filter(owner=user)


def profile_for(*, user: User, pk: int) -> SSHProfile:
    # 404, not 403: someone else's profile does not exist for you.
    return get_object_or_404(profiles_for(user=user), pk=pk)


def own_profile_for(*, user: User, pk: int) -> SSHProfile:
    return get_object_or_404(own_profiles_for(user=user), pk=pk)


def profile_named_for(*, user: User, name: str) -> SSHProfile | None:
    """By name, case-insensitive: their own first, else a shared one, if only
    one shared profile has that name (two owners may both call theirs "server")."""
    profiles = profiles_for(user=user).filter(name__iexact=name.strip())
    own = profiles.filter(owner=user).first()
    if own is not None:
        return own
    shared = list(profiles[:2])
    return shared[0] if len(shared) == 1 else None


def agent_session_for(*, user: User, chat: Chat) -> AgentSession | None:
    """The agent side of a chat the caller already holds through a scoped
    selector (chats.selectors.chat_for); None for a normal chat."""
    if chat.owner_id != user.pk or chat.kind != Chat.Kind.AGENT:
        return None
    return AgentSession.objects.select_related("profile", "chat").filter(chat_id=chat.pk).first()


def get_agent_session_for(*, user: User, chat_id: int) -> AgentSession:
    """An agent chat of `user`'s; 404 for anyone else's and for a normal chat.
    The permission is the caller's to check (403, not 404)."""
    return get_object_or_404(
        AgentSession.objects.select_related("profile", "chat"),
        chat_id=chat_id,
        chat__owner_id=user.pk,
        chat__kind=Chat.Kind.AGENT,
    )
