"""The one rule for whether an agent chat may run anything now.

Checked where each thing runs, at the moment it runs, from the database (never
from a user object held since the turn began: Django caches permissions on
the instance): every tool call (apps.agents.tools), the policy's verdict on
each round (policy.py), every approval answered (apps.chats.approvals), every
turn start (apps.chats.services / setup) and, every few seconds, each open
terminal (terminal/registry.py). The chat's owner must still have the "use
agent chats" permission and the chat's profile must still be one they may use
(their own, or one shared with a group they are in).
"""

from __future__ import annotations

from apps.agents.models import AgentSession
from apps.agents.selectors import may_use_agents, profiles_for

NO_PERMISSION = (
    "you no longer have permission to use agent chats "
    "(an admin can give it back: the 'use agent chats' permission)"
)
NO_CHAT = "this agent chat no longer exists"
NO_PROFILE = "this chat's SSH profile was deleted: start a new agent chat"


def refusal_for_chat(chat_id: int) -> str:
    """'' when the chat's owner may run things on its machine now; otherwise
    why not, in words for the person (and the model)."""
    session = (
        AgentSession.objects.select_related("profile", "chat__owner")
        .filter(chat_id=chat_id)
        .first()
    )
    if session is None:
        return NO_CHAT
    return refusal_for_session(session)


def refusal_for_session(session: AgentSession) -> str:
    """As refusal_for_chat, for a session loaded just now (its owner fresh)."""
    owner = session.chat.owner
    if not may_use_agents(user=owner):
        return NO_PERMISSION
    profile = session.profile
    if profile is None:
        return NO_PROFILE
    if not profiles_for(user=owner).filter(pk=profile.pk).exists():
        return f"you no longer have access to the profile '{profile.name}'"
    return ""
