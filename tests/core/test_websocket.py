"""The websocket wiring: refused before accept() without a session, with a
foreign Origin or without one; a socket closes when its session ends."""

import asyncio

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client

from apps.core.consumers import CLOSE_SESSION_ENDED
from jarvis_site.asgi import application
from tests.support.fixtures import signed_in as signed_in_client

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://localhost")


def headers_for(client: Client | None, origin=ORIGIN):
    headers = [(b"host", b"localhost")]
    if origin is not None:
        headers.append(origin)
    if client is not None:
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
    return headers


def connect(headers):
    async def attempt():
        communicator = WebsocketCommunicator(application, "/ws/ping/", headers=headers)
        connected, _code = await communicator.connect()
        greeting = await communicator.receive_from() if connected else None
        await communicator.disconnect()
        return connected, greeting

    return async_to_sync(attempt)()


def test_a_signed_in_user_is_greeted(owner):
    connected, greeting = connect(headers_for(signed_in_client(owner)))
    assert connected
    assert 'data-state="live"' in greeting
    assert "Olivia" in greeting


def test_no_session_is_refused_before_accept(owner):
    connected, _ = connect(headers_for(None))
    assert not connected


def test_a_foreign_origin_is_refused(owner):
    connected, _ = connect(
        headers_for(signed_in_client(owner), (b"origin", b"http://evil.example"))
    )
    assert not connected


def test_a_missing_origin_is_refused(owner):
    connected, _ = connect(headers_for(signed_in_client(owner), origin=None))
    assert not connected


def test_a_disabled_users_session_is_refused(owner):
    client = signed_in_client(owner)
    owner.is_active = False
    owner.save()
    connected, _ = connect(headers_for(client))
    assert not connected


def test_logging_out_closes_the_open_socket(owner):
    client = signed_in_client(owner)

    async def scenario():
        communicator = WebsocketCommunicator(application, "/ws/ping/", headers=headers_for(client))
        connected, _ = await communicator.connect()
        assert connected
        await communicator.receive_from()  # the greeting
        await sync_to_async(client.post)("/accounts/logout/")
        closed = await communicator.receive_output(timeout=3)
        await communicator.disconnect()
        return closed

    closed = async_to_sync(scenario)()
    assert closed == {"type": "websocket.close", "code": CLOSE_SESSION_ENDED}


def test_a_session_ended_elsewhere_closes_the_socket(owner, settings):
    # e.g. `manage.py users disable` from a shell: another process, so the
    # socket notices on its periodic session check.
    settings.WEBSOCKET_SESSION_CHECK_SECONDS = 0.2
    client = signed_in_client(owner)

    async def scenario():
        communicator = WebsocketCommunicator(application, "/ws/ping/", headers=headers_for(client))
        connected, _ = await communicator.connect()
        assert connected
        await communicator.receive_from()
        await sync_to_async(Session.objects.all().delete)()
        closed = await communicator.receive_output(timeout=3)
        await communicator.disconnect()
        return closed

    assert async_to_sync(scenario)() == {"type": "websocket.close", "code": CLOSE_SESSION_ENDED}


def test_a_live_session_keeps_its_socket_through_the_checks(owner, settings):
    settings.WEBSOCKET_SESSION_CHECK_SECONDS = 0.1
    client = signed_in_client(owner)

    async def scenario():
        communicator = WebsocketCommunicator(application, "/ws/ping/", headers=headers_for(client))
        await communicator.connect()
        await communicator.receive_from()
        await asyncio.sleep(0.5)  # several checks of a session that is still valid
        await communicator.send_json_to({"type": "ping"})
        reply = await communicator.receive_json_from()
        await communicator.disconnect()  # and a clean end: the checker did not die
        return reply

    assert async_to_sync(scenario)() == {"type": "pong"}


def test_a_user_disabled_with_the_session_left_is_closed_on_the_next_check(owner, settings):
    settings.WEBSOCKET_SESSION_CHECK_SECONDS = 0.1
    client = signed_in_client(owner)

    async def scenario():
        communicator = WebsocketCommunicator(application, "/ws/ping/", headers=headers_for(client))
        await communicator.connect()
        await communicator.receive_from()
        await sync_to_async(type(owner).objects.filter(pk=owner.pk).update)(is_active=False)
        closed = await communicator.receive_output(timeout=3)
        await communicator.disconnect()
        return closed

    assert async_to_sync(scenario)() == {"type": "websocket.close", "code": CLOSE_SESSION_ENDED}


def test_pings_are_answered(owner):
    client = signed_in_client(owner)

    async def scenario():
        communicator = WebsocketCommunicator(application, "/ws/ping/", headers=headers_for(client))
        await communicator.connect()
        await communicator.receive_from()
        await communicator.send_json_to({"type": "ping"})
        reply = await communicator.receive_json_from()
        await communicator.disconnect()
        return reply

    assert async_to_sync(scenario)() == {"type": "pong"}
