"""The worker's notices reach open pages at once on the default in-memory
layer, through the web process's bridge (apps.core.bridge), with no catch-up
polling; what may cross is only what pages listen for."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from apps.core import bridge
from apps.core.models import Notice
from jarvis_site.asgi import application
from tests.support.processes import manage
from tests.support.sockets import session_headers

pytestmark = pytest.mark.django_db(transaction=True)


def worker_notice(user, text: str) -> None:
    """What the worker does when a file is ready: another process writes the
    notice (the same call the jobs make)."""
    code = (
        f"from apps.core.notices import notice_send; notice_send(user_id={user.pk}, text={text!r})"
    )
    result = manage("shell", "-c", code)
    assert result.returncode == 0, result.stderr


def raw_send(data: bytes) -> None:
    """Bytes written to the bridge's socket by hand, as any local process could."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(bridge.socket_path()))
        conn.sendall(data)


def page_while(user, during, *, wait: float = 8.0, until: str = "toast") -> list[str]:
    """The person's open page (its ping socket) in this process, which serves
    the bridge as the web process does; `during()` runs off the event loop;
    returns the frames of the next `wait` seconds (or until one holds `until`)."""
    headers = session_headers(user)

    async def talk():
        server = asyncio.create_task(bridge.serve())  # at_start starts it once per process
        loop = asyncio.get_running_loop()
        while not bridge.serving_here() and not server.done():
            await asyncio.sleep(0.02)
        page = WebsocketCommunicator(application, "/ws/ping/", headers=headers)
        assert (await page.connect())[0]
        await page.receive_from(timeout=5)  # "Live"
        await asyncio.to_thread(during)
        frames: list[str] = []
        deadline = loop.time() + wait
        # receive_nothing, not a receive timeout: a timed-out receive cancels the consumer.
        while loop.time() < deadline and not any(until in frame for frame in frames):
            if not await page.receive_nothing(timeout=0.2):
                frames.append(await page.receive_from())
        await page.disconnect()
        server.cancel()
        return frames

    return async_to_sync(talk)()


def test_a_notice_the_worker_writes_reaches_the_open_page_at_once(owner, settings):
    settings.NOTICE_CATCH_UP_SECONDS = 3600  # no polling could bring it in time
    frames = page_while(owner, lambda: worker_notice(owner, "Survey.pdf is ready to search."))
    assert any("Survey.pdf is ready to search." in frame for frame in frames)


def test_only_what_pages_listen_for_crosses_and_junk_breaks_nothing(owner, member, settings):
    settings.NOTICE_CATCH_UP_SECONDS = 3600

    def hostile_then_real():
        raw_send(b"not json at all\n")
        raw_send(json.dumps({"group": "notices", "message": {"type": "notice.created"}}).encode())
        # A type pages take from the web process only, to a group of the right shape.
        forged = {"type": "session.ended"}
        raw_send((json.dumps({"group": f"notices.{owner.pk}", "message": forged}) + "\n").encode())
        raw_send(b"x" * (bridge.MAX_LINE + 10) + b"\n")  # past the line limit
        worker_notice(owner, "Still here.pdf is ready to search.")

    frames = page_while(owner, hostile_then_real)
    # The page was not closed by the forged "session ended" and the real notice came.
    assert any("Still here.pdf is ready to search." in frame for frame in frames)


def test_someone_elses_notice_does_not_reach_this_page(owner, member, settings):
    settings.NOTICE_CATCH_UP_SECONDS = 3600
    frames = page_while(member, lambda: worker_notice(owner, "Owner.pdf is ready."), wait=4.0)
    assert not any("Owner.pdf" in frame for frame in frames)


def test_the_socket_is_the_owners_only(owner):
    modes = []

    def look():
        modes.append(stat.S_IMODE(os.stat(bridge.socket_path()).st_mode))

    page_while(owner, look, wait=0.5)
    assert modes == [0o600]


def test_with_no_web_process_listening_the_worker_writes_the_notice_and_goes_on(owner):
    # No bridge serves (the web process is down): the job neither fails nor
    # waits; the page shows the notice when it next opens (its first catch-up).
    worker_notice(owner, "Offline.pdf is ready to search.")
    assert Notice.objects.filter(user=owner, text="Offline.pdf is ready to search.").exists()


def test_a_password_changed_from_the_command_line_closes_the_open_page_at_once(owner, settings):
    settings.WEBSOCKET_SESSION_CHECK_SECONDS = 3600  # the periodic check could not do it in time
    headers = session_headers(owner)

    async def talk():
        server = asyncio.create_task(bridge.serve())
        while not bridge.serving_here() and not server.done():
            await asyncio.sleep(0.02)
        page = WebsocketCommunicator(application, "/ws/ping/", headers=headers)
        assert (await page.connect())[0]
        await page.receive_from(timeout=5)  # "Live"
        result = await asyncio.to_thread(
            manage,
            "users",
            "set-password",
            owner.username,
            "--password-stdin",
            input="n3w-Pass!x\n",
        )
        assert result.returncode == 0, result.stderr
        closed = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 8
        while closed is None and loop.time() < deadline:
            if not await page.receive_nothing(timeout=0.2):
                output = await page.receive_output()
                if output["type"] == "websocket.close":
                    closed = output
        server.cancel()
        return closed

    closed = async_to_sync(talk)()
    assert closed is not None
