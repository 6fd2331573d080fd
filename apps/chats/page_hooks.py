"""What apps above chats add to the chat page.

Chats sits below agents (and anything else that builds on a chat), so it
cannot import them; they register a hook from their `registrations` module instead
(agents: the "New agent chat" link, the approval-mode badge and switch, the
terminal panel). A hook names a template per slot of the page and a context
function; the page includes the slot's templates of every hook whose context
function returns a dict (None: the hook shows nothing on this page). Inside a
slot template, `hook` is that dict, beside the page's own context.

A hook's context may also carry "composer_placeholder", the words in the
message box for that kind of chat, and "empty_state" ({title, text}), what a
chat of that kind says before its first message. Slots: "head" (stylesheets and scripts,
in <head>), "sidebar" (under "New chat"), "tools" (the chat's header),
"panel" (beside the conversation on a wide screen, below it on a narrow one),
"composer" (buttons in the message box's bar, before Send: voice, the web toggle;
a field named there is posted with the message).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from apps.accounts.models import User
from apps.chats.models import Chat

SLOTS = ("head", "sidebar", "tools", "panel", "composer")


@dataclass(frozen=True)
class ChatPageHook:
    name: str
    context: Callable[[User, Chat | None], dict | None] = field(compare=False)
    templates: dict[str, str] = field(default_factory=dict, compare=False)
    # The page needs `style-src 'unsafe-inline'` while this hook shows (a
    # vendored widget that styles itself inline, e.g. xterm.js). Scripts stay
    # 'self' whatever a hook says.
    inline_styles: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.templates) - set(SLOTS)
        if unknown:
            raise ValueError(f"unknown chat page slots: {sorted(unknown)}")


HOOKS: list[ChatPageHook] = []


def chat_page_hook_register(hook: ChatPageHook) -> None:
    if hook not in HOOKS:
        HOOKS.append(hook)


def chat_page_hooks_for(user: User, chat: Chat | None) -> dict:
    """For the page's context: per slot, the (template, hook context) pairs to
    include, and whether any shown hook needs inline styles."""
    slots: dict[str, list[dict]] = {slot: [] for slot in SLOTS}
    inline_styles = False
    placeholder, empty_state = "", None
    for hook in HOOKS:
        context = hook.context(user, chat)
        if context is None:
            continue
        inline_styles = inline_styles or hook.inline_styles
        # A chat kind may say what its composer asks for ("Tell the agent…").
        placeholder = placeholder or context.get("composer_placeholder", "")
        empty_state = empty_state or context.get("empty_state")
        for slot, template in hook.templates.items():
            slots[slot].append({"template": template, "context": context})
    return {
        "chat_slots": slots,
        "inline_styles": inline_styles,
        "composer_placeholder": placeholder,
        "empty_state": empty_state,
    }
