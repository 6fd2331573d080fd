"""Search before refusing: code's rule, not the prompt's.

A small model often answers "I don't know" without looking. When a reply
says so in a turn where no search tool ran, the runner sends one follow-up
asking it to search first (apps.chats.runner). This module only decides
whether a reply is such a refusal."""

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


def searched(tool_names) -> bool:
    return any(name in SEARCH_TOOLS for name in tool_names)
