"""Toolbox fixtures: the fake outside MCP server (tests/fakes/mcp_server.py)
as a stdio command or served over Streamable HTTP on a loopback port, a group
the owner belongs to, and the chat fixtures (a scripted model over real HTTP)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.contrib.auth.models import Group

from apps.toolbox.models import Location, McpServer
from apps.toolbox.services import mcp_server_check

# The real OpenSSH server (one per session, started only when asked for): an agent chat's profile.
from tests.agents.conftest import sshd  # noqa: F401
from tests.support.processes import ROOT, free_port, wait_for_port

FAKE = str(ROOT / "tests" / "fakes" / "mcp_server.py")
TOKEN = "mcp-token-7d1f2c9a0b"


@pytest.fixture
def tool_users(owner):
    """The group the outside tools are offered to; the owner is in it."""
    group = Group.objects.create(name="tool users")
    owner.groups.add(group)
    return group


def stdio_server(group=None, *extra: str, name="fake", **fields) -> McpServer:
    server = McpServer.objects.create(
        name=name,
        transport=McpServer.Transport.STDIO,
        command=sys.executable,
        args=[FAKE, "stdio", *extra],
        location=fields.pop("location", Location.OUTSIDE),
        **fields,
    )
    if group is not None:
        server.groups.add(group)
    return server


def checked(server: McpServer) -> McpServer:
    report = mcp_server_check(server=server)
    assert report.ok, report.message
    return server


@pytest.fixture(scope="module")
def http_mcp():
    """The fake served over Streamable HTTP, wanting the bearer token; yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, FAKE, "http", str(port), "--token", TOKEN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
