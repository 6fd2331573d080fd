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
import json
import logging

from asgiref.sync import sync_to_async
from django.conf import settings

from apps.chats import approvals, citations, frames, owner, refusals, rounds, setup, tools
from apps.chats.attachments import attachment_ids, pending_attachments
from apps.chats.attribution import ATTRIBUTED_NOTE, attribute, copies_without_answering
from apps.chats.compaction import maybe_compact
from apps.chats.fallback import search_fallback
from apps.chats.first_search import QUESTION_LEAD, first_search, is_context_overflow
from apps.chats.live import REGISTRY, flush, flusher, setup_slot, untick
from apps.chats.models import Message
from apps.chats.pages import chat_header_frame, header_state
from apps.chats.reply import Generation, Reply
from apps.chats.saving import SAVER, maybe_save, save
from apps.chats.speed import timed
from apps.chats.text_calls import calls_in_text, repeating
from apps.chats.tools import ask
from apps.chats.usage import chat_usage_line
from apps.core.onehop import after_sends
from apps.llm import (
    ProviderError,
    ReasoningDelta,
    ReplyBuilder,
    TextDelta,
    ToolCallStarted,
    stream_chat,
)

logger = logging.getLogger(__name__)

ASK_TO_CITE = (
    "You used passages from the notes but cited none. Rewrite your answer citing the passages "
    "you relied on with their numbers in square brackets, like [1]. Change nothing else."
)
ASK_IN_WORDS = (
    "Your answer was only passage numbers. Answer the question in words from the passages, "
    "citing the ones you use like [1]."
)
ASK_NOT_COPIED = (
    "Your answer only copied passages. Answer the question itself in a sentence or two of your "
    "own, citing the passages you use like [1]; if the passages do not say, answer that the "
    "notes do not say."
)
ROUND_LIMIT_NOTE = "Stopped: the model kept calling tools without answering."
# How long a reply waits for its attachments to be indexed, and how often it looks.
ATTACHMENT_WAIT, ATTACHMENT_POLL = 90.0, 0.5
ATTACHMENT_LATE_NOTE = "An attachment was still being read; this answer may not include it."
UNCITED_NOTE = "Uncited: this answer does not say which passages it relies on."
SHRUNK_NOTE = (
    "The model's server said the request was too long for its context, so the passages "
    "were shortened and it was asked again."
)
PRIVACY_NOTE = "No model call was made with these notes."
BUDGET_NOTE = "Stopped: this reply reached its budget of {}."
REPEAT_NOTE = "Stopped: the model was repeating itself."
LENGTH_NOTE = "Cut off: the model reached the most it may write in one reply."


def reply_start(message_id: int, chat_id: int, *, header: str = "") -> Generation:
    """Start writing the reply `message_id` on this event loop. `header`: the
    chat's header, rendered, when the turn's request changed it (a regenerate
    on another model): every open tab gets it with the first frame."""
    generation = Generation(pk=message_id, chat_id=chat_id, header=header)
    return REGISTRY.start(generation, run(generation))


async def reply_resume(message_id: int) -> Generation:
    """Go on with a reply whose approval card the person has just answered."""
    saved = await sync_to_async(_saved_reply, thread_sensitive=False)(message_id)
    generation = Generation.resumed(saved)
    return REGISTRY.start(generation, run(generation, resume=True))


def _saved_reply(message_id: int) -> Reply:
    return Reply.of(Message.objects.get(pk=message_id))


async def reply_stop_waiting(message_id: int) -> bool:
    """Stop a reply that waits for the person (no task runs it): its card is
    closed (apps.chats.approvals.approvals_stop) and every open tab of the
    chat is told at once, so the card reads "stopped" and Stop turns back
    into Send. False when it was not waiting."""
    stopped = await sync_to_async(_stop_waiting, thread_sensitive=False)(message_id)
    if stopped is None:
        return False
    chat_id, html = stopped
    REGISTRY.publish(chat_id, html)
    return True


def _stop_waiting(message_id: int) -> tuple[int, str] | None:
    message = Message.objects.get(pk=message_id)
    if not approvals.approvals_stop(message=message):
        return None
    reply = Reply.of(Message.objects.get(pk=message_id))
    reply.chat_usage = chat_usage_line(reply.chat_id)
    return reply.chat_id, frames.render_blocks(reply, composer=True)


