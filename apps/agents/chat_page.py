"""What agents adds to the chat page (apps/chats/page_hooks.py): the "New agent
chat" link, the approval mode in an agent chat's header, and its terminal panel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.urls import reverse

from apps.agents.forms import ModeForm
from apps.agents.models import AgentSession
from apps.agents.selectors import agent_session_for, may_use_agents, profiles_for
from apps.chats.models import Chat
from apps.chats.page_hooks import ChatPageHook

if TYPE_CHECKING:
    from apps.accounts.models import User

MODE_HELP = {
    AgentSession.Mode.PLAN: "Plan: the agent may only read files and list folders.",
    AgentSession.Mode.ASK: "Ask: reading runs; commands and file writes wait for your approval.",
    AgentSession.Mode.MANUAL: "Manual: every tool call waits for your approval.",
    AgentSession.Mode.AUTO: "Auto: everything runs without asking.",
}
# What the badge says: what the loop enforces, in a few words.
MODE_WORDS = {
    AgentSession.Mode.PLAN: "Plan · only reading",
    AgentSession.Mode.ASK: "Ask · commands wait for you",
    AgentSession.Mode.MANUAL: "Manual · every call waits for you",
    AgentSession.Mode.AUTO: "Auto · approving everything",
}


def new_chat_context(user: User, chat: Chat | None) -> dict | None:
    if not may_use_agents(user=user):
        return None
    return {"url": reverse("agents:new")}


def agent_chat_context(user: User, chat: Chat | None) -> dict | None:
    if chat is None or not chat.is_agent:
        return None
    session = agent_session_for(user=user, chat=chat)
    if session is None:
        return None
    allowed = may_use_agents(user=user)
    profile = session.profile
    usable = (
        allowed and profile is not None and profiles_for(user=user).filter(pk=profile.pk).exists()
    )
    return {
        "session": session,
        "profile": profile,
        "allowed": allowed,
        "terminal": usable,
        "mode_form": ModeForm(initial={"mode": session.mode}),
        "mode_help": MODE_HELP[session.mode],
        "mode_words": MODE_WORDS[session.mode],
        "empty_state": {
            "title": "Tell the agent what to do",
            "text": f"It works on {profile.host if profile else 'its machine'} in "
            f"{session.project_dir}: it reads files and runs commands there, in the mode shown "
            "above. The terminal beside this chat is a shell in the same directory.",
        },
        "composer_placeholder": (
            f"Tell the agent what to do on {profile.host if profile else 'its machine'} "
            f"in {session.project_dir}…"
        ),
        "modes": [(mode, MODE_WORDS[mode], MODE_HELP[mode]) for mode in AgentSession.Mode.values],
        "socket": f"/ws/terminal/{chat.pk}/",
    }


HOOKS = [
    ChatPageHook(
        name="agents-new",
        context=new_chat_context,
        templates={"sidebar": "agents/chat/_new_link.html"},
    ),
    ChatPageHook(
        name="agents-chat",
        context=agent_chat_context,
        templates={
            "head": "agents/chat/_head.html",
            "tools": "agents/chat/_mode.html",
            "panel": "agents/chat/_terminal.html",
        },
        # xterm.js writes its theme and cell sizes as inline styles.
        inline_styles=True,
    ),
]
