"""One round of tool calls: each runs as the person, its result goes back to
the model, and what the calls leave behind (a chat turned private, cards for
the person) is written after the round."""

from __future__ import annotations

import time

from asgiref.sync import sync_to_async

from apps.chats import tools
from apps.chats.approvals import (
    APPROVED,
    DENIED,
    Decision,
    Verdict,
    card_kind,
    card_payload,
    refusal_before_run,
)
from apps.chats.models import Message, PendingAction
from apps.chats.pages import chat_header_frame
from apps.chats.reply import Generation
from apps.chats.services import chat_mark_private
from apps.llm import ToolCall


async def run_calls(
    generation: Generation, turn, ctx, calls: list[ToolCall], decisions: list[Decision]
) -> list[dict] | None:
    """Run the round's calls in order, as the approval policy decided; their
    tool_result blocks, or None when a privacy stop ended the turn (the fixed
    message is then the reply)."""
    generation.status_line = "Working…"
    generation.touch("status")
    results = []
    for call, decision in zip(calls, decisions, strict=True):
        entry = {
            "id": call.id,
            "name": call.name,
            "arguments": call.arguments[:500],
            "state": "running",
        }
        if decision.details:
            entry["details"] = decision.details
        generation.activity.append(entry)
        generation.touch("activity")
        if decision.verdict == Verdict.RUN:
            # Checked again now, whatever was decided or approved before: a
            # right taken away while the call waited stops it here.
            refusal = await sync_to_async(refusal_before_run, thread_sensitive=False)(
                turn.chat, call
            )
            if refusal:
                decision = Decision(Verdict.REFUSE, refusal, decision.note, decision.details)
        started = time.monotonic()
        try:
            if decision.verdict == Verdict.RUN:
                # Only while this call runs: its tool may tell the person's yes
                # on a card from the model's own say-so (apps.chats.approvals).
                ctx.extras[APPROVED] = decision.approved
                try:
                    content, is_error = await sync_to_async(tools.run_tool, thread_sensitive=False)(
                        ctx, call.name, call.arguments
                    )
                finally:
                    ctx.extras.pop(APPROVED, None)
                entry["seconds"] = round(time.monotonic() - started, 2)
            elif decision.verdict == Verdict.DENIED:
                # A held call's no says so in its app's words (decision.reason).
                content, is_error = decision.reason or DENIED, True
            elif decision.verdict == Verdict.ANSWERED:
                # An ask_user call: its result is what the person wrote on the card.
                content, is_error = decision.result, False
            else:
                content, is_error = f"Refused: {decision.reason}", True
        except tools.PrivacyStop as stop:
            entry["state"] = "held back"
            generation.usage["stop_reason"] = "privacy"
            generation.turns = []
            generation.text = str(stop)
            generation.notes.append("No model call was made with these notes.")
            generation.touch("answer", "activity", "notes")
            return None
        entry["state"] = (
            str(decision.verdict)
            if decision.verdict in (Verdict.DENIED, Verdict.REFUSE)
            else ("error" if is_error else "ok")
        )
        entry["result"], entry["result_cut"] = _shown_result(
            content, detailed=bool(decision.details)
        )
        if decision.verdict == Verdict.REFUSE:
            entry["reason"] = decision.reason
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
    await after_tools(generation, turn, ctx)
    return results


# What the activity list keeps of a result: a library search's passages are
# the model's business (a line is enough); a command's output or a file's
# listing is what the person approved and wants to read, so far more of it.
RESULT_CHARS, DETAILED_RESULT_CHARS = 300, 16_000


def _shown_result(content: str, *, detailed: bool) -> tuple[str, int]:
    """The result as kept with the message, and how many characters were cut."""
    limit = DETAILED_RESULT_CHARS if detailed else RESULT_CHARS
    return content[:limit], max(0, len(content) - limit)


async def wait_for_approval(
    generation: Generation,
    ctx,
    calls: list[ToolCall],
    decisions: list[Decision],
    *,
    questions: list[dict] | None = None,
) -> None:
    """Show one card for the round and let the reply wait: nothing of the
    round runs until the person answers (apps.chats.approvals). With
    `questions` it is the round's question card (apps.chats.tools.ask)
    rather than an approval card; a round whose asked calls are all held by
    one app waits on that app's card (a private chat's web search), each
    held call's `hold` under "held". The round rides on it the same way."""
    payload = card_payload(calls, decisions, ctx.state())
    kind = card_kind(decisions)
    if questions:
        kind = PendingAction.Kind.ASK_USER
        payload = {**payload, "questions": questions, "results": {}}
    elif kind != PendingAction.Kind.APPROVE_TOOLS:
        held = [
            {"call_id": call.id, **decision.hold}
            for call, decision in zip(calls, decisions, strict=True)
            if decision.verdict == Verdict.ASK
        ]
        payload = {**payload, "held": held}
    card = await sync_to_async(PendingAction.objects.create, thread_sensitive=False)(
        message_id=generation.pk, kind=kind, payload=payload
    )
    generation.actions.append(card)
    generation.status = Message.Status.WAITING
    generation.status_line = ""
    generation.touch("actions", "status")


async def after_tools(generation, turn, ctx) -> None:
    if ctx.saw_local_only and not turn.chat.private and not turn.cloud:
        await sync_to_async(chat_mark_private, thread_sensitive=False)(chat=turn.chat)
        generation.notes.append(
            "This chat read local-only notes: it is now private and stays on local models."
        )
        # The header's badge and model picker say so now, not after a reload.
        generation.header = await sync_to_async(chat_header_frame, thread_sensitive=False)(
            turn.chat.pk
        )
        generation.touch("notes", "header")
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
