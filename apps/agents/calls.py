"""What a person reads about an agent tool call before and after it runs: the
tool in words, the whole command (never cut), where it runs, the file and,
for a write waiting on a card, the change against the file as it is now.

Everything here is shown, never executed or interpreted: control characters
and terminal escapes a model (or a command's output) sends are spelled out
(`\\x1b[31m`), so what the card shows is exactly what would run.
"""

from __future__ import annotations

import difflib

from asgiref.sync import async_to_sync
from django.urls import reverse

from apps.agents import ssh
from apps.agents.errors import SSHError
from apps.agents.models import AgentSession
from apps.agents.services import profile_target
from apps.agents.tools import outside_project, remote_path
from apps.core.escapes import controls_visible as visible

WORDS = {
    "shell_run": "Run a command",
    "file_write": "Write a file",
    "file_read": "Read a file",
    "file_list": "List a folder",
    "submit_plan": "Submit a plan",
}
# A long command shows its first and last lines; the rest is behind "show all".
HEAD_LINES, TAIL_LINES = 6, 3
DIFF_MAX_LINES = 400
DIFF_TIMEOUT = 10.0


def text_block(text: str) -> dict:
    """A block of text for the card: all of it, and the head and tail a
    collapsed view shows when it runs past HEAD_LINES + TAIL_LINES lines."""
    shown = visible(text)
    lines = shown.split("\n")
    block = {"text": shown, "lines": len(lines), "chars": len(text)}
    if len(lines) > HEAD_LINES + TAIL_LINES:
        block["head"] = "\n".join(lines[:HEAD_LINES])
        block["tail"] = "\n".join(lines[-TAIL_LINES:])
        block["hidden"] = len(lines) - HEAD_LINES - TAIL_LINES
    return block


def call_details(session: AgentSession, name: str, arguments: dict, *, diff: bool) -> dict:
    """The card's (and the activity list's) description of one call. With
    `diff`, a file_write also carries its change against the remote file."""
    details: dict = {"label": WORDS.get(name, name.replace("_", " "))}
    if name == "shell_run":
        details["command"] = text_block(str(arguments.get("command", "")))
        details["cwd"] = remote_path(session, arguments.get("cwd"))
        where = arguments.get("cwd")
    elif name in ("file_read", "file_write", "file_list"):
        details["path"] = visible(remote_path(session, arguments.get("path")))
        where = arguments.get("path")
    elif name == "submit_plan":
        details["plan"] = text_block(str(arguments.get("plan", "")))
        details["plan_url"] = reverse("agents:plan", args=[session.chat_id])
        return details
    else:
        return details
    if where is not None and outside_project(session, str(where)):
        details["outside"] = True
    if name == "file_write":
        content = arguments.get("content")
        content = content if isinstance(content, str) else ""
        details["new_lines"] = len(content.splitlines())
        if diff:
            details.update(_change(session, remote_path(session, arguments.get("path")), content))
    return details


def _change(session: AgentSession, path: str, content: str) -> dict:
    """The write as a unified diff against the file on the machine now, or
    "new file"; what could not be read is said, never guessed."""
    if session.profile is None:
        return {"diff_note": "the current file could not be read (no profile)"}
    try:
        current = async_to_sync(_read)(profile_target(session.profile), path)
    except SSHError as exc:
        if getattr(exc, "reason", "") == "not_found":
            return {"new_file": True}
        return {"diff_note": f"the current file could not be read: {exc}"}
    if current.is_binary:
        return {"diff_note": f"replaces a binary file of {current.size:,} bytes"}
    lines = list(
        difflib.unified_diff(
            current.text.splitlines(),
            content.splitlines(),
            fromfile=f"{path} (now)",
            tofile=f"{path} (after)",
            lineterm="",
        )
    )
    note = ""
    if current.truncated:
        note = f"only the first {len(current.data):,} of {current.size:,} bytes were compared"
    if len(lines) > DIFF_MAX_LINES:
        note = f"the first {DIFF_MAX_LINES} of {len(lines):,} diff lines are shown"
        lines = lines[:DIFF_MAX_LINES]
    if not lines:
        return {"diff": "", "diff_note": "no change: the file already holds exactly this"}
    return {"diff": visible("\n".join(lines)), "diff_note": note}


async def _read(target: ssh.Target, path: str) -> ssh.RemoteFile:
    async with await ssh.connect(target, connect_timeout=DIFF_TIMEOUT) as conn:
        return await ssh.file_read(conn, path)
