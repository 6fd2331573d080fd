"""The `ask_user` tool: the model asks the person questions mid-reply.

The loop, not the tool, does the work: before a round runs, every valid
`ask_user` call of it (one call may carry several questions, and a round
may hold several calls) becomes one question card for the whole round
(PendingAction kind "ask_user"); the reply waits on it like on an approval
card (apps.chats.approvals: status "waiting", which survives a restart and
a reload). The person's answers are written to the card; the reply then
goes on and each call's result is the answers to its own questions, all in
the same tool turn. Stop closes the card unanswered. Questions are free
text, or one choice among the options the model gave; an answer is checked
against them here, never trusted from the form.
"""

from __future__ import annotations

import json

from django.db import transaction
from django.shortcuts import get_object_or_404

from apps.chats.approvals import Decision, Verdict
from apps.chats.models import Message, PendingAction
from apps.chats.selectors import chats_for
from apps.chats.tools.context import ToolError, TurnContext
from apps.chats.tools.registry import TOOLS, Tool, register, tool_spec
from apps.core.errors import Conflict, Refused

NAME = "ask_user"
# One card stays readable on a phone: a handful of short questions.
MAX_QUESTIONS = 8
QUESTION_CHARS = 500
MAX_CHOICES = 10
CHOICE_CHARS = 200
ANSWER_CHARS = 2000
NO_ANSWER = "(no answer)"
# A call that needs approval, in a round that also asks questions: one card per
# round, so it does not wait on a second one; the model calls it again if the
# answers still call for it.
AFTER_QUESTIONS = (
    "it was not run because this round asked the person questions first; call it again "
    "once you have their answers, if it is still needed"
)


class AlreadyAnswered(Conflict):
    """A second answer to a card (two tabs, a double click): the first stands."""


def parse_questions(args: dict) -> list[dict]:
    """The questions of one call as [{"text", "choices"}], or ToolError saying
    what to fix. Accepts {"questions": [...]} and, for small models, a single
    {"question": ..., "choices": [...]}; a question may be a plain string."""
    raw = args.get("questions")
    if raw is None and "question" in args:
        raw = [{"question": args.get("question"), "choices": args.get("choices")}]
    if not isinstance(raw, list) or not raw:
        raise ToolError('ask_user needs "questions": a list of {"question", "choices"} objects.')
    if len(raw) > MAX_QUESTIONS:
        raise ToolError(f"Ask at most {MAX_QUESTIONS} questions at once.")
    questions = []
    for number, item in enumerate(raw, start=1):
        if isinstance(item, str):
            item = {"question": item}
        if not isinstance(item, dict):
            raise ToolError(f"Question {number} must be an object with a 'question' text.")
        text = str(item.get("question") or item.get("text") or "").strip()
        if not text:
            raise ToolError(f"Question {number} has no text.")
        if len(text) > QUESTION_CHARS:
            raise ToolError(f"Question {number} is longer than {QUESTION_CHARS} characters.")
        questions.append({"text": text, "choices": _choices(item.get("choices"), number)})
    return questions


def _choices(raw, number: int) -> list[str]:
    if raw in (None, "", []):
        return []
    if not isinstance(raw, list):
        raise ToolError(f"Question {number}: 'choices' must be a list of short texts.")
    choices = []
    for choice in raw:
        # One line, as a form posts it back: a newline inside would come back
        # as CRLF and no longer match.
        text = " ".join(
            str(choice if not isinstance(choice, dict) else choice.get("label", "")).split()
        )
        if not text or len(text) > CHOICE_CHARS:
            raise ToolError(
                f"Question {number}: each choice must be a text of 1 to {CHOICE_CHARS} characters."
            )
        if text not in choices:
            choices.append(text)
    if len(choices) > MAX_CHOICES:
        raise ToolError(f"Question {number}: offer at most {MAX_CHOICES} choices.")
    if len(choices) == 1:
        raise ToolError(f"Question {number}: offer two choices or more, or none for free text.")
    return choices


def _arguments(text: str) -> dict:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"The arguments are not valid JSON ({exc.msg}); send a JSON object."
        ) from None
    if not isinstance(value, dict):
        raise ToolError("The arguments must be a JSON object.")
    return value


def round_questions(
    ctx: TurnContext, calls, decisions: list[Decision]
) -> tuple[list[Decision], list[dict]]:
    """The round's decisions with its `ask_user` calls turned into questions,
    and the card's questions ([] when the round asks none). A malformed call
    is refused with what to fix (the model reads it and can ask again); a
    call the policy refused stays refused; a call that would wait for approval
    is not run (AFTER_QUESTIONS): one card per round."""
    tool = TOOLS.get(NAME)
    limited = ctx.only_tools is not None and NAME not in ctx.only_tools
    if tool is None or limited or not tool.offered(ctx):
        return decisions, []  # not offered here: run_tool says so
    decided, questions = list(decisions), []
    for index, call in enumerate(calls):
        if call.name != NAME or decided[index].verdict == Verdict.REFUSE:
            continue
        try:
            asked = parse_questions(_arguments(call.arguments))
            if len(questions) + len(asked) > MAX_QUESTIONS:
                raise ToolError(f"Ask at most {MAX_QUESTIONS} questions at once (in one round).")
        except ToolError as exc:
            decided[index] = Decision(Verdict.REFUSE, str(exc))
            continue
        for question in asked:
            key = f"q{len(questions) + 1}"
            questions.append({"key": key, "call_id": call.id, **question})
        decided[index] = Decision(Verdict.QUESTION)
    if questions:
        decided = [
            Decision(Verdict.REFUSE, AFTER_QUESTIONS, d.note, d.details)
            if d.verdict == Verdict.ASK
            else d
            for d in decided
        ]
    return decided, questions


