"""The tools an agent chat's model gets: a shell command and file reads,
writes and listings on the chat's remote machine, over its SSH profile. Each
call opens its own connection (pinned host key, the profile's credentials)
and a fresh shell; paths go over SFTP as paths, never through a shell.
Relative paths and the working directory are taken from the chat's project
directory. Whether a call runs now, waits for the person or is refused is the
approval policy's decision (apps.agents.policy), made before any call runs."""

from __future__ import annotations

import posixpath

from asgiref.sync import async_to_sync

from apps.agents import ssh
from apps.agents.access import refusal_for_session
from apps.agents.errors import CommandTimeout, SSHError
from apps.agents.models import AgentSession
from apps.agents.services import profile_target
from apps.chats.tools import Tool, ToolError, TurnContext, register, tool_spec

MAX_TIMEOUT = 600.0
# A command longer than this is refused before any card shows it: nobody can
# review it, and a real task that long belongs in a script (file_write, then run it).
MAX_COMMAND_CHARS = 100_000
PLAN_NOTE = "Plan recorded. The person will read it; nothing was run or changed."


def session_of(ctx: TurnContext) -> AgentSession | None:
    """The chat's agent session, looked up once per turn."""
    if "agent_session" not in ctx.extras:
        ctx.extras["agent_session"] = (
            AgentSession.objects.select_related("profile").filter(chat_id=ctx.chat.pk).first()
        )
    return ctx.extras["agent_session"]


def in_agent_chat(ctx: TurnContext) -> bool:
    return session_of(ctx) is not None


def remote_path(session: AgentSession, path: str | None) -> str:
    """A path as the remote machine sees it: relative ones under the project."""
    path = str(path or ".").strip() or "."
    return posixpath.normpath(posixpath.join(session.project_dir, path))


def outside_project(session: AgentSession, path: str | None) -> bool:
    resolved = remote_path(session, path)
    root = posixpath.normpath(session.project_dir)
    return not (resolved == root or resolved.startswith(root.rstrip("/") + "/"))


def _target(ctx: TurnContext) -> ssh.Target:
    """Where this call connects, re-checked now (apps.agents.access): the
    session and profile are read fresh, not from the turn's start, so a
    permission or a share taken away since then stops the call here, before
    anything is sent over SSH."""
    session = (
        AgentSession.objects.select_related("profile", "chat__owner")
        .filter(chat_id=ctx.chat.pk)
        .first()
    )
    refusal = refusal_for_session(session) if session is not None else "this chat is gone"
    if refusal:
        raise ToolError(refusal)
    return profile_target(session.profile)


def _text(args: dict, name: str, *, required: bool = True) -> str:
    value = args.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ToolError(f"{name} must be a non-empty string")
    return value


async def _with_connection(target: ssh.Target, work):
    async with await ssh.connect(target) as conn:
        return await work(conn)


def _remote(ctx: TurnContext, work):
    """Run `work(conn)` over a fresh connection; SSH failures become a message
    the model (and the person, in the activity list) can read."""
    try:
        return async_to_sync(_with_connection)(_target(ctx), work)
    except CommandTimeout as exc:
        return _command_text(exc.partial, note=str(exc))
    except SSHError as exc:
        raise ToolError(str(exc)) from None


def _command_text(result: ssh.CommandResult, *, note: str = "") -> str:
    status = f"exit code {result.exit_code}" if result.exit_code is not None else "killed"
    if result.signal:
        status += f" (signal {result.signal})"
    parts = [note or status]
    for name, text, cut in (
        ("stdout", result.stdout, result.stdout_cut),
        ("stderr", result.stderr, result.stderr_cut),
    ):
        if text or cut:
            tail = f"\n[{cut:,} bytes of {name} were cut]" if cut else ""
            parts.append(f"--- {name} ---\n{text}{tail}")
    return "\n".join(parts)


