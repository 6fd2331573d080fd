"""Which tool calls wait for the person, decided by the loop, never the prompt.

A normal chat runs every call. An app above chats (agents) registers a policy
provider from its `registrations` module: given a chat it returns that chat's
policy, or None. Before any call of a round runs, the loop asks the policy
about each: RUN, REFUSE (the model is told why, nothing runs) or ASK. If any
call is ASK, one approval card lists the round's calls with their arguments,
the reply waits (status "waiting", which survives a restart), and the turn
goes on when the person answers: approved calls run, denied ones reach the
model as "denied by the person". Stop answers a waiting card as denied.

The same waiting carries the model's questions (apps.chats.tools.ask): a
round with `ask_user` calls waits on one question card instead, and on
resume each of those calls is "answered" with the person's answers as its
result. Stop closes that card unanswered.

An app above chats may also hold a call of its own tool for the person's
consent (`hold_register`: a private chat's web search shows its query
first). A held call is an ASK that waits on that app's card kind instead of
the approval card: yes runs the call as the model made it, no gives the
model the hold's own "declined" text. One card per round: a round whose
held calls are all of one kind waits on that kind's card; mixed with calls
the chat's policy asks about, they all go on the approval card.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from django.db import transaction

from apps.chats.models import Chat, Message, PendingAction
from apps.core.errors import Refused
from apps.llm import ToolCall

DENIED = "Denied by the person: this call did not run. Do not retry it unless they ask."
STOPPED_NOTE = "Stopped: the calls waiting for approval were denied."
ASK_STOPPED_NOTE = "Stopped: the questions were not answered."
WEB_STOPPED_NOTE = "Stopped: the web search was not sent."
# Cards whose waiting calls the person answers yes or no, each round's calls on it.
APPROVAL_KINDS = (PendingAction.Kind.APPROVE_TOOLS, PendingAction.Kind.WEB_SEARCH)
# The cards a reply can wait on; the newest one answered carries the round on.
WAITING_KINDS = (*APPROVAL_KINDS, PendingAction.Kind.ASK_USER)
STOPPED_NOTES = {
    PendingAction.Kind.APPROVE_TOOLS: STOPPED_NOTE,
    PendingAction.Kind.WEB_SEARCH: WEB_STOPPED_NOTE,
}
# Set in TurnContext.extras while a call the person approved on a card runs
# (and only then): a tool that needs consent (web_search in a private chat)
# reads it, so it never acts on the model's say-so alone.
APPROVED = "approved_by_person"


class Verdict(StrEnum):
    RUN = "run"
    ASK = "ask"
    REFUSE = "refuse"
    DENIED = "denied"  # asked, and the person said no
    QUESTION = "question"  # an ask_user call: the round waits on the question card
    ANSWERED = "answered"  # the person answered it: `result` is the tool result


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str = ""  # why a call is refused, for the model
    note: str = ""  # what the person should notice on the card ("outside the project folder")
    # What the card and the activity list show of the call (the policy's words:
    # the tool, the whole command, the file and its change); {} shows the raw call.
    details: dict = field(default_factory=dict)
    result: str = ""  # ANSWERED: what the call returns (the person's answers)
    # A held call (hold_register): the card it waits on, {"kind": PendingAction
    # kind, "denied": what the model reads on a no, ...what that card shows}.
    hold: dict = field(default_factory=dict)
    approved: bool = False  # RUN because the person said yes on a card


class AlreadyAnswered(Refused):
    """A second answer to an approval card (two tabs, a double click): the
    first stands."""


class UnknownCall(Refused):
    """An answer names a call that does not wait on this card (another chat's,
    or made up): for the person it does not exist."""


class Policy(Protocol):
    mode: str  # shown on the chat and in `manage.py chat --json`

    def decide(self, name: str, arguments: dict) -> Decision: ...

    def recheck(self, name: str, arguments: dict) -> str:
        """Just before a call runs: why it must not run now ('' when it may)."""

    def refusal(self) -> str:
        """Why nothing may run in this chat now ('' when things may)."""

    def approve_all(self) -> None:
        """From now on, run every call of this chat without asking."""


PROVIDERS: list[Callable[[Chat], Policy | None]] = []
# Tool name -> check(ctx, arguments) -> a held Decision, or None to let it run.
HOLDS: dict[str, Callable[..., Decision | None]] = {}


def policy_provider_register(provider: Callable[[Chat], Policy | None]) -> None:
    if provider not in PROVIDERS:
        PROVIDERS.append(provider)


def hold_register(name: str, check: Callable[..., Decision | None]) -> None:
    """From an app's `registrations`: calls of tool `name` are shown to the
    person first when `check(ctx, arguments)` returns a Decision (Verdict.ASK,
    with its `hold`); None lets the call run as decided."""
    HOLDS[name] = check


def holds_apply(ctx, calls, decisions: list[Decision]) -> list[Decision]:
    """The round's decisions with the held calls (HOLDS) turned into ASKs on
    their app's card. Only calls that would run are held: one refused stays
    refused, one the policy already asks about is shown on the approval card."""
    decided = list(decisions)
    for index, call in enumerate(calls):
        check = HOLDS.get(call.name)
        if check is None or decided[index].verdict != Verdict.RUN:
            continue
        held = check(ctx, _arguments(call.arguments))
        if held is not None:
            decided[index] = held
    return decided


def card_kind(decisions: list[Decision]) -> str:
    """The card a round that asks waits on: a held kind when every asked call
    is held for that kind, the approval card otherwise."""
    kinds = {d.hold.get("kind") for d in decisions if d.verdict == Verdict.ASK}
    if len(kinds) == 1 and None not in kinds:
        return kinds.pop()
    return PendingAction.Kind.APPROVE_TOOLS


def policy_for(chat: Chat) -> Policy | None:
    for provider in PROVIDERS:
        policy = provider(chat)
        if policy is not None:
            return policy
    return None


def policy_refusal(chat: Chat) -> str:
    """Why a turn of `chat` must not start now ('' when it may, or when the
    chat has no policy)."""
    policy = policy_for(chat)
    return policy.refusal() if policy is not None else ""


def refusal_before_run(chat: Chat, call: ToolCall) -> str:
    """Checked by the loop just before each call runs, whatever was decided
    or approved before: why it must not run now, or ''."""
    policy = policy_for(chat)
    return policy.recheck(call.name, _arguments(call.arguments)) if policy is not None else ""


def _arguments(text: str) -> dict:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def decide(chat: Chat, calls) -> list[Decision]:
    """The verdict on each call of a round, in order."""
    policy = policy_for(chat)
    if policy is None:
        return [Decision(Verdict.RUN) for _ in calls]
    return [policy.decide(call.name, _arguments(call.arguments)) for call in calls]


def card_payload(calls, decisions: list[Decision], context: dict) -> dict:
    return {
        "calls": [
            {
                "id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "verdict": str(decision.verdict),
                "reason": decision.reason,
                "note": decision.note,
                "details": decision.details,
                **({"hold": decision.hold} if decision.hold else {}),
            }
            for call, decision in zip(calls, decisions, strict=True)
        ],
        "answers": {},
        "context": context,
    }


def waiting_card(message: Message) -> PendingAction | None:
    return (
        message.actions.filter(
            kind=PendingAction.Kind.APPROVE_TOOLS, status=PendingAction.Status.PENDING
        )
        .order_by("-pk")
        .first()
    )


def answered_card(message_id: int) -> PendingAction:
    """The card of `message_id` (approval or questions) the person answered last."""
    return (
        PendingAction.objects.filter(
            message_id=message_id,
            kind__in=WAITING_KINDS,
            status=PendingAction.Status.DONE,
        )
        .order_by("-pk")
        .first()
    )


def answered_round(card: PendingAction) -> tuple[list[ToolCall], list[Decision]]:
    """The card's calls as the model made them, with what now happens to each:
    asked calls run if approved and are denied otherwise; questions are
    answered with the person's answers; the rest keep the verdict they had
    (run, or refused with its reason)."""
    calls, decisions = [], []
    results = card.payload.get("results", {})
    for saved in card.payload["calls"]:
        calls.append(ToolCall(saved["id"], saved["name"], saved["arguments"]))
        verdict, result, reason = Verdict(saved["verdict"]), "", saved["reason"]
        approved = False
        if verdict == Verdict.ASK:
            approved = bool(card.payload["answers"].get(saved["id"], False))
            verdict = Verdict.RUN if approved else Verdict.DENIED
            if not approved:
                # A held call's no reads in its app's words ("the person declined").
                reason = (saved.get("hold") or {}).get("denied", "") or reason
        elif verdict == Verdict.QUESTION:
            verdict, result = Verdict.ANSWERED, results.get(saved["id"], "")
        decisions.append(
            Decision(
                verdict,
                reason,
                saved["note"],
                saved.get("details") or {},
                result,
                approved=approved,
            )
        )
    return calls, decisions


def _answered(payload: dict, answers: dict[str, bool]) -> dict:
    calls = [
        {**c, "answer": "approved" if answers[c["id"]] else "denied"} if c["id"] in answers else c
        for c in payload["calls"]
    ]
    return {**payload, "calls": calls, "answers": answers}


def approvals_resolve(
    *,
    user,
    action: PendingAction,
    approve: set[str] | None = None,
    approve_all_for_chat: bool = False,
) -> dict[str, bool]:
    """The person's answer to an approval card (or a held call's card, kind in
    APPROVAL_KINDS): the calls in `approve` run (None: every call the card
    asks about), the others are denied. AlreadyAnswered for a second answer. With
    `approve_all_for_chat` the chat's policy stops asking from now on. Returns
    {call id: approved}. Refused unless the card is the person's and waiting,
    and, when anything is approved, unless the chat may still run things (the
    policy's refusal: an agent chat whose right was taken away); denying is
    always possible. UnknownCall for a call id the card does not ask about."""
    message = action.message
    if message.chat.owner_id != user.pk:
        raise Refused("not your chat")
    if action.kind in APPROVAL_KINDS and action.status != PendingAction.Status.PENDING:
        raise AlreadyAnswered("this card was already answered")
    if action.kind not in APPROVAL_KINDS or message.status != Message.Status.WAITING:
        raise Refused("this card is not waiting for an answer")
    asked = [c["id"] for c in action.payload["calls"] if c["verdict"] == Verdict.ASK]
    wanted = set(asked) if approve is None else set(approve)
    unknown = wanted - set(asked)
    if unknown:
        raise UnknownCall(f"no call {', '.join(sorted(unknown))} waits on this card")
    if wanted or approve_all_for_chat:
        refusal = policy_refusal(message.chat)
        if refusal:
            raise Refused(f"{refusal}. Deny the calls or stop the reply.")
    answers = {call_id: call_id in wanted for call_id in asked}
    with transaction.atomic():
        locked = PendingAction.objects.select_for_update().get(pk=action.pk)
        if locked.status != PendingAction.Status.PENDING:
            raise AlreadyAnswered("this card was already answered")
        locked.payload = _answered(locked.payload, answers)
        locked.status = PendingAction.Status.DONE
        locked.save(update_fields=["payload", "status"])
        Message.objects.filter(pk=message.pk).update(status=Message.Status.PENDING)
    action.refresh_from_db()
    if approve_all_for_chat:
        policy = policy_for(message.chat)
        if policy is not None:
            policy.approve_all()
    return answers


def approvals_stop(*, message: Message) -> bool:
    """Stop on a reply that waits for the person: an approval card (or a
    held call's card) is answered "denied", a question card is closed unanswered, and the reply
    ends. False when the reply was not waiting."""
    with transaction.atomic():
        message = Message.objects.select_for_update().get(pk=message.pk)
        card = (
            message.actions.select_for_update()
            .filter(kind__in=WAITING_KINDS, status=PendingAction.Status.PENDING)
            .order_by("-pk")
            .first()
        )
        if card is None or message.status != Message.Status.WAITING:
            return False
        if card.kind in APPROVAL_KINDS:
            asked = [c["id"] for c in card.payload["calls"] if c["verdict"] == Verdict.ASK]
            card.payload = {
                **_answered(card.payload, dict.fromkeys(asked, False)),
                "stopped": True,
            }
            note = STOPPED_NOTES[card.kind]
        else:
            card.payload = {**card.payload, "stopped": True}
            note = ASK_STOPPED_NOTE
        card.status = PendingAction.Status.DISMISSED
        card.save(update_fields=["payload", "status"])
        message.status = Message.Status.STOPPED
        message.notes = [*message.notes, note]
        message.save(update_fields=["status", "notes"])
    return True