async def run(generation: Generation, *, resume: bool = False) -> None:
    frames_task = asyncio.create_task(flusher(generation))
    flush(generation, everything=True)  # every open tab: Send becomes Stop
    try:
        # Sockets and Stops served by other processes reach this one (apps.chats.owner).
        await owner.claim(generation.chat_id)
        await _turn(generation, resume=resume)
        # The model's last words go out now, as the ticker would have sent
        # them: the final frame (every block whole) waits for the last save,
        # tens of ms and more in a burst, and the person should not.
        if generation.dirty and generation.being_written:
            flush(generation, text_only=True)
        if generation.status not in (
            Message.Status.ERROR,
            Message.Status.STOPPED,
            Message.Status.WAITING,
        ):
            generation.status = Message.Status.DONE
    except asyncio.CancelledError:
        generation.status = Message.Status.STOPPED
        generation.notes.append("Stopped: this is what arrived before you stopped it.")
        generation.turns = setup.without_unanswered_calls(generation.turns)
    except ProviderError as exc:
        await _failed(generation, exc.message)
    except Exception as exc:  # the reply says so; the log has the traceback
        logger.exception("reply %s failed", generation.pk)
        await _failed(generation, f"something went wrong while answering ({type(exc).__name__})")
    finally:
        # Off the ticker now, not when the cancelled task next runs: a tick in
        # between would send the blocks the final frame is about to send whole.
        untick(generation)
        frames_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await frames_task
        generation.status_line = ""
        try:
            await SAVER.settled(generation)  # a periodic save lands before the final one
            await sync_to_async(save, thread_sensitive=False)(generation.snapshot(final=True))
            generation.chat_usage = await sync_to_async(chat_usage_line, thread_sensitive=False)(
                generation.chat_id
            )
            # The header as saved now, if it changed since the turn loaded: the
            # turn may have made the chat private, another tab may have moved
            # it to another model.
            header = await sync_to_async(chat_header_frame, thread_sensitive=False)(
                generation.chat_id, unless=generation.header_state
            )
            if header:
                generation.header = header
        finally:
            flush(generation, everything=True)
            REGISTRY.finished(generation)
            await owner.release(generation.chat_id)


async def _failed(generation: Generation, reason: str) -> None:
    generation.status = Message.Status.ERROR
    lead = f"⚠️ {reason}"
    generation.text = f"{generation.text}\n\n{lead}" if generation.text else lead
    generation.turns = []
    try:
        await search_fallback(generation)
    except Exception:  # the error reply stands without passages
        logger.exception("search fallback for reply %s failed", generation.pk)
    generation.touch("answer", "sources")


# When each running reply started writing (its time budget); keyed by message id.
_STARTED: dict[int, float] = {}


async def _turn(generation: Generation, *, resume: bool = False) -> None:
    try:
        await _turn_body(generation, resume=resume)
    finally:
        _STARTED.pop(generation.pk, None)


async def _turn_body(generation: Generation, *, resume: bool = False) -> None:
    # Sends first: a burst's own sends land before the turns they start load.
    await after_sends()
    async with setup_slot():
        turn = await sync_to_async(setup.load, thread_sensitive=False)(generation.pk)
    generation.header_state = header_state(turn.chat)
    generation.configure_link = bool(getattr(turn.user, "is_staff", False))
    if turn.refusal:
        raise ProviderError(turn.refusal)
    await _attachments_indexed(generation, turn)
    if turn.model is None:
        generation.status_line = "Searching your notes…"
        generation.touch("status")
        await search_fallback(generation, no_model=True)
        return
    generation.model_label = turn.model.label
    generation.status = Message.Status.STREAMING
    if not resume:
        await maybe_compact(generation, turn)
    question_turn = (
        turn.question_turns
        or turn.question.turns
        or [{"role": "user", "blocks": [{"type": "text", "text": turn.question.text}]}]
    )
    ctx = tools.TurnContext(
        user=turn.user, chat=turn.chat, cloud=turn.cloud, notes_only=turn.chat.notes_only,
        mentions=list(turn.question.mentions or []),
    )  # fmt: skip
    if getattr(turn.model, "search_only", False) and not turn.chat.is_agent:
        ctx.only_tools = tools.SEARCH_ONLY
    specs = []
    if turn.model.supports_tools:
        # Offering a tool may read the database (an agent chat's session).
        specs = await sync_to_async(tools.tool_specs, thread_sensitive=False)(ctx)
    retrieved = None
    if not resume:
        try:
            retrieved = await _first_search(generation, turn, ctx)
        except tools.PrivacyStop as stop:
            _privacy_stopped(generation, stop)
            return
    conversation = [*turn.history, *_with_retrieved(question_turn, retrieved)]
    if resume:
        # The reply so far ends with the round of calls the person has answered.
        conversation += generation.turns
        if not await _answered_round(generation, turn, ctx, conversation):
            return
    try:
        answer_blocks = await _tool_loop(generation, turn, ctx, conversation, specs)
    except ProviderError as exc:
        if not (retrieved and is_context_overflow(exc) and not generation.turns):
            raise
        # Too long for the server's context: shorter passages, once, said so.
        shrunk = await sync_to_async(first_search, thread_sensitive=False)(
            ctx, turn.question.text, shrunk=True
        )
        conversation = [*turn.history, *_with_retrieved(question_turn, shrunk)]
        generation.notes.append(SHRUNK_NOTE)
        generation.touch("notes")
        answer_blocks = await _tool_loop(generation, turn, ctx, conversation, specs)
    if answer_blocks is None:
        return  # a privacy stop (the fixed message is the reply), or waiting for approval
    await _finish_citations(generation, turn, ctx, conversation, specs, answer_blocks)


