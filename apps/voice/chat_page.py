"""What voice adds to the chat page (apps/chats/page_hooks.py): its script in
the head, the Dictate button in the composer, and whether replies offer
"Read aloud". A person with no audio endpoint they may use sees neither; in a
private chat whose only endpoint is a cloud one, the button says why it is off."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.urls import reverse

from apps.chats.page_hooks import ChatPageHook
from apps.core.errors import Refused
from apps.voice import limits
from apps.voice.selectors import (
    PRIVATE_SPEECH,
    SPEECH,
    TRANSCRIPTION,
    audio_connections_for,
    dictation_route_for,
)

if TYPE_CHECKING:
    from apps.accounts.models import User
    from apps.chats.models import Chat


def voice_context(user: User, chat: Chat | None) -> dict | None:
    dictate = bool(audio_connections_for(user=user, purpose=TRANSCRIPTION))
    speakers = audio_connections_for(user=user, purpose=SPEECH)
    if not dictate and not speakers:
        return None
    dictate_refused = ""
    if dictate:
        try:
            dictation_route_for(user=user, chat=chat)
        except Refused as refused:
            dictate_refused = str(refused)
    private = chat is not None and chat.private
    speak_refused = PRIVATE_SPEECH if private and all(c.is_cloud for c in speakers) else ""
    return {
        "dictate": dictate,
        "dictate_refused": dictate_refused,
        "transcribe_url": reverse("voice:transcribe"),
        "chat_id": chat.pk if chat else "",
        "max_seconds": limits.max_seconds(),
        "max_bytes": limits.max_bytes(),
        # Replies' "Read aloud" buttons are shown by the script when this is on.
        "speak": bool(speakers) and not speak_refused,
        "speak_refused": speak_refused,
    }


HOOKS = [
    ChatPageHook(
        name="voice",
        context=voice_context,
        templates={"head": "voice/_head.html", "composer": "voice/_dictate.html"},
    )
]
