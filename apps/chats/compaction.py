"""Long chats are compacted: earlier turns are summarised by the chat's own
model (so a private chat is summarised locally) and hidden from the request."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings

from apps.chats import setup
from apps.chats.live import Generation, flush
from apps.chats.models import Chat
from apps.llm import TextDelta, stream_chat

COMPACT_PROMPT = (
    "Summarise the conversation so far for your own later reference: the person's questions, "
    "the facts found (with document titles and dates), decisions and open questions. Be brief."
)


def estimate_tokens(system: str, turns: list[dict]) -> int:
    chars = len(system)
    for turn in turns:
        for block in turn["blocks"]:
            chars += len(block.get("text") or block.get("content") or block.get("arguments") or "")
    return chars // 4


async def maybe_compact(generation: Generation, turn, context_length: int) -> None:
    """Summarise earlier turns with the chat's own model when the request
    nears its context length (so a private chat is summarised locally)."""
    limit = context_length * settings.CHAT_COMPACT_PERCENT / 100
    if estimate_tokens(turn.system, turn.history) < limit or len(turn.history) < 4:
        return
    generation.status_line = "Compacting earlier messages…"
    generation.touch("status")
    flush(generation)
    summary_parts = []
    request = [
        *turn.history,
        {"role": "user", "blocks": [{"type": "text", "text": COMPACT_PROMPT}]},
    ]
    async for event in stream_chat(turn.config, system=turn.system, turns=request, tools=[]):
        if isinstance(event, TextDelta):
            summary_parts.append(event.text)
    summary = "".join(summary_parts).strip()
    if not summary:
        return
    upto = await sync_to_async(_store_summary, thread_sensitive=False)(
        turn.chat, summary, turn.question.pk
    )
    turn.chat.summary, turn.chat.summary_upto = summary, upto
    turn.system = await sync_to_async(setup.system_prompt, thread_sensitive=False)(
        turn.user, turn.chat
    )
    turn.history = []
    generation.notes.append("Earlier messages were summarised to fit the model's context.")
    generation.status_line = "Thinking…"
    generation.touch("status", "notes")


def _store_summary(chat: Chat, summary: str, before: int) -> int:
    upto = (
        chat.messages.filter(pk__lt=before).order_by("-pk").values_list("pk", flat=True).first()
        or 0
    )
    Chat.objects.filter(pk=chat.pk).update(summary=summary, summary_upto=upto)
    return upto