async def _first_search(generation: Generation, turn, ctx) -> str | None:
    """Retrieval first (apps.chats.first_search): the passages for the
    question, shown in the reply's activity like a search the model ran."""
    if turn.question is None:
        return None
    generation.status_line = "Searching your notes…"
    generation.touch("status")
    block = await sync_to_async(first_search, thread_sensitive=False)(ctx, turn.question.text)
    if block is None:
        return None
    found = ctx.extras.get("first_search", {}).get("passages", [])
    generation.activity.append(
        {
            "id": "first-search",
            "name": "search_notes",
            "arguments": json.dumps({"query": turn.question.text})[:500],
            "state": "ok",
            "result": f"{len(found)} relevant passage{'s' if len(found) != 1 else ''}",
            "first": True,
            "found": len(found),
        }
    )
    generation.touch("activity")
    await rounds.after_tools(generation, turn, ctx)  # local-only passages: the chat turns private
    return block


def _with_retrieved(question_turn: list[dict], retrieved: str | None) -> list[dict]:
    """The question as sent in this request: the first search's passages,
    then the question (the stored question is left as the person wrote it).
    The question comes last because a model answers what it read last: with
    the passages after it, a small model went on writing passages (echoing
    their labels and text) instead of answering."""
    if not retrieved or not question_turn:
        return list(question_turn)
    *before, last = question_turn
    # Blocks of one turn reach an OpenAI-style server as one string, joined
    # as they are, so the block ends with the words that lead into the question.
    block = {"type": "text", "text": f"{retrieved}\n\n{QUESTION_LEAD}\n"}
    return [*before, {**last, "blocks": [block, *last["blocks"]]}]


def _privacy_stopped(generation: Generation, stop: Exception) -> None:
    generation.usage["stop_reason"] = "privacy"
    generation.turns = []
    generation.text = str(stop)
    generation.notes.append(PRIVACY_NOTE)
    generation.touch("answer", "activity", "notes")


async def _attachments_indexed(generation: Generation, turn) -> None:
    """Files attached to the question are indexed by the worker; the model
    searches them, so wait for them (saying so), at most ATTACHMENT_WAIT.
    After that the turn goes on: what is indexed by then is found."""
    ids = attachment_ids(turn.question.mentions if turn.question else [])
    if not ids:
        return
    count = sync_to_async(pending_attachments, thread_sensitive=False)
    deadline = asyncio.get_running_loop().time() + ATTACHMENT_WAIT
    while await count(ids):
        if asyncio.get_running_loop().time() > deadline:
            generation.notes.append(ATTACHMENT_LATE_NOTE)
            generation.touch("notes")
            return
        generation.status_line = "Reading your attachments…"
        generation.touch("status")
        await asyncio.sleep(ATTACHMENT_POLL)


async def _answered_round(generation, turn, ctx, conversation) -> bool:
    """Run the round the person answered on its approval card; False when the
    turn ends there (a privacy stop)."""
    card = await sync_to_async(approvals.answered_card, thread_sensitive=False)(generation.pk)
    ctx.restore(card.payload["context"])
    calls, decisions = approvals.answered_round(card)
    results = await rounds.run_calls(generation, turn, ctx, calls, decisions)
    if results is None:
        return False
    _append_results(generation, conversation, results)
    return True


