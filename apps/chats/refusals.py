"""Search before refusing: code's rule, not the prompt's.

A small model often answers "I don't know" without looking. When a reply
says so in a turn where no search tool ran, the runner sends it back once
with a follow-up asking it to search first (the hook is in
apps.chats.runner._tool_loop; the decision and the follow-up are here)."""

from __future__ import annotations

import re

# The tools that look something up; a refusal after any of them stands.
SEARCH_TOOLS = frozenset(
    {
        "search_notes",
        "get_document",
        "list_documents",
        "search_chat_history",
        "list_projects",
        "get_project_status",
    }
)

SEARCH_FIRST = (
    "You answered without searching. Search the notes first with search_notes (use the key "
    "words of the question; try another wording if nothing matches), then answer from what "
    "you find, citing the passages. Say you do not know only if the search finds nothing."
)

_REFUSAL = re.compile(
    r"\b("
    r"i (?:really )?(?:do not|don't|dont) know"
    r"|i(?:'m| am) not (?:sure|aware)"
    r"|i (?:do not|don't|dont) have (?:that|this|any|enough|the) (?:information|details|data)"
    r"|i (?:do not|don't|dont) have (?:information|details|access)"
    r"|i (?:could not|couldn't|cannot|can't|can not|was unable to|am unable to) (?:find|locate|see)"
    r"|(?:there is|there's|i have) no (?:information|record|mention|data)"
    r"|(?:not|isn't|is not) (?:mentioned|stated|recorded|found) in (?:your|the|my) notes"
    r"|(?:your|the|my) notes (?:do not|don't) (?:say|mention|contain|include)"
    r"|no (?:relevant )?(?:information|notes) (?:about|on|regarding)"
    r")",
    re.I,
)


def is_refusal(text: str) -> bool:
    """Does the reply say it does not know (or has no information)?"""
    return bool(_REFUSAL.search(text.replace("’", "'")))


# What a look-up that found nothing says (search_notes, list_documents,
# search_chat_history, the project tools, possibly inside <retrieved_data>).
_EMPTY = re.compile(
    r"^(?:<retrieved_data>\s*)?(?:Ignored filters[^\n]*?\.\s*)?"
    r"No (?:passages match|documents match|earlier conversation matches|project called"
    r"|(?:\w+ )?projects in the registry)",
)


def found_something(entry: dict) -> bool:
    """A look-up in the reply's activity that returned something: an error, an
    empty or negative result (or a first search with nothing relevant) is
    "no search yet", so a refusal after it is still sent back once."""
    if entry.get("first"):
        return bool(entry.get("found"))
    if entry.get("state") != "ok":
        return False
    return not _EMPTY.match(str(entry.get("result") or ""))


def searched(activity) -> bool:
    return any(entry["name"] in SEARCH_TOOLS and found_something(entry) for entry in activity)


def refused_unsearched(generation, specs) -> bool:
    """The reply just streamed (`generation.turns[-1]`) says it does not know,
    no search tool ran in this turn, and one was offered."""
    offered = {spec.name for spec in specs}
    blocks = generation.turns[-1]["blocks"] if generation.turns else []
    text = "".join(b["text"] for b in blocks if b["type"] == "text")
    return bool(offered & SEARCH_TOOLS) and not searched(generation.activity) and is_refusal(text)


def ask_to_search(generation, conversation: list[dict], text_before: str) -> None:
    """Send the refusal back with one follow-up asking for a search first. The
    refusal stays in this request, not in the reply or the stored transcript."""
    conversation.append({"role": "user", "blocks": [{"type": "text", "text": SEARCH_FIRST}]})
    generation.turns.pop()
    generation.text = text_before
    generation.usage["asked_to_search"] = True
    generation.status_line = "Searching your notes…"
    generation.touch("answer", "status")