def ask_card_for(user, pk: int) -> PendingAction:
    """The person's question card `pk` (another person's, or none: 404)."""
    return get_object_or_404(
        PendingAction.objects.select_related("message__chat").filter(
            message__chat__in=chats_for(user=user), kind=PendingAction.Kind.ASK_USER
        ),
        pk=pk,
    )


def clean_answers(action: PendingAction, posted) -> dict[str, str]:
    """The card's answers from the form (`posted`: a mapping of question key
    to text): a choice must be one the model offered, a free text at most
    ANSWER_CHARS. Refused with the question's number otherwise. An unanswered
    question is NO_ANSWER: the person may skip one."""
    answers = {}
    for number, question in enumerate(action.payload["questions"], start=1):
        value = str(posted.get(question["key"]) or "").strip()
        if question["choices"] and value and value not in question["choices"]:
            raise Refused(f"Question {number}: choose one of the options shown.")
        if len(value) > ANSWER_CHARS:
            raise Refused(f"Question {number}: answer in at most {ANSWER_CHARS} characters.")
        answers[question["key"]] = value or NO_ANSWER
    return answers


def call_results(questions: list[dict], answers: dict[str, str]) -> dict[str, str]:
    """Each call's tool result: the answers to its own questions, in order."""
    by_call: dict[str, list[dict]] = {}
    for question in questions:
        by_call.setdefault(question["call_id"], []).append(
            {"question": question["text"], "answer": answers[question["key"]]}
        )
    return {
        call_id: json.dumps({"answers": pairs}, ensure_ascii=False)
        for call_id, pairs in by_call.items()
    }


def ask_resolve(*, user, action: PendingAction, posted) -> dict[str, str]:
    """The person's answers to a question card: checked (clean_answers),
    written to the card with each call's result, and the reply marked ready
    to go on (the caller resumes it). Returns {question key: answer}.
    AlreadyAnswered when the card is no longer waiting."""
    if action.message.chat.owner_id != user.pk or action.kind != PendingAction.Kind.ASK_USER:
        raise Refused("not your card")
    if action.status != PendingAction.Status.PENDING:
        raise AlreadyAnswered("These questions were already answered.")
    answers = clean_answers(action, posted)
    with transaction.atomic():
        locked = PendingAction.objects.select_for_update().get(pk=action.pk)
        message = Message.objects.select_for_update().get(pk=locked.message_id)
        if locked.status != PendingAction.Status.PENDING or message.status != (
            Message.Status.WAITING
        ):
            raise AlreadyAnswered("These questions were already answered.")
        payload = locked.payload
        questions = [{**q, "answer": answers[q["key"]]} for q in payload["questions"]]
        locked.payload = {
            **payload,
            "questions": questions,
            "answers": answers,
            "results": call_results(payload["questions"], answers),
        }
        locked.status = PendingAction.Status.DONE
        locked.save(update_fields=["payload", "status"])
        message.status = Message.Status.PENDING
        message.save(update_fields=["status"])
    action.refresh_from_db()
    return answers


def with_values(action: PendingAction, posted) -> PendingAction:
    """The card as the person filled it (not saved): shown again with the
    reason when an answer is refused, so nothing typed is lost."""
    questions = [
        {**q, "value": str(posted.get(q["key"]) or "")[: ANSWER_CHARS * 2]}
        for q in action.payload["questions"]
    ]
    action.payload = {**action.payload, "questions": questions}
    return action


def ask_user(ctx: TurnContext, args: dict) -> str:
    # The loop turns a valid call into the round's card before anything runs
    # (round_questions); reaching here means no card could be shown.
    parse_questions(args)
    raise ToolError("ask_user can only be answered on a card in a chat reply.")


register(
    Tool(
        tool_spec(
            NAME,
            "Ask the person one or more questions and wait for their answers before going on. "
            "Use it only when you cannot answer well without something only they know (a "
            "preference, a choice between options, a missing detail). Ask everything you need "
            "in one call: the questions are shown together on one card. A question is free "
            "text, or a choice when you give 'choices'. The result is their answers.",
            {
                "questions": {
                    "type": "array",
                    "description": f"at most {MAX_QUESTIONS} questions",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string", "description": "one short question"},
                            "choices": {
                                "type": "array",
                                "items": {"type": "string"},
                                "description": "the options to choose from; omit for free text",
                            },
                        },
                        "required": ["question"],
                    },
                }
            },
            ["questions"],
        ),
        ask_user,
    )
)