def shell_run(ctx: TurnContext, args: dict) -> str:
    session = session_of(ctx)
    command = _text(args, "command")
    if len(command) > MAX_COMMAND_CHARS:
        raise ToolError(command_too_long(command))
    cwd = remote_path(session, args.get("cwd"))
    try:
        timeout = min(float(args.get("timeout") or ssh.COMMAND_TIMEOUT), MAX_TIMEOUT)
    except (TypeError, ValueError):
        raise ToolError("timeout must be a number of seconds") from None
    if timeout <= 0:
        raise ToolError("timeout must be a positive number of seconds")

    async def work(conn):
        return _command_text(await ssh.run_command(conn, command, cwd=cwd, timeout=timeout))

    return _remote(ctx, work)


def command_too_long(command: str) -> str:
    return (
        f"the command is {len(command):,} characters; the limit is {MAX_COMMAND_CHARS:,}. "
        "Write a script with file_write and run that instead."
    )


def file_read(ctx: TurnContext, args: dict) -> str:
    path = remote_path(session_of(ctx), _text(args, "path"))

    async def work(conn):
        found = await ssh.file_read(conn, path)
        if found.is_binary:
            return f"{path} is a binary file ({found.size:,} bytes); not shown."
        cut = (
            f"\n[only the first {len(found.data):,} of {found.size:,} bytes]"
            if found.truncated
            else ""
        )
        return f"{path} ({found.size:,} bytes):\n{found.text}{cut}"

    return _remote(ctx, work)


def file_write(ctx: TurnContext, args: dict) -> str:
    path = remote_path(session_of(ctx), _text(args, "path"))
    content = _text(args, "content", required=False)
    keep_backup = bool(args.get("keep_backup"))

    async def work(conn):
        written = await ssh.file_write(conn, path, content, keep_backup=keep_backup)
        verb = "Created" if written.created else "Replaced"
        backup = f"; the old bytes are in {written.backup_path}" if written.backup_path else ""
        return f"{verb} {written.path} ({written.size:,} bytes){backup}."

    return _remote(ctx, work)


def file_list(ctx: TurnContext, args: dict) -> str:
    path = remote_path(session_of(ctx), args.get("path"))

    async def work(conn):
        listing = await ssh.file_list(conn, path)
        lines = [
            f"{e.name}{'/' if e.kind == 'dir' else ''}"
            + (f"  {e.size:,} bytes" if e.kind == "file" and e.size is not None else "")
            for e in listing.entries
        ]
        more = "\n[more entries not shown]" if listing.truncated else ""
        return f"{listing.path}:\n" + ("\n".join(lines) or "(empty)") + more

    return _remote(ctx, work)


def submit_plan(ctx: TurnContext, args: dict) -> str:
    _text(args, "plan")
    return PLAN_NOTE


READS = ("file_read", "file_list")
WRITES = ("file_write", "shell_run")


def register_all() -> None:
    path = {"type": "string", "description": "relative to the project directory, or absolute"}
    for spec, run in (
        (
            tool_spec(
                "shell_run",
                "Run a shell command on the project's machine (a fresh bash each call; "
                "give cwd rather than relying on cd). Returns the exit code and output.",
                {"command": {"type": "string"}, "cwd": path, "timeout": {"type": "number"}},
                ["command"],
            ),
            shell_run,
        ),
        (
            tool_spec(
                "file_read", "Read a text file on the project's machine.", {"path": path}, ["path"]
            ),
            file_read,
        ),
        (
            tool_spec(
                "file_write",
                "Write a whole text file on the project's machine (created or replaced). "
                "keep_backup keeps the old bytes as <path>.jarvis-bak.",
                {"path": path, "content": {"type": "string"}, "keep_backup": {"type": "boolean"}},
                ["path", "content"],
            ),
            file_write,
        ),
        (
            tool_spec("file_list", "List a directory on the project's machine.", {"path": path}),
            file_list,
        ),
        (
            tool_spec(
                "submit_plan",
                "Submit your plan to the person (in Plan mode, instead of running anything).",
                {"plan": {"type": "string"}},
                ["plan"],
            ),
            submit_plan,
        ),
    ):
        register(Tool(spec, run, offered=in_agent_chat))
