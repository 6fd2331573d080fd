"""Notices reach their owner's open pages over the live socket, and nobody else's;
dismissing one is its owner's alone."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator

from apps.core import bridge
from apps.core.models import Notice
from apps.core.notices import group_notices, notice_send, toasts_for
from jarvis_site.asgi import application
from tests.core.test_websocket import headers_for, signed_in_client
from tests.support.fixtures import signed_in


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
def test_a_notice_reaches_only_its_owners_open_page_through_the_channel_layer(
    owner, member, settings
):
    settings.NOTICE_CATCH_UP_SECONDS = 3600  # no catch-up in this test: the layer brings it
    owner_headers = headers_for(signed_in_client(owner))
    member_headers = headers_for(signed_in_client(member))

    async def scenario():
        mine = WebsocketCommunicator(application, "/ws/ping/", headers=owner_headers)
        theirs = WebsocketCommunicator(application, "/ws/ping/", headers=member_headers)
        assert (await mine.connect())[0] and (await theirs.connect())[0]
        await mine.receive_from()  # the "Live" greeting
        await theirs.receive_from()
        # In this process: the row, then notice.created through the channel layer.
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
def test_a_page_opened_later_shows_unseen_notices_as_toasts_and_seen_ones_in_the_bell(owner):
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
    toasts = " ".join(frame for frame in frames if 'data-testid="toast"' in frame)
    assert "Could not read scan.pdf: it is encrypted" in toasts
    assert "toast--error" in toasts
    assert "old.pdf" not in toasts
    # The bell still lists it: seen, of the last day.
    bell = " ".join(frame for frame in frames if 'id="bell-list"' in frame)
    assert "old.pdf is ready to search." in bell


@pytest.mark.django_db(transaction=True)
def test_where_no_bridge_listens_a_notice_arrives_by_the_catch_up(owner, settings, monkeypatch):
    # A web process that could not open its bridge (apps.core.bridge: the
    # socket taken, a read-only data dir) hears nothing from the worker, so the
    # row alone is what this page can find, by asking every few seconds.
    monkeypatch.setitem(bridge._state, "serving", False)
    settings.NOTICE_CATCH_UP_SECONDS = 0.2
    headers = headers_for(signed_in_client(owner))

    async def scenario():
        page = WebsocketCommunicator(application, "/ws/ping/", headers=headers)
        assert (await page.connect())[0]
        await _frames(page, quiet=0.3)
        await sync_to_async(Notice.objects.create)(
            user=owner, text="worker.pdf is ready to search."
        )
        toast = await _receive_until(page, "worker.pdf is ready to search.")
        again = await _receive_until(page, "worker.pdf", timeout=1.0)
        await page.disconnect()
        return toast, again

    toast, again = async_to_sync(scenario)()
    assert toast is not None
    assert again is None  # shown once, not at every tick


def _notice(user, text, *, kind="document", subject="", level=Notice.Level.OK, ago=0):
    notice = notice_send(user_id=user.pk, text=text, kind=kind, subject=subject, level=level)
    when = notice.created_at - timedelta(seconds=ago)
    Notice.objects.filter(pk=notice.pk).update(created_at=when)
    notice.created_at = when
    return notice


@pytest.mark.django_db
class TestGrouping:
    def test_files_ready_together_are_one_toast_and_failures_another(self, owner):
        _notice(owner, "a.pdf is ready to search.", subject="a.pdf", ago=30)
        _notice(owner, "Could not read x.pdf: encrypted", subject="x.pdf", level="error", ago=25)
        _notice(owner, "b.docx is ready to search.", subject="b.docx", ago=20)
        _notice(owner, "c.md is ready to search.", subject="c.md", ago=10)
        texts = [group.text for group in toasts_for(owner)]
        assert texts == ["3 files ready: a.pdf, b.docx, c.md", "Could not read x.pdf: encrypted"]

    def test_several_failures_are_listed_with_their_reasons(self, owner):
        _notice(owner, "Could not read x.pdf: encrypted", subject="x.pdf", level="error", ago=5)
        _notice(owner, "Could not read y.doc: empty", subject="y.doc", level="error")
        (group,) = toasts_for(owner)
        assert group.text == (
            "2 files could not be read: Could not read x.pdf: encrypted; "
            "Could not read y.doc: empty"
        )

    def test_notices_far_apart_or_of_no_kind_stay_apart(self, owner):
        _notice(owner, "a.pdf is ready to search.", subject="a.pdf", ago=3600)
        _notice(owner, "b.pdf is ready to search.", subject="b.pdf")
        _notice(owner, "Your paper digest is ready.", kind="")
        _notice(owner, "Another digest is ready.", kind="")
        assert [len(group.notices) for group in toasts_for(owner)] == [1, 1, 1, 1]

    def test_a_growing_group_keeps_its_toast(self, owner):
        first = _notice(owner, "a.pdf is ready to search.", subject="a.pdf", ago=5)
        before = group_notices([first])[0].key
        _notice(owner, "b.pdf is ready to search.", subject="b.pdf")
        (after,) = toasts_for(owner)
        assert after.key == before and len(after.notices) == 2


@pytest.mark.django_db
class TestSeen:
    def test_seen_notices_are_not_toasts_again_but_stay_in_the_bell(self, owner):
        a = _notice(owner, "a.pdf is ready to search.", subject="a.pdf", ago=5)
        b = _notice(owner, "b.pdf is ready to search.", subject="b.pdf")
        response = signed_in(owner).post("/notices/seen/", {"ids": [a.pk, b.pk]})
        assert response.status_code == 200
        assert toasts_for(owner) == []
        page = signed_in(owner).get("/jobs/").content.decode()
        assert 'data-testid="bell"' in page
        bell = response.content.decode()
        assert "a.pdf is ready to search." in bell and "b.pdf is ready to search." in bell
        assert 'data-unseen="0"' in bell

    def test_someone_elses_ids_are_not_marked(self, owner, member):
        theirs = _notice(owner, "a.pdf is ready to search.", subject="a.pdf")
        response = signed_in(member).post("/notices/seen/", {"ids": [theirs.pk]})
        assert response.status_code == 200
        assert "a.pdf" not in response.content.decode()
        theirs.refresh_from_db()
        assert theirs.dismissed_at is None

    def test_the_bell_lists_the_last_day_only(self, owner):
        _notice(owner, "old.pdf is ready to search.", subject="old.pdf", ago=2 * 86400)
        _notice(owner, "new.pdf is ready to search.", subject="new.pdf")
        bell = signed_in(owner).post("/notices/seen/", {"ids": []}).content.decode()
        assert "new.pdf" in bell and "old.pdf" not in bell
        assert 'data-unseen="1"' in bell
