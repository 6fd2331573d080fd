"""Notices reach their owner's open pages over the live socket, and nobody else's;
dismissing one is its owner's alone."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from apps.core.models import Notice
from apps.core.notices import NoticeRelay, notice_send
from jarvis_site.asgi import application
from tests.core.test_websocket import headers_for, signed_in_client


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
class TestDismiss:
    def test_the_owner_dismisses_their_notice(self, owner):
        notice = notice_send(user_id=owner.pk, text="soup.md is ready to search.")
        response = signed_in(owner).post(f"/notices/{notice.pk}/dismiss/")
        assert response.status_code == 200
        notice.refresh_from_db()
        assert notice.dismissed_at is not None

    def test_someone_elses_notice_does_not_exist_for_you(self, owner, member):
        notice = notice_send(user_id=owner.pk, text="soup.md is ready to search.")
        assert signed_in(member).post(f"/notices/{notice.pk}/dismiss/").status_code == 404
        notice.refresh_from_db()
        assert notice.dismissed_at is None


async def _frames(communicator, quiet: float) -> list[str]:
    """Every frame until none comes for `quiet` seconds. (receive_nothing, not a
    receive timeout: a timed-out receive cancels the consumer.)"""
    frames = []
    while not await communicator.receive_nothing(timeout=quiet):
        frames.append(await communicator.receive_from())
    return frames


async def _receive_until(communicator, text: str, timeout: float = 5.0) -> str | None:
    """Frames until one contains `text` (None if none did within `timeout`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for frame in await _frames(communicator, quiet=0.2):
            if text in frame:
                return frame
    return None


@pytest.mark.django_db(transaction=True)
def test_a_notice_written_elsewhere_reaches_only_its_owners_open_page(owner, member):
    owner_headers = headers_for(signed_in_client(owner))
    member_headers = headers_for(signed_in_client(member))

    async def scenario():
        mine = WebsocketCommunicator(application, "/ws/ping/", headers=owner_headers)
        theirs = WebsocketCommunicator(application, "/ws/ping/", headers=member_headers)
        assert (await mine.connect())[0] and (await theirs.connect())[0]
        await mine.receive_from()  # the "Live" greeting
        await theirs.receive_from()
        # As the worker does it: a row in the database, no channel layer.
        await sync_to_async(notice_send)(user_id=owner.pk, text="report.pdf is ready to search.")
        toast = await _receive_until(mine, "report.pdf is ready to search.")
        leaked = await _receive_until(theirs, "report.pdf", timeout=2.5)
        await mine.disconnect()
        await theirs.disconnect()
        return toast, leaked

    toast, leaked = async_to_sync(scenario)()
    assert toast is not None
    assert 'hx-swap-oob="beforeend"' in toast and 'data-testid="toast"' in toast
    assert leaked is None


@pytest.mark.django_db(transaction=True)
def test_a_page_opened_later_shows_undismissed_notices_but_not_dismissed_ones(owner):
    notice_send(
        user_id=owner.pk, text="Could not read scan.pdf: it is encrypted", level=Notice.Level.ERROR
    )
    gone = notice_send(user_id=owner.pk, text="old.pdf is ready to search.")
    Notice.objects.filter(pk=gone.pk).update(dismissed_at=gone.created_at)
    headers = headers_for(signed_in_client(owner))

    async def scenario():
        page = WebsocketCommunicator(application, "/ws/ping/", headers=headers)
        assert (await page.connect())[0]
        frames = await _frames(page, quiet=1.5)
        await page.disconnect()
        return frames

    frames = async_to_sync(scenario)()
    shown = " ".join(frames)
    assert "Could not read scan.pdf: it is encrypted" in shown
    assert "toast--error" in shown
    assert "old.pdf" not in shown


def test_a_page_that_opens_while_the_last_one_closes_keeps_the_relay_running():
    # A navigation: the old page's socket leaves as the new page's joins.
    async def scenario():
        relay = NoticeRelay()
        relay.last_id = 0  # as after the first page: no database read needed
        await relay.join()
        leaving = asyncio.create_task(relay.leave())
        await asyncio.sleep(0)  # the old page is stopping the relay's task
        await relay.join()
        await leaving
        running = relay.task is not None and not relay.task.done()
        await relay.leave()
        return running

    assert async_to_sync(scenario)()
