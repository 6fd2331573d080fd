"""Generating a reply: one asyncio task per reply in the web process.

The registry owns the tasks, keyed by message id; websockets only follow them
(closing the tab does not stop a reply, a reload or a second tab re-attaches,
Stop cancels the task within a second and keeps what arrived). The reply row is
saved every couple of seconds while streaming and at the end, so a server
restart leaves it marked interrupted with what it had.

One turn: the model streams; tool calls run as the person (`tools.py`); their
results go back to the model, up to a round limit; the answer's citations are
checked against the passages returned in this turn; frames of whole rendered
blocks go to every open socket of the chat, about 15 per second at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections

from apps.chats import citations, frames, refusals, setup, tools
from apps.chats.history import index_exchange
from apps.chats.models import Chat, Message, PendingAction
from apps.chats.reply import Reply
from apps.chats.services import chat_mark_private
from apps.library.search import search
from apps.llm import (
    Finished,
    OpaqueBlock,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    Usage,
    stream_chat,
)

logger = logging.getLogger(__name__)

FRAME_INTERVAL = 0.066  # about 15 frames per second at most
SAVE_INTERVAL = 2.0
ASK_TO_CITE = (
    "You used passages from the notes but cited none. Rewrite your answer citing the passages "
    "you relied on with their numbers in square brackets, like [1]. Change nothing else."
)
ROUND_LIMIT_NOTE = "Stopped: the model kept calling tools without answering."
UNCITED_NOTE = "Uncited: this answer does not say which passages it relies on."
SEARCH_FALLBACK_HEAD = (
    "**Search results** (no model answered, so these are the most relevant passages):"
)
COMPACT_PROMPT = (
    "Summarise the conversation so far for your own later reference: the person's questions, "
    "the facts found (with document titles and dates), decisions and open questions. Be brief."
)


@dataclass
class Generation(Reply):
    """A reply being written: the Reply plus what only the running task needs."""

    status_line: str = "Thinking…"
    dirty: set = field(default_factory=set)  # blocks changed since the last frame
    task: asyncio.Task | None = None
    # The first periodic save comes SAVE_INTERVAL after the start, not at the
    # first token (when a burst of sends is still being handled).
    last_save: float = field(default_factory=time.monotonic)
    save_task: asyncio.Task | None = None

    def touch(self, *blocks: str) -> None:
        self.dirty.update(blocks)


class Registry:
    """The running replies of this process and the sockets following each chat."""

    def __init__(self) -> None:
        self.generations: dict[int, Generation] = {}
        self.listeners: dict[int, set[asyncio.Queue]] = {}

    def start(self, message_id: int, chat_id: int) -> Generation:
        generation = Generation(pk=message_id, chat_id=chat_id)
        self.generations[message_id] = generation
        generation.task = asyncio.get_running_loop().create_task(run(generation))
        return generation

    def running(self, message_id: int) -> Generation | None:
        return self.generations.get(message_id)

    def running_in(self, chat_id: int) -> list[Generation]:
        return [g for g in self.generations.values() if g.chat_id == chat_id]

    def cancel(self, message_id: int) -> bool:
        generation = self.generations.get(message_id)
        if generation is None or generation.task is None or generation.task.done():
            return False
        generation.task.cancel()
        return True

    def subscribe(self, chat_id: int) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue()
        self.listeners.setdefault(chat_id, set()).add(queue)
        return queue

    def unsubscribe(self, chat_id: int, queue: asyncio.Queue) -> None:
        self.listeners.get(chat_id, set()).discard(queue)

    def publish(self, chat_id: int, html: str) -> None:
        for queue in list(self.listeners.get(chat_id, ())):
            queue.put_nowait(html)

    def finished(self, generation: Generation) -> None:
        self.generations.pop(generation.pk, None)


REGISTRY = Registry()


def flush(generation: Generation, *, everything: bool = False) -> None:
    blocks = frames.BLOCKS if everything else [b for b in frames.BLOCKS if b in generation.dirty]
    generation.dirty.clear()
    if blocks or everything:
        REGISTRY.publish(
            generation.chat_id,
            frames.render_blocks(generation, blocks, composer=everything),
        )


async def _flusher(generation: Generation) -> None:
    while True:
        await asyncio.sleep(FRAME_INTERVAL)
        if generation.dirty:
            flush(generation)


async def run(generation: Generation) -> None:
    flusher = asyncio.create_task(_flusher(generation))
    flush(generation, everything=True)  # every open tab: Send becomes Stop
    try:
        await _turn(generation)
        if generation.status not in (Message.Status.ERROR, Message.Status.STOPPED):
            generation.status = Message.Status.DONE
    except asyncio.CancelledError:
        generation.status = Message.Status.STOPPED
        generation.notes.append("Stopped: this is what arrived before you stopped it.")
        generation.turns = setup._balanced(generation.turns)
    except ProviderError as exc:
        await _failed(generation, exc.message)
    except Exception as exc:  # the reply says so; the log has the traceback
        logger.exception("reply %s failed", generation.pk)
        await _failed(generation, f"something went wrong while answering ({type(exc).__name__})")
    finally:
        flusher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await flusher
        generation.status_line = ""
        try:
            if generation.save_task is not None:
                # A periodic save still in flight must land before the final
                # one; its failure is already logged (_log_failed_save).
                with contextlib.suppress(Exception):
                    await generation.save_task
            await sync_to_async(_save, thread_sensitive=False)(_snapshot(generation, final=True))
        finally:
            flush(generation, everything=True)
            REGISTRY.finished(generation)


async def _failed(generation: Generation, reason: str) -> None:
    generation.status = Message.Status.ERROR
    lead = f"⚠️ {reason}"
    generation.text = f"{generation.text}\n\n{lead}" if generation.text else lead
    generation.turns = []
    try:
        await _search_fallback(generation)
    except Exception:  # the error reply stands without passages
        logger.exception("search fallback for reply %s failed", generation.pk)
    generation.touch("answer", "sources")


@dataclass(frozen=True)
class _Snapshot:
    """The reply's fields copied on the event loop, for a save in a thread."""

    message_id: int
    fields: dict
    final: bool
    index: bool