def _append_results(generation, conversation, results) -> None:
    tool_turn = {"role": "tool", "blocks": results}
    conversation.append(tool_turn)
    generation.turns.append(tool_turn)


async def _tool_loop(generation, turn, ctx, conversation, specs):
    round_number = 0
    asked_to_search = False
    while True:
        round_number += 1
        text_before = generation.text
        blocks, calls = await _stream(generation, turn, conversation, specs)
        assistant = {"role": "assistant", "blocks": blocks}
        conversation.append(assistant)
        generation.turns.append(assistant)
        stopped = generation.usage.get("stop_reason") == "budget"
        if (
            not calls
            and not stopped
            and not asked_to_search
            and refusals.refused_unsearched(generation, specs)
        ):
            asked_to_search = True
            refusals.ask_to_search(generation, conversation, text_before)
            continue
        if not calls:
            return blocks
        if round_number > settings.CHAT_MAX_TOOL_ROUNDS:
            generation.turns = setup.without_unanswered_calls(generation.turns)
            generation.notes.append(ROUND_LIMIT_NOTE)
            generation.usage["stop_reason"] = "round_limit"
            generation.touch("notes")
            return blocks
        decisions = await sync_to_async(approvals.decide, thread_sensitive=False)(turn.chat, calls)
        # Calls an app holds for the person's consent (a private chat's web search).
        decisions = await sync_to_async(approvals.holds_apply, thread_sensitive=False)(
            ctx, calls, decisions
        )
        # The model's questions (ask_user) put the round on one card for the person.
        decisions, questions = ask.round_questions(ctx, calls, decisions)
        if questions or any(d.verdict == approvals.Verdict.ASK for d in decisions):
            await rounds.wait_for_approval(generation, ctx, calls, decisions, questions=questions)
            return None
        results = await rounds.run_calls(generation, turn, ctx, calls, decisions)
        if results is None:
            return None
        _append_results(generation, conversation, results)
        await maybe_save(generation)


async def _stream(generation, turn, conversation, specs):
    """One model call: stream text and reasoning into the reply, collect tool calls.

    Returns (blocks, calls). The blocks are the call's part of the transcript:
    its text first, then the calls and the provider's opaque blocks in arrival
    order as llm's ReplyBuilder folds them. The text is put in front when the
    stream has ended and what a small model wrote as a call is taken out of
    it; the reasoning stays out."""
    builder = ReplyBuilder()
    text_start = len(generation.text)
    if generation.text:
        generation.text += "\n\n"
        text_start = len(generation.text)
    # Time to first token and writing time, for the reply's speed line (apps.chats.speed).
    stream = timed(
        stream_chat(turn.config, system=turn.system, turns=conversation, tools=specs),
        generation.usage,
    )
    async for event in _budgeted(generation, stream):
        builder.feed(event)
        # The builder folds the transcript; the reply's own text and reasoning
        # are what the page shows live, over all of this reply's rounds.
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
        await maybe_save(generation)
    generation.add_usage(builder.usage)
    if builder.stop_reason and generation.usage.get("stop_reason") != "round_limit":
        generation.usage["stop_reason"] = builder.stop_reason
        if builder.stop_reason == "length" and LENGTH_NOTE not in generation.notes:
            generation.notes.append(LENGTH_NOTE)
            generation.touch("notes")
    text = generation.text[text_start:]
    calls = list(builder.calls)
    if not calls and specs:
        # A small model may write its call as text (```json or <tool_call>).
        written, text = calls_in_text(text, {spec.name for spec in specs})
        if written:
            generation.text = generation.text[:text_start] + text
            generation.touch("answer")
            calls = written
            for call in written:
                builder.feed(call)
    if not text.strip() and generation.text.endswith("\n\n"):
        generation.text = generation.text[: text_start - 2]
    return builder.with_text_first(text), calls


async def _budgeted(generation: Generation, stream):
    """The stream's events until the reply passes its own budget (tokens
    written, seconds of writing, over all its rounds) or starts repeating
    itself; then the stream is closed and the reply says why."""
    loop = asyncio.get_running_loop()
    started = _STARTED.setdefault(generation.pk, loop.time())
    async with contextlib.aclosing(stream):
        async for event in stream:
            yield event
            if not isinstance(event, (TextDelta, ReasoningDelta)):
                continue
            written = (len(generation.text) + len(generation.reasoning)) // 4  # ~4 chars a token
            why = ""
            if written > settings.CHAT_REPLY_MAX_TOKENS:
                why = BUDGET_NOTE.format(f"about {settings.CHAT_REPLY_MAX_TOKENS} tokens")
            elif loop.time() - started > settings.CHAT_REPLY_SECONDS:
                why = BUDGET_NOTE.format(f"{settings.CHAT_REPLY_SECONDS} seconds")
            elif isinstance(event, TextDelta) and repeating(generation.text):
                why = REPEAT_NOTE
            if why:
                generation.notes.append(why)
                generation.usage["stop_reason"] = "budget"
                generation.touch("notes")
                return


