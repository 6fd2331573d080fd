"""The MCP server driven by the SDK's own client, the way Claude Desktop, Claude
Code and Cursor drive it: `manage.py mcp --user USER` over a real stdio pipe,
and Streamable HTTP at /mcp/ on a real daphne with a bearer token (refused
without one, with a revoked one, from a foreign Origin or Host)."""

from __future__ import annotations

import json
import sys

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from apps.library.models import Document
from apps.mcp.tokens import token_create, token_revoke
from tests.mcp.conftest import PROBES
from tests.support.fixtures import MARKER, MAX_MARKER
from tests.support.processes import ROOT, child_env, daphne_server, manage

pytestmark = pytest.mark.django_db(transaction=True)


def _body(answer) -> dict | str:
    if answer.structured_content is not None:
        return answer.structured_content
    return " ".join(getattr(c, "text", "") for c in answer.content)


async def _session(client: Client) -> dict:
    """Every tool, the resource, and the probes aimed at the marker."""
    seen: dict = {"tools": sorted(t.name for t in (await client.list_tools()).tools)}
    boiler = await client.call_tool("search_notes", {"query": "boiler serviced", "mode": "history"})
    seen["search"] = _body(boiler)
    first = seen["search"]["results"][0]["document_id"]
    seen["document"] = _body(await client.call_tool("get_document", {"document_id": first}))
    seen["projects"] = _body(await client.call_tool("list_projects", {}))
    seen["paused"] = _body(await client.call_tool("list_projects", {"status": "paused"}))
    seen["shed"] = _body(await client.call_tool("get_project_status", {"name": "shed"}))
    seen["overview"] = (await client.read_resource("jarvis://overview")).contents[0].text
    probes = []
    for probe in PROBES:
        for mode in ("current", "history", "any"):
            found = _body(await client.call_tool("search_notes", {"query": probe, "mode": mode}))
            probes.append(found["results"])
    seen["probes"] = probes
    return seen


def _check_olivias_session(seen: dict) -> None:
    assert seen["tools"] == ["get_document", "get_project_status", "list_projects", "search_notes"]
    boiler = [r for r in seen["search"]["results"] if r["path"].startswith("boiler")]
    assert [(r["path"], r["date"], r["is_latest"]) for r in boiler] == [
        ("boiler_2025-03.md", "2025-03-01", False),
        ("boiler_2026-03.md", "2026-03-01", True),
    ]
    assert seen["document"]["passages"]
    assert [p["name"] for p in seen["projects"]["projects"]] == ["PixelNet", "Shed rebuild"]
    assert [p["name"] for p in seen["paused"]["projects"]] == ["Shed rebuild"]
    (shed,) = seen["shed"]["matches"]
    assert shed["status"] == "paused" and shed["next_steps"] == ["Order the timber"]
    assert "Shed rebuild" in seen["overview"] and "Tax return" not in seen["overview"]
    text = json.dumps(seen)
    assert MARKER not in text and MAX_MARKER not in text


def test_the_server_over_a_real_stdio_pipe(owner, household):
    env = child_env()
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "mcp", "--user", owner.username],
        env={k: v for k, v in env.items() if k.startswith(("JARVIS_", "DJANGO_"))},
        cwd=str(ROOT),
    )

    async def run() -> dict:
        async with Client(params, read_timeout_seconds=120) as client:
            return await _session(client)

    _check_olivias_session(anyio.run(run))


def test_mcp_check_launches_the_server_and_calls_every_tool(owner, household):
    done = manage("mcp", "check", "--user", owner.username, "--query", "boiler")
    assert done.returncode == 0, done.stderr[-2000:]
    for line in (
        "== search_notes(",
        "== get_document(",
        "== list_projects(",
        "== get_project_status(",
        "== read jarvis://overview",
        "every call answered",
    ):
        assert line in done.stdout
    assert "Brightwarm" in done.stdout and MARKER not in done.stdout


def _http_client(url: str, token: str | None, **headers) -> Client:
    if token:
        headers["Authorization"] = f"Bearer {token}"
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60)


def test_the_server_over_http_with_a_token_and_refused_without(owner, member, household):
    _, olivias = token_create(owner=owner, name="Claude Desktop")
    maxs_row, maxs = token_create(owner=member, name="Cursor")
    token_revoke(token=maxs_row)
    _, maxs_new = token_create(owner=member, name="Cursor again")
    with daphne_server() as base:
        url = f"{base}/mcp/"

        async def as_olivia() -> dict:
            async with _http_client(url, olivias) as client:
                return await _session(client)

        _check_olivias_session(anyio.run(as_olivia))

        async def as_max() -> list:
            async with _http_client(url, maxs_new) as client:
                found = await client.call_tool("search_notes", {"query": "birthday present"})
                projects = await client.call_tool("list_projects", {})
                return [_body(found), _body(projects)]

        maxs_view = json.dumps(anyio.run(as_max))
        assert MAX_MARKER in maxs_view  # his own notes are his
        assert MARKER not in maxs_view

        initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"content-type": "application/json", "accept": "application/json"}
        for token in (None, "jarvis_not-a-token", "x" * 300, maxs):
            auth = {"authorization": f"Bearer {token}"} if token is not None else {}
            refused = httpx.post(url, json=initialize, headers={**headers, **auth})
            assert refused.status_code == 401, token
            assert refused.headers["www-authenticate"].startswith("Bearer")
        foreign = httpx.post(
            url,
            json=initialize,
            headers={
                **headers,
                "authorization": f"Bearer {olivias}",
                "origin": "https://evil.example",
            },
        )
        assert foreign.status_code == 403
        rebound = httpx.post(
            url,
            json=initialize,
            headers={**headers, "authorization": f"Bearer {olivias}", "host": "evil.example"},
        )
        assert rebound.status_code == 421

        async def with_revoked() -> None:
            async with _http_client(url, maxs) as client:
                await client.list_tools()

        with pytest.raises(ExceptionGroup) as refused_client:
            anyio.run(with_revoked)
        assert refused_client.group_contains(MCPError, depth=2)


def test_an_mcp_document_id_outside_what_may_be_shared_is_not_found(owner, household):
    """A document id the app guesses: a private folder's, a local-only note's, or
    another person's. The same answer as for an id that does not exist."""
    _, token = token_create(owner=owner, name="t")
    ids = [
        Document.objects.get(path=path).pk for path in ("private/diary.md", "tax.md", "gifts.md")
    ] + [999_999]
    with daphne_server() as base:

        async def run() -> list:
            async with _http_client(f"{base}/mcp/", token) as client:
                return [await client.call_tool("get_document", {"document_id": pk}) for pk in ids]

        answers = anyio.run(run)
    assert all(a.is_error for a in answers)
    assert [_body(a) for a in answers] == [
        f"Error executing tool get_document: document {pk} not found" for pk in ids
    ]
