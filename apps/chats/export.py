"""A chat as Markdown: the branch shown, each answer with its sources.

The copy button of a reply copies `reply_markdown` (the answer as the model
wrote it, plus its sources so the [n] still point somewhere); the export of
a chat (`chat_markdown`) is the whole conversation the person sees, with
the same sources under each answer. Citations name the document, its path
and date, and say when a newer version exists; no links (the file is read
outside Jarvis).
"""

from __future__ import annotations

import re

from django.utils import timezone
from django.utils.text import slugify

from apps.chats import tree
from apps.chats.models import Chat, Message


def sources_markdown(citations: list[dict]) -> str:
    lines = []
    for c in citations:
        line = f"[{c['n']}] {c.get('title') or 'Untitled'} — {c.get('path', '')}"
        line += f" · {c.get('date') or 'undated'}"
        if not c.get("is_latest", True):
            newer = c.get("superseded_by") or "a newer version"
            line += f" (older version; superseded by {newer})"
        lines.append(line)
    return "\n".join(f"- {line}" for line in lines)


def reply_markdown(text: str, citations: list[dict]) -> str:
    """An answer's Markdown, with its sources after it when it cites any."""
    text = (text or "").strip()
    if not citations:
        return text
    return f"{text}\n\nSources:\n\n{sources_markdown(citations)}"


def chat_markdown(chat: Chat) -> str:
    """The conversation shown, as one Markdown document."""
    _, messages = tree.shown(chat)
    title = chat.title or f"Chat {chat.pk}"
    exported = timezone.localtime().strftime("%Y-%m-%d %H:%M")
    parts = [f"# {_one_line(title)}", f"Exported from Jarvis on {exported}."]
    for message in messages:
        if message.role == Message.Role.USER:
            attached = [m.get("label", "") for m in message.mentions or [] if m.get("attachment")]
            line = f"\n\nAttached: {', '.join(_one_line(a) for a in attached)}" if attached else ""
            parts.append(f"## You\n\n{message.text.strip()}{line}")
            continue
        head = "## Jarvis" + (f" ({message.model_label})" if message.model_label else "")
        body = reply_markdown(message.text, message.citations) or "*(no answer)*"
        notes = "\n".join(f"> {note}" for note in message.notes)
        calls = activity_markdown(message.activity or [])
        parts.append("\n\n".join(p for p in (head, calls, body, notes) if p))
    return "\n\n".join(parts) + "\n"


STATES = {"ok": "done", "error": "failed", "refuse": "not run", "denied": "denied"}


def activity_markdown(activity: list[dict]) -> str:
    """What the reply did before answering: an agent's commands and file
    changes, whole, each with its outcome and output. (Library searches are
    the model's reading, not the person's record; the sources list covers them.)"""
    blocks = []
    for entry in activity:
        state = STATES.get(entry.get("state", ""), entry.get("state", ""))
        details = entry.get("details")
        if not details:
            continue
        what = details.get("label", entry.get("name", ""))
        block = [
            f"**{what}** — {state}" + (f", {entry['seconds']} s" if "seconds" in entry else "")
        ]
        if details.get("command"):
            block.append(_fenced(details["command"]["text"], "sh"))
            block.append(f"in `{details.get('cwd', '')}`")
        if details.get("path"):
            block.append(f"File: `{details['path']}`")
        if details.get("plan"):
            block.append(_fenced(details["plan"]["text"]))
        if entry.get("state") == "refuse":
            block.append(details.get("not_run") or entry.get("reason", ""))
        elif entry.get("result"):
            cut = entry.get("result_cut")
            block.append("Output:\n\n" + _fenced(entry["result"]))
            if cut:
                block.append(f"({cut:,} more characters not kept)")
        blocks.append("\n\n".join(b for b in block if b))
    return "\n\n".join(blocks)


def _fenced(text: str, lang: str = "") -> str:
    """A fenced block that `text` cannot close early (a longer fence than any run inside)."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def export_filename(chat: Chat) -> str:
    return f"{slugify(chat.title)[:60] or 'chat'}-{chat.pk}.md"


def _one_line(text: str) -> str:
    return " ".join(text.split())