def _snapshot(generation: Generation, *, final: bool = False) -> _Snapshot:
    index = final and generation.status == Message.Status.DONE
    return _Snapshot(generation.pk, generation.stored(final=final), final, index)


def _save(snapshot: _Snapshot) -> None:
    if snapshot.final:
        # Not on periodic saves: with CONN_MAX_AGE=0 this always closes the worker
        # thread's connection, and reopening one (sqlite-vec, pragmas) costs about
        # 20 times the UPDATE, for every reply every SAVE_INTERVAL.
        close_old_connections()
    Message.objects.filter(pk=snapshot.message_id).update(**snapshot.fields)
    if snapshot.index:
        _index(snapshot.message_id)


def _index(message_id: int) -> None:
    answer = Message.objects.select_related("chat").get(pk=message_id)
    question = (
        answer.chat.messages.filter(pk__lt=answer.pk, role=Message.Role.USER)
        .order_by("-pk")
        .first()
    )
    if question is not None:
        index_exchange(question=question, answer=answer)


async def _maybe_save(generation: Generation) -> None:
    """Save the reply so far every SAVE_INTERVAL, in the background: the stream
    keeps reading while the row is written (at most one save in flight)."""
    now = time.monotonic()
    in_flight = generation.save_task is not None and not generation.save_task.done()
    if now - generation.last_save >= SAVE_INTERVAL and not in_flight:
        generation.last_save = now
        generation.save_task = asyncio.create_task(
            sync_to_async(_save, thread_sensitive=False)(_snapshot(generation))
        )
        generation.save_task.add_done_callback(_log_failed_save)


def _log_failed_save(task: asyncio.Task) -> None:
    # A periodic save that fails loses nothing (the final save writes it all),
    # but it is logged rather than left as an unretrieved task exception.
    if not task.cancelled() and task.exception() is not None:
        logger.error("a periodic save of a reply failed", exc_info=task.exception())


async def _turn(generation: Generation) -> None:
    turn = await sync_to_async(setup.load, thread_sensitive=False)(generation.pk)
    generation.configure_link = bool(getattr(turn.user, "is_staff", False))
    if turn.refusal:
        raise ProviderError(turn.refusal)
    if turn.model is None:
        generation.status_line = "Searching your notes…"
        generation.touch("status")
        await _search_fallback(generation, no_model=True)
        return
    generation.model_label = turn.model.label
    generation.status = Message.Status.STREAMING
    context_length = getattr(turn.model, "context_length", 0) or 0
    if context_length:
        await _maybe_compact(generation, turn, context_length)
    question_turn = turn.question.turns or [
        {"role": "user", "blocks": [{"type": "text", "text": turn.question.text}]}
    ]
    conversation = [*turn.history, *question_turn]
    specs = tools.tool_specs(notes_only=turn.chat.notes_only) if turn.model.supports_tools else []
    ctx = tools.TurnContext(
        user=turn.user, chat=turn.chat, cloud=turn.cloud, notes_only=turn.chat.notes_only,
        mentions=list(turn.question.mentions or []),
    )  # fmt: skip
    answer_blocks = await _tool_loop(generation, turn, ctx, conversation, specs)
    if answer_blocks is None:
        return  # a privacy stop: the fixed message is the reply
    await _finish_citations(generation, turn, ctx, conversation, specs, answer_blocks)


