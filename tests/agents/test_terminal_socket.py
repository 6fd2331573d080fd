"""The terminal socket against a real sshd, in process (Channels' test
communicator): who may open it, bytes both ways, one shell per chat shared by
tabs, a slow tab dropped without holding up another, the scrollback after a
reconnect, and what ends a terminal (the shell exiting, the idle reaper, a
changed profile, a deleted chat)."""

from __future__ import annotations

import asyncio
import json
import re
import secrets

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group

from apps.agents import services
from apps.agents.consumers import CLOSE_DROPPED, CLOSE_ENDED, CLOSE_FAILED
from apps.agents.ssh import shell as shell_module
from apps.agents.terminal import session as terminal_session
from apps.agents.terminal.registry import TERMINALS
from apps.chats.services import chat_delete, turn_start
from jarvis_site.asgi import application
from tests.agents.conftest import pinned_profile
from tests.fakes.sshd import processes_matching
from tests.support.sockets import session_headers

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 15
# An output line: it follows a newline, or the OSC 133 mark (C) that bash
# prints where a command's output starts.
LINE = rb"(?:\n|\x07)"


@pytest.fixture
def agent_chat(agent_owner, sshd):
    profile = pinned_profile(agent_owner, sshd)
    return services.agent_chat_create(
        owner=agent_owner, profile=profile, project_dir=str(sshd.workdir("proj"))
    )


class Tab:
    """One browser tab's socket: reads output, acknowledges it like the page does."""

    def __init__(self, communicator: WebsocketCommunicator, *, acks: bool = True) -> None:
        self.communicator = communicator
        self.acks = acks
        self.output = bytearray()
        self.messages: list[dict] = []
        self.acked = 0
        self.close_code: int | None = None

    async def read_one(self, timeout: float = TIMEOUT) -> bool:
        """Read one frame; False when the socket closed."""
        frame = await self.communicator.receive_output(timeout)
        if frame["type"] == "websocket.close":
            self.close_code = frame.get("code")
            return False
        if frame.get("bytes") is not None:
            self.output.extend(frame["bytes"])
            if self.acks and len(self.output) - self.acked >= 64 * 1024:
                self.acked = len(self.output)
                await self.send_json({"type": "ack", "bytes": self.acked})
        else:
            self.messages.append(json.loads(frame["text"]))
        return True

    async def read_until(self, pattern: bytes | str, timeout: float = TIMEOUT) -> bytes:
        """Read until `pattern` (a regex over the output) appears; the match."""
        regex = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = regex.search(self.output)
            if found:
                return found.group(0)
            left = deadline - asyncio.get_running_loop().time()
            try:
                more = left > 0 and await self.read_one(left)
            except TimeoutError:
                more = False
            if not more:
                raise AssertionError(
                    f"{pattern!r} never came (closed: {self.close_code}); output ends with "
                    f"{bytes(self.output[-400:])!r}"
                )

    async def message(self, kind: str, timeout: float = TIMEOUT) -> dict:
        while True:
            for message in self.messages:
                if message["type"] == kind:
                    return message
            if not await self.read_one(timeout):
                raise AssertionError(f"closed ({self.close_code}) before a {kind!r} message")

    async def send_json(self, message: dict) -> None:
        await self.communicator.send_to(text_data=json.dumps(message))

    async def type(self, text: str) -> None:
        await self.communicator.send_to(bytes_data=text.encode())

    async def closed(self, timeout: float = TIMEOUT) -> int:
        while self.close_code is None:
            if not await self.read_one(timeout):
                break
        return self.close_code


async def open_tab(user, chat_id: int, query: str = "cols=80&rows=24", **kwargs):
    headers = await database_sync_to_async(session_headers)(user)
    communicator = WebsocketCommunicator(
        application, f"/ws/terminal/{chat_id}/?{query}", headers=headers
    )
    connected, code = await communicator.connect(timeout=TIMEOUT)
    if not connected:
        return None, code
    return Tab(communicator, **kwargs), None


