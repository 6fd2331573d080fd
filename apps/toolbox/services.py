"""Writes of the toolbox: a server's bearer token, and the check that asks an
MCP server for its tools and stores them, or refuses the listing with the
reason shown in admin (too many tools, a schema that is not JSON Schema, a
name the model could not call)."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field

from django.db import transaction
from django.template.defaultfilters import pluralize
from django.utils import timezone
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from apps.toolbox import mcp_client
from apps.toolbox.models import McpServer, McpTool

logger = logging.getLogger(__name__)

# More than this from one server is refused: each tool's schema goes into
# every request, and a server listing hundreds is not a household's toolbox.
MAX_TOOLS = 50
MAX_SCHEMA_CHARS = 20_000
MAX_DESCRIPTION_CHARS = 2_000
_NOT_A_NAME_CHAR = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class CheckReport:
    ok: bool
    message: str
    tools: list[str] = field(default_factory=list)


def mcp_server_set_token(*, server: McpServer, token: str) -> None:
    server.set_token(token)
    server.save(update_fields=["token_encrypted"])
    logger.info("%s the token of MCP server %s", "set" if token else "cleared", server.name)


def exposed_name(server: McpServer, tool_name: str) -> str:
    """What the model calls a server's tool: SERVER__TOOL, only the characters
    every provider accepts in a function name."""
    return f"{server.name}__{_NOT_A_NAME_CHAR.sub('_', tool_name)}"


def schema_problem(schema: object) -> str:
    """Why a tool's input schema cannot be offered ('' when it can)."""
    if not isinstance(schema, dict):
        return "is not a JSON object"
    if schema.get("type") != "object":
        return 'does not describe an object ("type": "object")'
    if len(json.dumps(schema)) > MAX_SCHEMA_CHARS:
        return f"is longer than {MAX_SCHEMA_CHARS} characters"
    outside = _outside_ref(schema)
    if outside:
        # Checking a call's arguments would mean fetching it: refused instead.
        return f"refers to {outside[:100]!r} outside itself ($ref)"
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "top level"
        return f"is not valid JSON Schema ({exc.message}, at {where})"
    return ""


def _outside_ref(node: object) -> str:
    """The first `$ref` that does not point inside the schema ('' when none)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return ref
        return next((found for value in node.values() if (found := _outside_ref(value))), "")
    if isinstance(node, list):
        return next((found for value in node if (found := _outside_ref(value))), "")
    return ""


def mcp_server_renamed(*, server: McpServer) -> None:
    """After the server's name changed: its stored tools take the new prefix."""
    for tool in server.tools.all():
        tool.exposed_name = exposed_name(server, tool.name)
        tool.save(update_fields=["exposed_name"])


def listing_problem(server: McpServer, listed: list[mcp_client.ListedTool]) -> str:
    """Why this listing is refused as a whole ('' when every tool can be offered)."""
    if len(listed) > MAX_TOOLS:
        return (
            f"Refused: the server advertises {len(listed)} tools; Jarvis offers at most "
            f"{MAX_TOOLS} from one server. Narrow the server's tool list and check again."
        )
    seen: dict[str, str] = {}
    taken = dict(McpTool.objects.exclude(server=server).values_list("exposed_name", "server__name"))
    for tool in listed:
        if not tool.name:
            return "Refused: the server lists a tool without a name."
        problem = schema_problem(tool.input_schema)
        if problem:
            return f"Refused: the input schema of the tool {tool.name!r} {problem}."
        name = exposed_name(server, tool.name)
        if len(name) > 64:
            return f"Refused: the tool name {tool.name!r} is too long to offer as {name!r}."
        if name in seen:
            return (
                f"Refused: the tools {seen[name]!r} and {tool.name!r} would share the name {name}."
            )
        if name in taken:
            return f"Refused: {name} is already a tool of the server {taken[name]}."
        seen[name] = tool.name
    return ""


def mcp_server_check(*, server: McpServer) -> CheckReport:
    """Ask the server for its tools and store them. A server that cannot be
    reached keeps the tools it had (the reason is shown); a listing that is
    refused removes them, so nothing of a server in that state is offered."""
    try:
        listed = mcp_client.list_tools(server, limit=MAX_TOOLS)
    except mcp_client.McpFailure as exc:
        message = f"Check failed: {exc}"
        _record(server, message)
        return CheckReport(False, message)
    problem = listing_problem(server, listed)
    if problem:
        with transaction.atomic():
            server.tools.all().delete()
            _record(server, problem)
        return CheckReport(False, problem)
    with transaction.atomic():
        _store(server, listed)
        _record(server, "")
    names = [tool.name for tool in listed]
    shown = ", ".join(names[:10]) + (" …" if len(names) > 10 else "")
    # The message starts with a word: admin capitalises a message's first letter.
    message = f"The server {server.name} lists {len(names)} tool{pluralize(len(names))}"
    return CheckReport(True, f"{message}: {shown}." if names else f"{message}.", names)


def _record(server: McpServer, error: str) -> None:
    server.checked_at = timezone.now()
    server.check_error = error
    server.save(update_fields=["checked_at", "check_error"])


def _store(server: McpServer, listed: list[mcp_client.ListedTool]) -> None:
    """The listing as the server's tools; the admin's enabled/read-only ticks
    stay on the tools that are still there."""
    server.tools.exclude(name__in=[t.name for t in listed]).delete()
    for tool in listed:
        McpTool.objects.update_or_create(
            server=server,
            name=tool.name,
            defaults={
                "exposed_name": exposed_name(server, tool.name),
                "description": tool.description[:MAX_DESCRIPTION_CHARS],
                "input_schema": tool.input_schema,
            },
        )
