"""A channel layer the processes share (JARVIS_CHANNEL_LAYER=redis://…), on a
real Redis (Debian's redis-server on a loopback port): a notice written by
another process reaches an open page through it, with no catch-up polling;
and when that Redis goes away, sockets still open, replies still run and a
notice still shows (by the socket's own catch-up)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from asgiref.sync import async_to_sync
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator

from apps.chats import services
from apps.chats.live import REGISTRY
from apps.chats.models import Message
from apps.chats.runner import reply_start
from apps.core.notices import notice_send
from jarvis_site.asgi import application
from jarvis_site.env import env_channel_layers
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn
from tests.support.processes import manage
from tests.support.sockets import session_headers

pytestmark = pytest.mark.django_db(transaction=True)


def use_layer(settings, url: str, monkeypatch) -> None:
    """This process's layer becomes the Redis one, configured exactly as
    JARVIS_CHANNEL_LAYER configures it."""
    monkeypatch.setenv("JARVIS_CHANNEL_LAYER", url)
    settings.CHANNEL_LAYERS = env_channel_layers("JARVIS_CHANNEL_LAYER")
    channel_layers.backends.clear()


@pytest.fixture(autouse=True)
def fresh_layers():
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def ping_then(user, during, *, wait: float = 10) -> list[str]:
    """Open the page's ping socket, run `during()` off the event loop, and
    return what the socket sent in the next `wait` seconds."""
    headers = session_headers(user)

    async def talk():
        communicator = WebsocketCommunicator(application, "/ws/ping/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        await communicator.receive_from(timeout=5)  # "Live"
        await asyncio.to_thread(during)
        frames = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while loop.time() < deadline:
            try:
                frames.append(await communicator.receive_from(timeout=deadline - loop.time()))
            except TimeoutError:
                break
            if any("toast" in frame for frame in frames):
                break
        await communicator.disconnect()
        return frames

    return async_to_sync(talk)()


def test_a_notice_from_another_process_arrives_through_redis(owner, settings, redis, monkeypatch):
    use_layer(settings, redis.url, monkeypatch)
    settings.NOTICE_CATCH_UP_SECONDS = 3600  # the catch-up could not bring it in time

    def worker_writes():  # another process, as the worker is
        code = f"from apps.core.notices import notice_send; notice_send(user_id={owner.pk}, text='Survey.pdf is ready')"
        result = manage("shell", "-c", code, JARVIS_CHANNEL_LAYER=redis.url)
        assert result.returncode == 0, result.stderr

    frames = ping_then(owner, worker_writes)
    assert any("Survey.pdf is ready" in frame for frame in frames)


def test_while_redis_is_away_replies_run_and_nothing_is_lost(
    owner, settings, redis, local_model, llm, monkeypatch
):
    use_layer(settings, redis.url, monkeypatch)
    redis.stop()
    # A chat reply does not need the layer to run: it runs and is saved whole.
    llm.queue(Reply(text="Still answering [1]."))
    _, answer = run_turn(owner, "Anything?")
    assert answer.status == Message.Status.DONE and answer.text.startswith("Still answering")
    # A notice is written though nobody can be told now (logged, not raised)…
    notice_send(user_id=owner.pk, text="Back up done")

    # …and when Redis is back, the page's socket opens and shows it.
    redis.start()
    channel_layers.backends.clear()  # a fresh connection pool, as a reconnecting page gets
    frames = ping_then(owner, lambda: None, wait=3)
    assert any("Back up done" in frame for frame in frames)


def test_redis_going_away_mid_stream_the_reply_goes_on_and_is_saved_whole(
    owner, settings, redis, local_model, llm, monkeypatch
):
    """The page's socket follows the reply through Redis; Redis stops while
    the reply streams: the reply goes on in its process (its frames are
    dropped, logged once) and is saved whole."""
    use_layer(settings, redis.url, monkeypatch)
    text = " ".join(f"Word {n} of the answer is kept." for n in range(40))  # no repeats
    llm.queue(Reply(text=text, chunk_chars=6, delay=0.03))  # about 2 s
    chat, _ = run_turn(owner, "first")  # the chat the socket follows
    llm.queue(Reply(text=text, chunk_chars=6, delay=0.03))
    headers = session_headers(owner)

    async def follow():
        communicator = WebsocketCommunicator(application, f"/ws/chats/{chat.pk}/", headers=headers)
        assert (await communicator.connect())[0]
        await communicator.receive_from(timeout=5)  # the latest reply, sent on connect
        answer = await asyncio.to_thread(start_turn, owner, chat)
        reply_start(answer.pk, chat.pk)
        seen = await communicator.receive_from(timeout=10)  # a frame through Redis
        await asyncio.to_thread(redis.stop)
        reply = REGISTRY.running(answer.pk)
        if reply is not None:
            await asyncio.wait_for(reply.task, 30)
        with contextlib.suppress(Exception):  # closed, or nothing more: either way no frame
            await communicator.disconnect()
        return answer, seen

    answer, seen = async_to_sync(follow)()
    assert f"msg-{answer.pk}" in seen
    answer.refresh_from_db()
    assert answer.status == Message.Status.DONE and answer.text == text


def start_turn(user, chat):
    """The rows of a turn, as the send view writes them."""
    _, _, answer = services.turn_start(user=user, chat=chat, text="Tell me everything")
    return answer
