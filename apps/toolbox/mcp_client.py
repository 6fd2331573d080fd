"""Talking to a remote MCP server with the official SDK's client: list its
tools, call one. One connection per request (a stdio server is started for
it and stopped after), all of it inside the server's timeout, so a server
that never answers costs at most `timeout_seconds` and its process is ended.

Synchronous on purpose: the chat loop runs tools in a worker thread
(`sync_to_async(thread_sensitive=False)`), which has no event loop, so each
request runs its own with `anyio.run`. The bearer token goes only into the
Authorization header; no message or log line here carries it.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from apps.core.crypto import SecretUndecryptable
from apps.toolbox.models import McpServer

if TYPE_CHECKING:
    from mcp import Client

logger = logging.getLogger(__name__)

# A tools/list that never ends (a cursor that always comes back) stops here.
MAX_PAGES = 20
# What a chat keeps of a result; more is cut and the model told so.
MAX_RESULT_CHARS = 20_000


class McpFailure(Exception):
    """A request that did not succeed; the message is safe to show (no token)."""


@dataclass(frozen=True)
class ListedTool:
    name: str
    description: str
    input_schema: Any


@dataclass(frozen=True)
class CallOutcome:
    text: str
    is_error: bool


def _stderr_tail(errlog) -> str:
    try:
        errlog.seek(0)
        text = errlog.read()[-500:].strip()
    except (OSError, ValueError):
        return ""
    return f" (its output ended: {text})" if text else ""


def _describe(exc: BaseException) -> str:
    # anyio's task groups wrap what failed; the innermost error says what happened.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, httpx2.ConnectError):
        return "could not connect"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, FileNotFoundError | PermissionError):
        return "the command could not be started"
    message = str(exc).strip() or type(exc).__name__
    return message[:300]


async def _session(server: McpServer, errlog, work: Callable[[Client], Awaitable[Any]]) -> Any:
    # Imported here: the MCP SDK takes about 0.4 s to import (its protocol
    # types), and every process imports this module at start (the toolbox's
    # registrations) while only a turn or a check that talks to a server needs it.
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if server.transport == McpServer.Transport.STDIO:
        params = StdioServerParameters(command=server.command, args=[str(a) for a in server.args])
        # An argv list (no shell), in a process group of its own that the SDK
        # ends when the session closes or the timeout cancels it.
        async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
            return await work(client)
    headers = {}
    token = server.token
    if token:
        headers["Authorization"] = f"Bearer {token}"
    # No proxies or netrc from the environment; redirects only within the
    # endpoint's origin (the SDK's own rule).
    http = httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(server.timeout_seconds), trust_env=False
    )
    async with http:
        transport = streamable_http_client(server.url, http_client=http)
        async with Client(transport, cache=None) as client:
            return await work(client)


def _run(server: McpServer, work: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run `work` on a fresh connection within the server's timeout."""

    async def main() -> Any:
        with tempfile.TemporaryFile("w+") as errlog:
            try:
                with anyio.fail_after(server.timeout_seconds):
                    return await _session(server, errlog, work)
            except TimeoutError:
                raise McpFailure(
                    f"{server.name} did not answer within {server.timeout_seconds} s"
                ) from None
            except SecretUndecryptable as exc:
                raise McpFailure(str(exc)) from None
            except McpFailure:
                raise
            except Exception as exc:
                logger.info("MCP server %s failed: %s", server.name, type(exc).__name__)
                detail = _describe(exc)
                if server.transport == McpServer.Transport.STDIO:
                    detail += _stderr_tail(errlog)
                raise McpFailure(f"{server.name}: {detail}") from None

    return anyio.run(main)


def list_tools(server: McpServer, *, limit: int) -> list[ListedTool]:
    """Every tool the server lists; paging stops once there are more than
    `limit` (enough to know it lists too many, and to say how many so far)."""

    async def work(client: Client) -> list[ListedTool]:
        found: list[ListedTool] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                found.append(ListedTool(tool.name, tool.description or "", tool.input_schema))
            cursor = page.next_cursor
            if not cursor or len(found) > limit:
                break
        return found

    return _run(server, work)


def call_tool(server: McpServer, name: str, arguments: dict) -> CallOutcome:
    async def work(client: Client) -> CallOutcome:
        result = await client.call_tool(name, arguments)
        return CallOutcome(_result_text(result), bool(result.is_error))

    return _run(server, work)


def _result_text(result) -> str:
    parts = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        else:
            # Images, audio and embedded resources are not passed on: the
            # model is told they were there.
            parts.append(f"[{kind or 'unknown'} content left out]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False)[:MAX_RESULT_CHARS])
    text = "\n".join(parts)
    if len(text) > MAX_RESULT_CHARS:
        cut = len(text) - MAX_RESULT_CHARS
        text = f"{text[:MAX_RESULT_CHARS]}\n[{cut} more characters cut]"
    return text
