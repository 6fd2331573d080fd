"""What the composer's slash commands need from the server (static/js/composer.js).

`/search`, `/new` and `/model` use pages and forms that already exist (the
library's search, the new-chat page, the header's model picker); `/private`
has no control of its own elsewhere, so its write lives here: a chat made
private by hand is the same as one that read local-only notes (it stays on
local models for good), and a chat whose model is a cloud one is refused
rather than left unable to answer its next message.
"""

from __future__ import annotations

from apps.chats.models import Chat
from apps.chats.services import chat_mark_private, next_reply_model
from apps.core.errors import Refused
from apps.llm.selectors import default_model_for, model_for

ALREADY = "This chat is already private: it stays on local models."
MADE = "This chat is private now: it stays on local models, for good."


def chat_make_private(*, chat: Chat) -> str:
    """Mark `chat` private on the person's request; what to tell them."""
    if chat.private:
        return ALREADY
    if chat.is_agent:
        raise Refused("an agent chat cannot be made private")
    model = next_reply_model(chat)
    if model is not None and model.is_cloud:
        name = model.display_name or model.label
        raise Refused(
            f"this chat uses {name}, a cloud model: switch it to a local model first "
            "(/model and a local model's name), then /private"
        )
    chat_mark_private(chat=chat)
    return MADE


def new_chat_private_check(*, user, model_label: str) -> None:
    """A new chat asked to start private (`/private` on the new-chat page):
    refused before anything is written when its model would be a cloud one."""
    try:
        model = (
            model_for(user=user, label=model_label) if model_label else default_model_for(user=user)
        )
    except Refused:
        return  # turn_start refuses a model the person may not use, with its reason
    if model is not None and model.is_cloud:
        name = model.display_name or model.label
        raise Refused(
            f"{name} is a cloud model: pick a local model for a private chat "
            "(the picker under the message box, or /model)"
        )


def new_chat_private(chat: Chat) -> None:
    """After the new chat's first message is written, before its reply starts."""
    chat_mark_private(chat=chat)
