"""Sends first: while a one-hop request (a chat send) is in flight, a reply's
setup waits for it, for a bounded time, through the real ASGI handler."""

import asyncio
import threading

import pytest
from django.http import HttpResponse
from django.test import AsyncRequestFactory
from django.urls import path

from apps.core import onehop

RELEASE = threading.Event()


@onehop.one_hop
def slow_send(request):
    # Stands for a send whose database work takes a while.
    RELEASE.wait(5)
    return HttpResponse("sent")


def plain(request):
    return HttpResponse("plain")


urlpatterns = [path("send/", slow_send), path("plain/", plain)]


def run(coro):
    return asyncio.run(coro)


@pytest.mark.urls("tests.core.test_one_hop")
@pytest.mark.django_db(transaction=True)
def test_a_reply_setup_waits_for_the_send_in_flight():
    handler = onehop.OneHopHandler()
    RELEASE.clear()

    async def scenario():
        order = []
        send = asyncio.create_task(handler.get_response_async(AsyncRequestFactory().get("/send/")))
        await asyncio.sleep(0.1)

        async def reply_setup():
            await onehop.after_sends(most=5)
            order.append("reply setup")

        setup = asyncio.create_task(reply_setup())
        await asyncio.sleep(0.2)
        assert not setup.done(), "the reply's setup went ahead of the send in flight"
        RELEASE.set()
        response = await send
        order.append("send answered")
        await setup
        return response, order

    response, order = run(scenario())
    assert response.content == b"sent"
    assert order == ["send answered", "reply setup"]


@pytest.mark.urls("tests.core.test_one_hop")
@pytest.mark.django_db(transaction=True)
def test_a_reply_waits_no_longer_than_its_bound():
    handler = onehop.OneHopHandler()
    RELEASE.clear()

    async def scenario():
        send = asyncio.create_task(handler.get_response_async(AsyncRequestFactory().get("/send/")))
        await asyncio.sleep(0.1)
        await onehop.after_sends(most=0.2)
        waited_out = not send.done()
        RELEASE.set()
        await send
        return waited_out

    assert run(scenario()), "the reply should start once its bound runs out"


@pytest.mark.urls("tests.core.test_one_hop")
@pytest.mark.django_db(transaction=True)
def test_other_requests_do_not_hold_replies_back():
    handler = onehop.OneHopHandler()

    async def scenario():
        response = await handler.get_response_async(AsyncRequestFactory().get("/plain/"))
        # Nothing one-hop in flight: the setup goes ahead at once.
        await asyncio.wait_for(onehop.after_sends(most=5), 0.5)
        return response

    assert run(scenario()).content == b"plain"
