"""Who may open a chat's terminal, what it connects to, and whether an open
one may go on (`ended_because`, asked by the registry's access watch)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.urls import reverse

from apps.agents.access import refusal_for_session
from apps.agents.models import AgentSession, SSHProfile
from apps.agents.selectors import may_use_agents, profiles_for
from apps.agents.services import profile_target
from apps.agents.terminal.session import TerminalSpec
from apps.chats.models import Chat
from apps.core import crypto

if TYPE_CHECKING:
    from apps.accounts.models import User


# Why a terminal ended, as its panel shows it (static/js/terminal.js adds the
# full stop): the same words whichever process ends it, by the signal in the
# process that saved the change (apps.agents.signals) or by the access watch
# in any other (registry.py).
PROFILE_CHANGED = "the SSH profile changed (host, user, key or host key); start a new shell"
PROFILE_DELETED = "the SSH profile was deleted"
CHAT_DELETED = "the chat was deleted"


@dataclass(frozen=True)
class TerminalPlan:
    spec: TerminalSpec | None = None
    error: str = ""  # why it cannot start (shown in the panel)
    fix_url: str = ""  # where the person can fix that


def connection_key(profile: SSHProfile) -> str:
    """Changes whenever anything a connection depends on does."""
    parts = [
        profile.host.lower(),
        str(profile.port),
        profile.username,
        profile.private_key_encrypted,
        profile.password_encrypted,
        profile.host_key,
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def terminal_plan_for(user: User, chat_id: int) -> TerminalPlan | None:
    """None: refuse the socket (no permission, not their agent chat). Otherwise
    what to connect to, or why it cannot be started."""
    if not may_use_agents(user=user):
        return None
    session = (
        AgentSession.objects.select_related("profile")
        .filter(chat_id=chat_id, chat__owner_id=user.pk, chat__kind=Chat.Kind.AGENT)
        .first()
    )
    if session is None:
        return None
    profile = session.profile
    if profile is None or not profiles_for(user=user).filter(pk=profile.pk).exists():
        return TerminalPlan(
            error="This chat's SSH profile was deleted or is no longer shared with you."
        )
    fix_url = reverse("ssh_profiles:detail", args=[profile.pk])
    if not profile.is_pinned:
        return TerminalPlan(
            error=f"The host key of “{profile.name}” is not accepted yet: check the connection "
            "in Settings → SSH profiles and accept it there.",
            fix_url=fix_url,
        )
    try:
        target = profile_target(profile)
    except crypto.SecretUndecryptable:
        return TerminalPlan(
            error=f"The key or password of “{profile.name}” can no longer be decrypted (the "
            "server's encryption key changed): enter it again in Settings → SSH profiles.",
            fix_url=fix_url,
        )
    spec = TerminalSpec(
        chat_id=chat_id,
        profile_id=profile.pk,
        target=target,
        project_dir=session.project_dir,
        connection_key=connection_key(profile),
    )
    return TerminalPlan(spec=spec, fix_url=fix_url)


def ended_because(spec: TerminalSpec) -> str:
    """'' while a terminal started with `spec` may go on; otherwise why it
    ends. Read from the database as saved now, so an edit saved by another
    process (whose signal never reaches this one) is seen too: the chat or
    its profile deleted, the profile changed in anything its connection uses
    (`connection_key`: a rename is not), or the owner's right to use it gone
    (apps.agents.access)."""
    session = (
        AgentSession.objects.select_related("profile", "chat__owner")
        .filter(chat_id=spec.chat_id)
        .first()
    )
    if session is None:
        return CHAT_DELETED
    profile = session.profile
    if profile is None:
        return PROFILE_DELETED
    if profile.pk != spec.profile_id or connection_key(profile) != spec.connection_key:
        return PROFILE_CHANGED
    refusal = refusal_for_session(session)
    if refusal:
        return f"{refusal[0].upper()}{refusal[1:]}: the shell was ended."
    return ""
