"""manage.py mcp: Jarvis as an MCP server for Claude Desktop, Claude Code, Cursor.

  mcp --user USER                       speak MCP over stdin/stdout as USER
  mcp check --user USER [--query TEXT]  launch that server the way an app
                                        does and call every tool once

The server returns only what USER may see and may send to a cloud model
(apps.mcp.reads). Stdout is the protocol channel: nothing else may write to
it, so logs go to stderr. See docs/mcp.md for each app's config snippet.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp import Client, StdioServerParameters

from apps.accounts.commands import user_named
from apps.library.services import get_embedder
from apps.mcp.server import acting_as, build_server

SHOWN_CHARS = 600


def child_environment() -> dict[str, str]:
    """What the launched server needs besides the SDK's safe defaults: the
    settings module and Jarvis's own variables (data dir, database…)."""
    env = {k: v for k, v in os.environ.items() if k.startswith("JARVIS_")}
    env["DJANGO_SETTINGS_MODULE"] = os.environ.get("DJANGO_SETTINGS_MODULE", "")
    env.setdefault("JARVIS_LOG_LEVEL", "WARNING")
    for name in ("PYTHONPATH", "VIRTUAL_ENV"):
        if name in os.environ:
            env[name] = os.environ[name]
    return {k: v for k, v in env.items() if v}


def _shown(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + " …"


class Command(BaseCommand):
    help = "Serve MCP over stdio as USER, or check that server as an app would."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", nargs="?", choices=["check"])
        parser.add_argument("--user", required=True)
        parser.add_argument("--query", default="notes", help="what `check` searches for")

    def handle(self, *args, **options) -> None:
        user = user_named(options["user"], active=True)
        if options["action"] == "check":
            failures = anyio.run(self._check, user.username, options["query"])
            if failures:
                raise CommandError(f"{failures} call(s) failed")
            return
        get_embedder().embed_query("warm up")  # load the model before the app's first search
        with acting_as(user.pk):
            build_server().run("stdio")

    async def _check(self, username: str, query: str) -> int:
        params = StdioServerParameters(
            command=sys.executable,
            args=[str(Path(settings.BASE_DIR) / "manage.py"), "mcp", "--user", username],
            env=child_environment(),
            cwd=str(settings.BASE_DIR),
        )
        self.failures = 0
        self.stdout.write(f"launching: {params.command} {' '.join(params.args)}")
        async with Client(params, read_timeout_seconds=120) as client:
            tools = await client.list_tools()
            self.stdout.write(f"tools: {', '.join(t.name for t in tools.tools)}")
            found = await self._call(client, "search_notes", query=query, limit=3)
            results = found.get("results") or []
            if results:
                await self._call(client, "get_document", document_id=results[0]["document_id"])
            else:
                self.stdout.write("\n== get_document: skipped (the search found nothing to open)")
            listed = await self._call(client, "list_projects")
            projects = listed.get("projects") or []
            if projects:
                await self._call(client, "get_project_status", name=projects[0]["name"])
            else:
                self.stdout.write("\n== get_project_status: skipped (no projects to ask about)")
            resource = await client.read_resource("jarvis://overview")
            self.stdout.write(f"\n== read jarvis://overview\n{_shown(resource.contents[0].text)}")
        verdict = f"{self.failures} call(s) failed" if self.failures else "every call answered"
        self.stdout.write(f"\n{verdict}")
        return self.failures

    async def _call(self, client: Client, tool: str, **arguments) -> dict:
        answer = await client.call_tool(tool, arguments)
        body = answer.structured_content
        if body is None:
            body = " ".join(getattr(c, "text", "") for c in answer.content)
        state = "error" if answer.is_error else "ok"
        self.failures += bool(answer.is_error)
        self.stdout.write(f"\n== {tool}({json.dumps(arguments)}) → {state}\n{_shown(body)}")
        return body if isinstance(body, dict) and not answer.is_error else {}