async def eventually(check, timeout: float = TIMEOUT) -> None:
    """Wait until `check()` is true (a process started, a file appeared): how
    soon depends on the machine's load, whether it happens does not."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "it never happened"
        await asyncio.sleep(0.05)


def run(test):
    """Run an async test body on a loop of its own, closing its terminals after."""

    async def body():
        try:
            await test()
        finally:
            await TERMINALS.close_all("the test ended")

    async_to_sync(body)()


# --- who may open it


def test_another_persons_terminal_is_refused(agent_chat, agent_member):
    async def test():
        tab, _ = await open_tab(agent_member, agent_chat.pk)
        assert tab is None
        assert agent_chat.pk not in TERMINALS.sessions  # nothing was started for them

    run(test)


def test_the_owner_without_the_permission_is_refused(agent_chat, agent_owner):
    agent_owner.groups.clear()

    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk)
        assert tab is None

    run(test)


def test_a_normal_chat_has_no_terminal(agent_owner):
    chat, _, _ = turn_start(user=agent_owner, chat=None, text="hello")

    async def test():
        tab, _ = await open_tab(agent_owner, chat.pk)
        assert tab is None

    run(test)


def test_a_foreign_origin_is_refused(agent_chat, agent_owner):
    async def test():
        headers = await database_sync_to_async(session_headers)(agent_owner)
        headers = [h for h in headers if h[0] != b"origin"] + [(b"origin", b"http://evil.example")]
        communicator = WebsocketCommunicator(
            application, f"/ws/terminal/{agent_chat.pk}/", headers=headers
        )
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert not connected

    run(test)


def test_a_host_key_not_accepted_yet_is_explained_not_connected(agent_owner, sshd):
    profile = services.profile_create(
        owner=agent_owner,
        name="new",
        host=sshd.host,
        port=sshd.port,
        username=sshd.user,
        key_text=sshd.client_key,
    )
    chat = services.agent_chat_create(owner=agent_owner, profile=profile, project_dir="/tmp")

    async def test():
        tab, _ = await open_tab(agent_owner, chat.pk)
        error = await tab.message("error")
        assert "not accepted yet" in error["message"]
        assert error["fix_url"] == f"/settings/ssh/{profile.pk}/"
        assert await tab.closed() == CLOSE_FAILED

    run(test)


def test_a_changed_host_key_is_refused_with_its_message(agent_owner, fresh_sshd):
    profile = pinned_profile(agent_owner, fresh_sshd)
    chat = services.agent_chat_create(owner=agent_owner, profile=profile, project_dir="/tmp")
    fresh_sshd.restart(new_host_key=True)

    async def test():
        tab, _ = await open_tab(agent_owner, chat.pk)
        error = await tab.message("error")
        assert error["message"].startswith("host key changed")
        assert await tab.closed() == CLOSE_FAILED

    run(test)


# --- bytes, tabs, sizes


def test_keystrokes_go_in_and_output_comes_back_in_the_project_dir(agent_chat, agent_owner):
    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk)
        ready = await tab.message("ready")
        assert (ready["cols"], ready["rows"]) == (80, 24)
        await tab.read_until(rb"\$ ")
        await tab.type("pwd; echo sum=$((20+22)); printf '\\303\\251\\n'\r")
        await tab.read_until(rb"\nsum=42\r\n")
        assert agent_chat.agent_session.project_dir.encode() + b"\r\n" in tab.output
        # Output is passed on as bytes, never decoded on the way: é is two bytes.
        await tab.read_until(b"\n\xc3\xa9\r\n")
        # bash prints the OSC 133 prompt marks (the command's end comes with the
        # next prompt, so wait for it rather than expect it); a later tab is told at once.
        await tab.read_until(rb"\x1b\]133;D;0\x07")
        second, _ = await open_tab(agent_owner, agent_chat.pk)
        assert (await second.message("ready"))["marks"] is True

    run(test)


def test_two_tabs_share_one_shell_and_the_smaller_window_decides_its_size(agent_chat, agent_owner):
    async def test():
        wide, _ = await open_tab(agent_owner, agent_chat.pk, "cols=120&rows=40")
        await wide.read_until(rb"\$ ")
        narrow, _ = await open_tab(agent_owner, agent_chat.pk, "cols=70&rows=20")
        await narrow.message("ready")
        await narrow.type("echo pid=$$; stty size\r")
        await narrow.read_until(rb"\n20 70\r\n")
        pid = (await narrow.read_until(rb"pid=\d+")).split(b"=")[1]
        # Typed in one tab, seen in the other: the same shell.
        await wide.read_until(rb"pid=" + pid + rb"\r\n20 70\r\n")
        await narrow.communicator.disconnect()  # closing a tab detaches, never closes
        await wide.send_json({"type": "resize", "cols": 100, "rows": 30})
        await wide.type("echo again=$$; stty size\r")
        await wide.read_until(rb"again=" + pid + rb"\r\n30 100\r\n")

    run(test)


def test_a_reconnecting_tab_gets_the_scrollback_of_the_same_shell(agent_chat, agent_owner):
    async def test():
        first, _ = await open_tab(agent_owner, agent_chat.pk)
        await first.read_until(rb"\$ ")
        await first.type("echo before-$((3*3))\r")
        await first.read_until(LINE + rb"before-9\r\n")
        await first.communicator.disconnect()
        again, _ = await open_tab(agent_owner, agent_chat.pk)
        ready = await again.message("ready")
        assert ready["scrollback"] > 0
        await again.read_until(LINE + rb"before-9\r\n")  # from the scrollback, not run again
        assert again.output.count(b"before-9\r\n") == 1

    run(test)


# --- a slow viewer


def test_a_slow_viewer_is_dropped_without_stalling_another(agent_chat, agent_owner):
    end = f"end-{secrets.token_hex(4)}"

    async def test():
        fast, _ = await open_tab(agent_owner, agent_chat.pk)
        slow, _ = await open_tab(agent_owner, agent_chat.pk, acks=False)  # never reads, never acks
        await fast.read_until(rb"\$ ")
        # A flood: 12 MB of "y" as fast as the shell can write it, then a
        # line that only comes after all of it. The fast tab sets the pace.
        await fast.type(f"yes | head -c 12000000; echo; echo {end[:4]}''{end[4:]}\r")
        await fast.read_until(rf"\n{end}\r\n".encode(), timeout=60)
        assert len(fast.output) > 12_000_000
        assert fast.close_code is None  # never dropped

        # The slow tab was sent no more than its window, then dropped.
        frames = []
        while True:
            frame = await slow.communicator.receive_output(TIMEOUT)
            frames.append(frame)
            if frame["type"] == "websocket.close":
                break
        assert frames[-1]["code"] == CLOSE_DROPPED
        sent = sum(len(f.get("bytes") or b"") for f in frames)
        assert sent <= terminal_session.WINDOW + terminal_session.FRAME
        # Its reconnect gets the scrollback (the screen it missed) and carries on.
        again, _ = await open_tab(agent_owner, agent_chat.pk)
        await again.read_until(rf"\n{end}\r\n".encode())
        await again.type("echo back\r")
        await again.read_until(LINE + rb"back\r\n")

    run(test)


def test_a_lone_tab_that_stops_reading_pauses_the_program_instead_of_losing_output(
    agent_chat, agent_owner
):
    end = f"end-{secrets.token_hex(4)}"

    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk, acks=False)
        await tab.read_until(rb"\$ ")
        await tab.type(f"yes | head -c 5000000; echo; echo {end[:4]}''{end[4:]}\r")
        # It takes in no more than its window and acknowledges nothing...
        while not await tab.communicator.receive_nothing(timeout=2):
            await tab.read_one()
        assert len(tab.output) <= terminal_session.WINDOW + terminal_session.FRAME
        assert tab.close_code is None  # ...and is not dropped: the shell waits for it
        session = TERMINALS.sessions[agent_chat.pk]
        assert sum(len(c) for c in session.scrollback.chunks) < 1_000_000
        # Reading again, it gets every byte, in order, to the end.
        tab.acks = True
        await tab.send_json({"type": "ack", "bytes": len(tab.output)})
        tab.acked = len(tab.output)
        await tab.read_until(rf"\n{end}\r\n".encode(), timeout=60)
        assert tab.output.count(b"y\r\n") == 2_500_000

    run(test)


def test_output_held_back_for_a_tab_that_sets_the_pace_stays_within_one_ssh_window(
    agent_chat, agent_owner, monkeypatch
):
    # Reading pauses and resumes over and over as the tab catches up. asyncssh
    # reopens the whole SSH window when it hands over the first packet it held,
    # so pausing again with packets still held would let each pause hold one
    # window more; the session never pauses half way through handing them over.
    # A window of many packets makes that visible.
    monkeypatch.setattr(shell_module, "SHELL_WINDOW", 512 * 1024)
    end = f"end-{secrets.token_hex(4)}"

    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk)
        await tab.read_until(rb"\$ ")
        session = TERMINALS.sessions[agent_chat.pk]
        await tab.type(f"yes | head -c 8000000; echo; echo {end[:4]}''{end[4:]}\r")
        held = []
        while f"\n{end}\r\n".encode() not in tab.output[-4096:]:
            assert await tab.read_one()
            held.append(session._shell.held)
            await asyncio.sleep(0.002)  # a tab slower than the shell: it sets the pace
        assert len(tab.output) > 8_000_000
        assert max(held) <= 2 * shell_module.SHELL_WINDOW

    run(test)


def test_a_tab_that_takes_nothing_for_too_long_is_dropped_and_the_program_runs_on(
    agent_chat, agent_owner, monkeypatch
):
    monkeypatch.setattr(terminal_session, "MAX_PAUSE", 1.0)
    end = f"end-{secrets.token_hex(4)}"

    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk, acks=False)
        await tab.read_until(rb"\$ ")
        await tab.type(f"yes | head -c 3000000; echo; echo {end[:4]}''{end[4:]}\r")
        assert await tab.closed() == CLOSE_DROPPED
        # Nobody watches now, so nothing holds the shell: it finishes alone.
        session = TERMINALS.sessions[agent_chat.pk]
        await eventually(lambda: f"\n{end}\r\n".encode() in session.scrollback.snapshot(), 30)

    run(test)


# --- what ends a terminal


def test_exiting_the_shell_closes_the_panel_with_the_reason(agent_chat, agent_owner):
    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk)
        await tab.read_until(rb"\$ ")
        await tab.type("exit 7\r")
        closed = await tab.message("closed")
        assert closed["reason"] == "the shell ended (exit status 7)"
        assert await tab.closed() == CLOSE_ENDED
        assert agent_chat.pk not in TERMINALS.sessions
        # The next tab starts a new shell.
        again, _ = await open_tab(agent_owner, agent_chat.pk)
        ready = await again.message("ready")
        assert ready["scrollback"] == 0

    run(test)


def test_the_reaper_closes_a_terminal_nobody_watches(agent_chat, agent_owner, settings):
    settings.TERMINAL_IDLE_SECONDS = 60
    marker = f"{secrets.randbelow(10**6)}.25"

    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk)
        await tab.read_until(rb"\$ ")
        await tab.type(f"sleep {marker}\r")
        await eventually(lambda: processes_matching(f"sleep {marker}"))
        loop = asyncio.get_running_loop()
        assert await TERMINALS.reap_once(now=loop.time() + 3600) == []  # watched: kept
        await tab.communicator.disconnect()
        assert await TERMINALS.reap_once(now=loop.time() + 30) == []  # idle, not for long
        assert await TERMINALS.reap_once(now=loop.time() + 120) == [agent_chat.pk]
        assert agent_chat.pk not in TERMINALS.sessions
        # sshd hangs up the session: the shell and its sleep go.
        await eventually(lambda: not processes_matching(f"sleep {marker}"))

    run(test)


def test_changing_the_profile_closes_its_terminals_and_renaming_does_not(
    agent_chat, agent_owner, sshd
):
    profile = agent_chat.agent_session.profile

    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk)
        await tab.read_until(rb"\$ ")
        await database_sync_to_async(services.profile_update)(profile=profile, name="renamed")
        await tab.type("echo still-here\r")
        await tab.read_until(LINE + rb"still-here\r\n")
        await database_sync_to_async(services.profile_forget_host_key)(profile=profile)
        closed = await tab.message("closed")
        assert "profile changed" in closed["reason"]
        assert await tab.closed() == CLOSE_ENDED

    run(test)


def test_deleting_the_chat_closes_its_terminal(agent_chat, agent_owner):
    async def test():
        tab, _ = await open_tab(agent_owner, agent_chat.pk)
        await tab.read_until(rb"\$ ")
        await database_sync_to_async(chat_delete)(chat=agent_chat)
        closed = await tab.message("closed")
        assert closed["reason"] == "the chat was deleted"

    run(test)


# --- a right taken away ends an open terminal (apps.agents.access)


def _revoke_permission(user) -> None:
    user.groups.clear()


def _unshare(profile, admin) -> None:
    services.profile_share(profile=profile, groups=[], actor=admin)


@pytest.mark.parametrize("taken", ["permission", "share"])
def test_an_open_terminal_ends_when_its_right_is_taken_away(
    agent_owner, agent_member, admin, sshd, settings, taken
):
    """Commands typed into an already open terminal stop working within
    seconds of the permission going, or of the profile being unshared."""
    settings.TERMINAL_ACCESS_CHECK_SECONDS = 1
    family = Group.objects.create(name="family")
    agent_member.groups.add(family)
    profile = pinned_profile(agent_owner, sshd)
    services.profile_share(profile=profile, groups=[family], actor=admin)
    member = type(agent_member).objects.get(pk=agent_member.pk)
    chat = services.agent_chat_create(
        owner=member, profile=profile, project_dir=str(sshd.workdir("proj"))
    )
    marker = sshd.workdir("proj") / f"typed-after-{taken}"

    async def test():
        tab, _ = await open_tab(member, chat.pk)
        await tab.read_until(rb"\$ ")
        if taken == "permission":
            await database_sync_to_async(_revoke_permission)(member)
        else:
            await database_sync_to_async(_unshare)(profile, admin)
        closed = await tab.message("closed", timeout=10)
        expected = {
            "permission": "permission to use agent chats",
            "share": "access to the profile 'box'",
        }[taken]
        assert expected in closed["reason"] and "shell was ended" in closed["reason"]
        assert await tab.closed() == CLOSE_ENDED
        await tab.type(f"touch {marker}\r")  # typed after: reaches nothing
        await asyncio.sleep(0.5)
        assert chat.pk not in TERMINALS.sessions
        again, code = await open_tab(member, chat.pk)
        if again is not None:  # the profile case: the socket opens to say why
            error = await again.message("error")
            assert "no longer shared" in error["message"]
        else:
            assert code is not None

    run(test)
    assert not marker.exists()
