"""A terminal ends when its SSH profile changes in another process too.

A Django signal reaches only the process that saved, and each web process
holds its own terminals (apps/agents/terminal/registry.py). So every change
here is made the way another process's looks from this one: by another
process (manage.py shell, its signal firing there), by a queryset update, or
with this process's signals muted. The terminal, open on the real sshd,
still ends within the access watch's interval, with the words the panel
shows for an edit made here."""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import pytest
from channels.db import database_sync_to_async
from django.db.models.signals import post_delete, post_save

from apps.agents import services, signals
from apps.agents.consumers import CLOSE_ENDED
from apps.agents.models import AgentSession, SSHProfile
from apps.agents.terminal.registry import TERMINALS
from apps.agents.terminal.spec import CHAT_DELETED, PROFILE_CHANGED, PROFILE_DELETED
from apps.chats.services import chat_delete
from tests.agents.test_terminal_socket import LINE, agent_chat, eventually, open_tab, run
from tests.fakes.sshd import processes_matching
from tests.support.processes import manage

pytestmark = pytest.mark.django_db(transaction=True)

__all__ = ["agent_chat"]  # the fixture, shared with test_terminal_socket

INTERVAL = 1  # TERMINAL_ACCESS_CHECK_SECONDS in these tests
# The watch sleeps INTERVAL, then asks the database: the close comes within
# about one interval. The rest is room for a loaded 2-core machine.
WITHIN = INTERVAL + 4


@contextlib.contextmanager
def signals_muted():
    """This process's terminal signals do not fire: a delete made now looks
    from here as one made by another process does."""
    receivers = [
        (post_save, signals.close_terminals_of_changed_profile, SSHProfile,
         "agents-terminal-profile-saved"),
        (post_delete, signals.close_terminals_of_deleted_profile, SSHProfile,
         "agents-terminal-profile-deleted"),
        (post_delete, signals.close_terminal_of_deleted_chat, AgentSession,
         "agents-terminal-chat-deleted"),
    ]  # fmt: skip
    for signal, _, sender, uid in receivers:
        assert signal.disconnect(sender=sender, dispatch_uid=uid)
    try:
        yield
    finally:
        for signal, receiver, sender, uid in receivers:
            signal.connect(receiver, sender=sender, dispatch_uid=uid)


async def open_shell(user, chat_id: int):
    """A tab on the chat's terminal, at the prompt, with a command running in
    it whose process shows whether the shell still lives on the machine."""
    tab, code = await open_tab(user, chat_id)
    assert tab is not None, code
    await tab.read_until(rb"\$ ")
    marker = f"{secrets.randbelow(10**6)}.75"
    await tab.type(f"sleep {marker} &\r")
    await eventually(lambda: processes_matching(f"sleep {marker}"))
    return tab, marker


async def ends_with(tab, marker: str, reason: str) -> None:
    started = asyncio.get_running_loop().time()
    closed = await tab.message("closed", timeout=WITHIN)
    assert asyncio.get_running_loop().time() - started <= WITHIN
    assert closed["reason"] == reason
    assert await tab.closed() == CLOSE_ENDED
    # The connection is gone, not only the socket: sshd ends the shell and its children.
    await eventually(lambda: not processes_matching(f"sleep {marker}"))


def test_an_edit_saved_by_another_process_ends_the_terminal_here(agent_chat, agent_owner, settings):
    settings.TERMINAL_ACCESS_CHECK_SECONDS = INTERVAL
    profile = agent_chat.agent_session.profile
    code = (
        "from apps.agents import services; from apps.agents.models import SSHProfile; "
        f"services.profile_forget_host_key(profile=SSHProfile.objects.get(pk={profile.pk}))"
    )

    async def test():
        tab, marker = await open_shell(agent_owner, agent_chat.pk)
        # Another web process saves the edit: its signal fires there, not here.
        result = await asyncio.to_thread(manage, "shell", "-c", code)
        assert result.returncode == 0, result.stderr
        await ends_with(tab, marker, PROFILE_CHANGED)
        assert agent_chat.pk not in TERMINALS.sessions

    run(test)


def test_a_rename_elsewhere_leaves_the_terminal_open(agent_chat, agent_owner, settings):
    settings.TERMINAL_ACCESS_CHECK_SECONDS = INTERVAL
    profile_id = agent_chat.agent_session.profile_id

    async def test():
        tab, _ = await open_shell(agent_owner, agent_chat.pk)
        renamed = SSHProfile.objects.filter(pk=profile_id)
        await database_sync_to_async(renamed.update)(name="renamed box")
        await asyncio.sleep(INTERVAL * 3)  # three checks: the name is no connection detail
        await tab.type("echo still-here\r")
        await tab.read_until(LINE + rb"still-here\r\n")
        assert not [m for m in tab.messages if m["type"] == "closed"]

    run(test)


def _update_connection(profile_id: int, chat_id: int) -> None:
    # What the row looks like after another process saved a new user name.
    SSHProfile.objects.filter(pk=profile_id).update(username="someone-else")


def _delete_profile(profile_id: int, chat_id: int) -> None:
    with signals_muted():
        services.profile_delete(profile=SSHProfile.objects.get(pk=profile_id))


def _delete_chat(profile_id: int, chat_id: int) -> None:
    with signals_muted():
        chat_delete(chat=AgentSession.objects.get(chat_id=chat_id).chat)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (_update_connection, PROFILE_CHANGED),
        (_delete_profile, PROFILE_DELETED),
        (_delete_chat, CHAT_DELETED),
    ],
    ids=["edited", "profile-deleted", "chat-deleted"],
)
def test_a_change_no_signal_here_announced_ends_the_terminal_with_its_reason(
    agent_chat, agent_owner, settings, change, reason
):
    settings.TERMINAL_ACCESS_CHECK_SECONDS = INTERVAL
    profile_id = agent_chat.agent_session.profile_id

    async def test():
        tab, marker = await open_shell(agent_owner, agent_chat.pk)
        await database_sync_to_async(change)(profile_id, agent_chat.pk)
        await ends_with(tab, marker, reason)

    run(test)