async def _finish_citations(generation, turn, ctx, conversation, specs, answer_blocks) -> None:
    valid = set(ctx.passages)
    labels = [p.label() for p in ctx.passages.values()]

    def cleaned(text: str) -> str:
        # Without the passage headers and wrapper lines a small model copied:
        # what the person reads, and what is checked for citations.
        return citations.without_labels(text, labels, tools.WRAPPER_LINES)

    # The passages as the model read them (task boxes in words).
    bodies = {n: tools.as_read(p.result.text) for n, p in ctx.passages.items()}
    headed = {n: (ctx.passages[n].label(), body) for n, body in bodies.items()}
    question = turn.question.text if turn.question else ""

    def in_own_words(text: str) -> bool:
        text = cleaned(text)
        return not citations.says_nothing(text) and not copies_without_answering(
            text, question, headed
        )

    if ctx.passages and not in_own_words(_text_of(answer_blocks)):
        # "[1] [3]" and nothing else, or passages copied word for word: the
        # small model named or pasted passages and answered nothing. Asked
        # once for an answer in words.
        numbers_only = citations.says_nothing(cleaned(_text_of(answer_blocks)))
        retried = await _asked_again(
            generation, turn, conversation, ASK_IN_WORDS if numbers_only else ASK_NOT_COPIED,
            in_own_words,
        )  # fmt: skip
        answer_blocks = retried or answer_blocks
    generation.text = cleaned(generation.text)
    if ctx.passages:
        final = cleaned(_text_of(answer_blocks))
        _, used, _ = citations.verify(final, valid)
        stopped = generation.usage.get("stop_reason") == "budget"
        if not used and not refusals.is_refusal(final):
            # The sentences that repeat a passage get its number, by code;
            # the model is asked to cite only when none does.
            attributed, added = attribute(generation.text, bodies)
            if added:
                generation.text = attributed
                generation.usage["attributed_citations"] = len(added)
                generation.notes.append(ATTRIBUTED_NOTE)
                used = added
        if not used and specs and not stopped and not refusals.is_refusal(final):
            # Asked once; the retry replaces the answer only if it now cites
            # in its own words: the real model's retry began with a copied
            # header, whose number had counted as the citation asked for.
            retried = await _asked_again(
                generation, turn, conversation, ASK_TO_CITE,
                lambda text: bool(citations.verify(cleaned(text), valid)[1]),
            )  # fmt: skip
            if retried:
                generation.text = cleaned(generation.text)
    verified, used, invalid = citations.verify(generation.text, valid)
    generation.text = verified
    generation.citations = [ctx.passages[n].citation() for n in used]
    if invalid:
        generation.usage["invalid_citations"] = invalid
        generation.notes.append(citations.removed_note(invalid))
    if ctx.passages and not used and not refusals.is_refusal(generation.text):
        generation.notes.append(UNCITED_NOTE)
    for caveat in ctx.caveats:
        generation.notes.append(caveat)
    generation.touch("answer", "sources", "notes")


async def _asked_again(generation, turn, conversation, ask: str, better) -> list[dict] | None:
    """The model asked once more (`ask`, with no tools): its new answer
    replaces the old one when it calls nothing and `better(text)` holds
    (returned as blocks); otherwise the old answer stays (None)."""
    conversation.append({"role": "user", "blocks": [{"type": "text", "text": ask}]})
    before_text, before_turns = generation.text, list(generation.turns)
    generation.text = ""
    retry_blocks, retry_calls = await _stream(generation, turn, conversation, [])
    if not retry_calls and better(_text_of(retry_blocks)):
        generation.turns = [*before_turns[:-1], {"role": "assistant", "blocks": retry_blocks}]
        return retry_blocks
    generation.text, generation.turns = before_text, before_turns
    return None


def _text_of(blocks: list[dict]) -> str:
    return "".join(b["text"] for b in blocks if b["type"] == "text")
