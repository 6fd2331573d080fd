"""Long chats are compacted: earlier turns are summarised by the chat's own
model (so a private chat is summarised locally) and hidden from the request."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings

from apps.chats import setup, tree
from apps.chats.live import flush
from apps.chats.models import Chat, Message
from apps.chats.reply import Generation
from apps.llm import TextDelta, stream_chat

KEEP_EXCHANGES = 4  # the last exchanges sent verbatim, never summarised
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


async def maybe_compact(generation: Generation, turn) -> None:
    """When the request nears the model's context length, summarise what is
    older than the last KEEP_EXCHANGES exchanges with the chat's own model (so
    a private chat is summarised locally); those last exchanges stay verbatim.
    A model whose context length is unknown is taken to have a small one."""
    context_length = turn.model.context_length or settings.CHAT_DEFAULT_CONTEXT_TOKENS
    limit = context_length * settings.CHAT_COMPACT_PERCENT / 100
    if estimate_tokens(turn.system, turn.history) < limit:
        return
    keep_from = await sync_to_async(_first_kept, thread_sensitive=False)(
        turn.chat, turn.question.pk
    )
    older = await sync_to_async(setup.conversation, thread_sensitive=False)(
        turn.chat, before=keep_from or 0
    )
    if not keep_from or not older:
        return  # nothing older than the exchanges kept verbatim
    generation.status_line = "Compacting earlier messages…"
    generation.touch("status")
    flush(generation)
    request = [*older, {"role": "user", "blocks": [{"type": "text", "text": COMPACT_PROMPT}]}]
    summary_parts = []
    async for event in stream_chat(turn.config, system=turn.system, turns=request, tools=[]):
        if isinstance(event, TextDelta):
            summary_parts.append(event.text)
    summary = "".join(summary_parts).strip()
    if not summary:
        return
    upto = await sync_to_async(_store_summary, thread_sensitive=False)(
        turn.chat, summary, keep_from
    )
    turn.chat.summary, turn.chat.summary_upto = summary, upto
    turn.system = await sync_to_async(setup.system_prompt, thread_sensitive=False)(
        turn.user, turn.chat, turn.model
    )
    turn.history = await sync_to_async(setup.conversation, thread_sensitive=False)(
        turn.chat, before=turn.question.pk
    )
    generation.notes.append("Earlier messages were summarised to fit the model's context.")
    generation.status_line = "Thinking…"
    generation.touch("status", "notes")


def _first_kept(chat: Chat, question_pk: int) -> int | None:
    """The first message of the last KEEP_EXCHANGES exchanges before the
    question on its branch (each exchange starts with the person's message),
    or None when there are no more exchanges than that since the last summary."""
    earlier = setup.after_summary(chat, tree.lineage(chat, question_pk)[:-1])
    starts = [m.pk for m in reversed(earlier) if m.role == Message.Role.USER]
    return starts[KEEP_EXCHANGES - 1] if len(starts) > KEEP_EXCHANGES else None


def _store_summary(chat: Chat, summary: str, before: int) -> int:
    """Keep the summary; everything on the branch before `before` is now behind it."""
    upto = Message.objects.filter(pk=before).values_list("parent_id", flat=True).first() or 0
    Chat.objects.filter(pk=chat.pk).update(summary=summary, summary_upto=upto)
    return upto
