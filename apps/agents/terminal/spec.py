"""Who may open a chat's terminal, and what it connects to."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.urls import reverse

from apps.agents.models import AgentSession, SSHProfile
from apps.agents.selectors import may_use_agents, profiles_for
from apps.agents.services import profile_target
from apps.agents.terminal.session import TerminalSpec
from apps.chats.models import Chat
from apps.core import crypto

if TYPE_CHECKING:
    from apps.accounts.models import User


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