async def _tool_loop(generation, turn, ctx, conversation, specs):
    rounds = 0
    asked_to_search = False
    while True:
        rounds += 1
        text_before = generation.text
        blocks, calls = await _stream(generation, turn, conversation, specs)
        assistant = {"role": "assistant", "blocks": blocks}
        conversation.append(assistant)
        generation.turns.append(assistant)
        if not calls and not asked_to_search and refusals.refused_unsearched(generation, specs):
            asked_to_search = True
            refusals.ask_to_search(generation, conversation, text_before)
            continue
        if not calls:
            return blocks
        if rounds > settings.CHAT_MAX_TOOL_ROUNDS:
            generation.turns = setup._balanced(generation.turns)
            generation.notes.append(ROUND_LIMIT_NOTE)
            generation.usage["stop_reason"] = "round_limit"
            generation.touch("notes")
            return blocks
        generation.status_line = "Searching your notes…"
        generation.touch("status")
        results = []
        for call in calls:
            entry = {
                "id": call.id,
                "name": call.name,
                "arguments": call.arguments[:500],
                "state": "running",
            }
            generation.activity.append(entry)
            generation.touch("activity")
            try:
                content, is_error = await sync_to_async(tools.run_tool, thread_sensitive=False)(
                    ctx, call.name, call.arguments
                )
            except tools.PrivacyStop as stop:
                entry["state"] = "held back"
                generation.usage["stop_reason"] = "privacy"
                generation.turns = []
                generation.text = str(stop)
                generation.notes.append("No model call was made with these notes.")
                generation.touch("answer", "activity", "notes")
                return None
            entry["state"] = "error" if is_error else "ok"
            entry["result"] = content[:300]
            generation.touch("activity")
            results.append(
                {
                    "type": "tool_result",
                    "call_id": call.id,
                    "name": call.name,
                    "content": content,
                    "is_error": is_error,
                }
            )
        await _after_tools(generation, turn, ctx)
        tool_turn = {"role": "tool", "blocks": results}
        conversation.append(tool_turn)
        generation.turns.append(tool_turn)
        await _maybe_save(generation)


async def _after_tools(generation, turn, ctx) -> None:
    if ctx.saw_local_only and not turn.chat.private and not turn.cloud:
        await sync_to_async(chat_mark_private, thread_sensitive=False)(chat=turn.chat)
        generation.notes.append(
            "This chat read local-only notes: it is now private and stays on local models."
        )
        generation.touch("notes")
    if ctx.cards:
        created = await sync_to_async(_create_actions, thread_sensitive=False)(
            generation.pk, ctx.cards
        )
        ctx.cards = []
        generation.actions.extend(created)
        generation.touch("actions")


def _create_actions(message_id: int, cards: list[tuple[str, dict, str]]) -> list[PendingAction]:
    return [
        PendingAction.objects.create(
            message_id=message_id, kind=kind, payload=payload, status=status
        )
        for kind, payload, status in cards
    ]


async def _stream(generation, turn, conversation, specs):
    """One model call: stream text and reasoning into the reply, collect tool calls."""
    blocks: list[dict] = []
    calls: list[ToolCall] = []
    text_start = len(generation.text)
    if generation.text:
        generation.text += "\n\n"
        text_start = len(generation.text)
    async for event in stream_chat(
        turn.config, system=turn.system, turns=conversation, tools=specs
    ):
        if isinstance(event, TextDelta):
            if generation.status_line != "Writing…":
                generation.status_line = "Writing…"
                generation.touch("status")
            generation.text += event.text
            generation.touch("answer")
        elif isinstance(event, ReasoningDelta):
            generation.reasoning += event.text
            generation.touch("reasoning")
        elif isinstance(event, ToolCallStarted):
            generation.status_line = f"Calling {event.name}…"
            generation.touch("status")
        elif isinstance(event, ToolCall):
            calls.append(event)
            blocks.append(
                {
                    "type": "tool_call",
                    "id": event.id,
                    "name": event.name,
                    "arguments": event.arguments,
                }
            )
        elif isinstance(event, OpaqueBlock):
            blocks.append(
                {
                    "type": "opaque",
                    "provider": event.provider,
                    "model": event.model,
                    "data": event.data,
                }
            )
        elif isinstance(event, Usage):
            for key, value in (
                ("input_tokens", event.input_tokens),
                ("output_tokens", event.output_tokens),
                ("cost", event.cost),
            ):
                if value is not None:
                    generation.usage[key] = generation.usage.get(key, 0) + value
        elif isinstance(event, Finished) and generation.usage.get("stop_reason") != "round_limit":
            generation.usage["stop_reason"] = event.stop_reason
        await _maybe_save(generation)
    text = generation.text[text_start:]
    if not text.strip() and generation.text.endswith("\n\n"):
        generation.text = generation.text[: text_start - 2]
    if text.strip():
        blocks.insert(0, {"type": "text", "text": text})
    return blocks, calls


