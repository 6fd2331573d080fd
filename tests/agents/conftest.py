"""Agent fixtures: a real OpenSSH server (tests/fakes/sshd.py), targets for it,
and people with and without the "use agent chats" permission.

`sshd` is one server per test session (per xdist worker); tests that restart
it with another host key use `fresh_sshd`, their own, so nobody else's pinned
key changes underneath them.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import replace

import pytest
from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.agents import services, ssh
from tests.fakes.sshd import FakeSSHD


@pytest.fixture(autouse=True)
def _remote_umask():
    """Files these tests write into the SSH account's home stand for files on
    another machine, made with its usual umask, not the 077 every Jarvis
    process sets (jarvis_site.settings)."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.fixture(scope="session")
def sshd():
    with FakeSSHD() as server:
        yield server


@pytest.fixture
def fresh_sshd():
    with FakeSSHD() as server:
        yield server


def target_for(server: FakeSSHD, **changes) -> ssh.Target:
    """A target with the server's authorized key and its host key pinned."""
    base = ssh.Target(
        host=server.host,
        port=server.port,
        username=server.user,
        private_key=server.client_key,
        host_key=server.host_key_line,
    )
    return replace(base, **changes)


@pytest.fixture
def target(sshd) -> ssh.Target:
    return target_for(sshd)


def run(coro):
    """Run a coroutine to the end (the tests are synchronous; asyncssh is not)."""
    return asyncio.run(coro)


async def with_connection(target: ssh.Target, work):
    async with await ssh.connect(target) as conn:
        return await work(conn)


def grant_agents(user):
    group, _ = Group.objects.get_or_create(name="agents")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.USE_AGENT_CHATS))
    )
    user.groups.add(group)
    # has_perm caches per instance; hand back a fresh one.
    return type(user).objects.get(pk=user.pk)


@pytest.fixture
def agent_owner(owner):
    return grant_agents(owner)


@pytest.fixture
def agent_member(member):
    return grant_agents(member)


def pinned_profile(owner, server, **changes):
    fields = {
        "owner": owner,
        "name": "box",
        "host": server.host,
        "port": server.port,
        "username": server.user,
        "key_text": server.client_key,
    }
    profile = services.profile_create(**{**fields, **changes})
    services.profile_pin_host_key(profile=profile, key_line=server.host_key_line)
    return profile


def shown_mode(page: str) -> str:
    """The approval mode an agent chat's header shows, in words: the selected
    option of its switch (every mode's words are on the page, as options)."""
    switch = page.split('id="agent-mode"', 1)[1].split("</select>", 1)[0]
    return re.search(r" selected>([^<]+)</option>", switch)[1]
