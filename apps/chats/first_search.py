"""Retrieval first: Jarvis searches the notes itself before the model's first
round, so a model that never calls a tool (small local models often don't,
and some have no tool support at all) still answers from the notes.

The search is the one `search()` every tool uses, run as the asking person:
their visibility, the model's cloud routing (a cloud model gets cloud-allowed
passages only, and the hold-back rule decides the fixed refusal), the time
mode classified from the question (`auto`), and the chat's @-mentions and
attachments as its scope. Only passages past the relevance floor are handed
over, numbered for citation with the same labels as the search tool's
results, as retrieved data before the question in this request (the stored
question is unchanged). Skipped in an agent chat, when the person's
library is empty, and for a message that is clearly not about the notes
(`not_about_notes`: a greeting, thanks, an acknowledgement, or arithmetic).
"""

from __future__ import annotations

import re

from django.conf import settings

from apps.chats.tools import TurnContext
from apps.chats.tools.context import wrap
from apps.chats.tools.library import passages_for
from apps.chats.tools.projects import records_for_passages
from apps.library.selectors import visible_to

# Passages handed over before the first round: at most this many, the
# characters kept of each, and of all together. Prompt processing on a home
# server's CPU is ~15-70 tokens/s, so the first request must stay short (the
# model can read more with its tools); a budget over all of them, not a
# count, lets a note's short sections (a list, a table row) in beside a long
# one instead of leaving the sixth short answer out.
FIRST_PASSAGES = 8
FIRST_PASSAGE_CHARS = 1200
FIRST_BUDGET_CHARS = 4800
# After a context-overflow error from the server: the retry's budget.
SHRUNK_PASSAGES, SHRUNK_PASSAGE_CHARS, SHRUNK_BUDGET_CHARS = 3, 500, 1500

HEAD = (
    "Jarvis searched the notes for the question below before you answered. These "
    "passages are what it found; cite the ones you use by their number, like [1]."
)
# What the time mode asks of the answer, said beside the passages: a small
# model told only "prefer the latest version" answered "how did X change?"
# with the latest value alone.
MODE_HINTS = {
    "history": (
        "The question asks how something changed: the passages are in date order, "
        "oldest first. Give each value they show, in that order, with its date."
    ),
}
RECORDS = "The project registry's records for the projects these passages are about:"
NOTHING = "Jarvis searched the notes for the question below and found nothing relevant."
# What the passages lead into: the person's question, last in the message.
QUESTION_LEAD = "Question:"

_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening|night)|thanks?(?: you)?(?: so much)?"
    r"|thank you(?: very much)?|cheers|ok(?:ay)?|great|perfect|cool|nice|bye|goodbye"
    r"|see you|yes|no|sure|got it|sounds good)"
    r"(?:[\s,]+(?:jarvis|there|again|a lot|very much))*[\s!.?]*$",
    re.I,
)
_ARITHMETIC = re.compile(r"^[\s\d.,+\-*/\u00d7\u00f7^()=%?]+$")


def not_about_notes(question: str) -> bool:
    """A message clearly not about the notes: small talk or bare arithmetic.
    Everything else is searched: the floor, not a guess, decides relevance."""
    text = question.strip()
    return not text or bool(_SMALL_TALK.match(text)) or bool(_ARITHMETIC.match(text))


def should_search(ctx: TurnContext, question: str) -> bool:
    if not settings.CHAT_FIRST_SEARCH or ctx.chat.is_agent or not_about_notes(question):
        return False
    return visible_to(ctx.user).exists()


def first_search(ctx: TurnContext, question: str, *, shrunk: bool = False) -> str | None:
    """The text block handed to the model with the question, or None when
    the first search is skipped. PrivacyStop propagates (a cloud model whose
    only relevant matches are local-only: the fixed refusal)."""
    if not should_search(ctx, question):
        return None
    found = passages_for(
        ctx,
        query=question,
        limit=SHRUNK_PASSAGES if shrunk else FIRST_PASSAGES,
        max_chars=SHRUNK_PASSAGE_CHARS if shrunk else FIRST_PASSAGE_CHARS,
        budget=SHRUNK_BUDGET_CHARS if shrunk else FIRST_BUDGET_CHARS,
    )
    ctx.extras["first_search"] = {
        "passages": [p.n for p in found.passages],
        "mode": found.mode,
    }
    if not found.passages:
        return NOTHING
    head = " ".join(filter(None, (HEAD, MODE_HINTS.get(found.mode))))
    records = records_for_passages(ctx, found.passages)
    if records:
        return f"{head}\n\n{found.text}\n\n{RECORDS}\n{wrap(records)}"
    return f"{head}\n\n{found.text}"


_OVERFLOW = re.compile(
    r"context (?:length|size|window)|exceeds? the (?:available )?context|too many tokens"
    r"|maximum context|context_length_exceeded|prompt is too long",
    re.I,
)


def is_context_overflow(error) -> bool:
    """A server's "the request is longer than my context" (llama.cpp's
    exceed_context_size_error, OpenAI's context_length_exceeded, vLLM's
    maximum context length, Anthropic's prompt is too long)."""
    return getattr(error, "status", None) in (400, 413) and bool(
        _OVERFLOW.search(getattr(error, "message", "") or "")
    )