async def _finish_citations(generation, turn, ctx, conversation, specs, answer_blocks) -> None:
    valid = set(ctx.passages)
    if ctx.passages:
        final = _text_of(answer_blocks)
        _, used, _ = citations.verify(final, valid)
        if not used and specs:
            # Asked once; the retry replaces the answer only if it now cites.
            conversation.append({"role": "user", "blocks": [{"type": "text", "text": ASK_TO_CITE}]})
            before_text, before_turns = generation.text, list(generation.turns)
            generation.text = ""
            retry_blocks, retry_calls = await _stream(generation, turn, conversation, [])
            retried = _text_of(retry_blocks)
            if not retry_calls and citations.verify(retried, valid)[1]:
                generation.turns = [
                    *before_turns[:-1],
                    {"role": "assistant", "blocks": retry_blocks},
                ]
            else:
                generation.text, generation.turns = before_text, before_turns
    cleaned, used, invalid = citations.verify(generation.text, valid)
    generation.text = cleaned
    generation.citations = [ctx.passages[n].citation() for n in used]
    if invalid:
        generation.usage["invalid_citations"] = invalid
        generation.notes.append(
            f"{invalid} citation{'s' if invalid != 1 else ''} pointed at no passage"
            " and were removed."
        )
    if ctx.passages and not used:
        generation.notes.append(UNCITED_NOTE)
    for caveat in ctx.caveats:
        generation.notes.append(caveat)
    generation.touch("answer", "sources", "notes")


def _text_of(blocks: list[dict]) -> str:
    return "".join(b["text"] for b in blocks if b["type"] == "text")


async def _search_fallback(generation: Generation, *, no_model: bool = False) -> None:
    """The most relevant passages, with citations, clearly labelled as search results."""
    passages = await sync_to_async(_fallback_passages, thread_sensitive=False)(generation.pk)
    if no_model:
        generation.status = Message.Status.DONE
    if not passages:
        if no_model:
            generation.text = (
                "No language model is set up yet, and nothing in your library"
                " matches this question."
            )
        generation.touch("answer")
        return
    lines = [SEARCH_FALLBACK_HEAD, ""]
    for p in passages:
        r = p.result
        version = "latest" if r.is_latest else f"superseded by {p.superseded_by}"
        excerpt = " ".join(r.text.split())[:400]
        lines.append(
            f"- **{r.title}** ({r.path}, {r.date or 'undated'}, {version}) [{p.n}]: {excerpt}"
        )
    block = "\n".join(lines)
    generation.text = f"{generation.text}\n\n{block}" if generation.text else block
    generation.citations = [p.citation() for p in passages]
    if no_model:
        generation.notes.append(
            "No language model is configured: these are search results, not an answer."
        )
    generation.touch("answer", "sources", "notes")


def _fallback_passages(message_id: int) -> list[tools.Passage]:
    answer = Message.objects.select_related("chat", "chat__owner").get(pk=message_id)
    question = (
        answer.chat.messages.filter(pk__lt=answer.pk, role=Message.Role.USER)
        .order_by("-pk")
        .first()
    )
    if question is None:
        return []
    ctx = tools.TurnContext(user=answer.chat.owner, chat=answer.chat, cloud=False, notes_only=True)
    results = search(answer.chat.owner, question.text, limit=5).results
    return [ctx.number(tools.passage_from_result(r, ctx.user)) for r in results]


def estimate_tokens(system: str, turns: list[dict]) -> int:
    chars = len(system)
    for turn in turns:
        for block in turn["blocks"]:
            chars += len(block.get("text") or block.get("content") or block.get("arguments") or "")
    return chars // 4


async def _maybe_compact(generation: Generation, turn, context_length: int) -> None:
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
        turn.user, turn.chat, turn.model
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


def mark_interrupted(chat: Chat) -> None:
    """Replies left in flight by a previous web process: say so, keep their text."""
    stale = chat.messages.filter(status__in=[Message.Status.PENDING, Message.Status.STREAMING])
    for message in stale:
        if REGISTRY.running(message.pk) is None:
            message.status = Message.Status.INTERRUPTED
            message.notes = [
                *message.notes,
                "Interrupted: the server restarted while this reply was being written.",
            ]
            message.save(update_fields=["status", "notes"])
