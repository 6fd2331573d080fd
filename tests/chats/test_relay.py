"""The path a chat's frames take (apps.chats.relay) and the owner of a
running reply (apps.chats.owner). One process: a socket gets the frames of
the replies run here in order, without the layer. With a layer that spans
processes (simulated on the in-memory layer, whose group code is the same):
frames reach the chat's group in order, a process's own frames are not
handed to its sockets twice and another's are, a layer that fails loses no
reply, an outbox that overflowed owes the chat one resync, and a Stop or a
"send it whole" asked through the layer reaches the process running the
reply. Across two real processes on Redis: tests/e2e/test_two_processes.py."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from channels.layers import channel_layers, get_channel_layer
from django.utils import timezone

from apps.chats import owner as reply_owner
from apps.chats import relay
from apps.chats.live import REGISTRY
from apps.chats.models import Chat, Message
from apps.chats.reply import Generation

CHAT = 515151


@pytest.fixture(autouse=True)
def fresh_layer():
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


async def listen(group: str) -> tuple[object, str]:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return layer, channel


async def received(layer, channel: str, count: int) -> list[dict]:
    return [await asyncio.wait_for(layer.receive(channel), 5) for _ in range(count)]


@pytest.fixture
def spanning(monkeypatch):
    """The layer reaches other processes (as Redis does)."""
    monkeypatch.setattr(relay, "layer_spans_processes", lambda: True)


def queued(queue: relay.FrameQueue) -> list[str]:
    return [queue.queue.get_nowait() for _ in range(queue.queue.qsize())]


def test_one_process_a_socket_gets_the_frames_in_order_without_the_layer(monkeypatch):
    async def run():
        sent = []
        monkeypatch.setattr(get_channel_layer(), "group_send", lambda *a: sent.append(a))
        queue = relay.FrameQueue()
        await relay.follow(CHAT, queue)
        for n in range(5):
            relay.publish(CHAT, f"frame {n}")
        relay.publish(CHAT + 1, "another chat's")
        await relay.unfollow(CHAT, queue)
        relay.publish(CHAT, "after leaving")
        return queued(queue), sent

    frames, sent = asyncio.run(run())
    assert frames == [f"frame {n}" for n in range(5)]
    assert sent == []  # the in-memory layer reaches no other process: not used


def test_spanning_own_frames_once_and_another_processs_frames_too(spanning):
    async def run():
        queue = relay.FrameQueue()
        await relay.follow(CHAT, queue)
        for n in range(3):
            relay.publish(CHAT, f"here {n}")
        await asyncio.sleep(0.1)  # this process's frames came back through the group
        frame = {"type": "chat.frame", "chat_id": CHAT, "html": "from B", "origin": "other"}
        await get_channel_layer().group_send(relay.chat_group(CHAT), frame)
        resync = {"type": "chat.resync", "chat_id": CHAT, "origin": "other"}
        await get_channel_layer().group_send(relay.chat_group(CHAT), resync)
        await asyncio.sleep(0.1)
        await relay.unfollow(CHAT, queue)
        return queued(queue)

    assert asyncio.run(run()) == ["here 0", "here 1", "here 2", "from B", relay.RESYNC]


def test_frames_reach_the_chats_group_in_the_order_they_were_made(spanning):
    async def run():
        layer, channel = await listen(relay.chat_group(CHAT))
        messages = []
        for n in range(50):
            relay.publish(CHAT, f"<i>{n}</i>")
            if n % 7 == 0:  # now and then the sender gets a turn
                messages += await received(layer, channel, 1)
        while sum(m["html"].count("<i>") for m in messages) < 50:
            messages += await received(layer, channel, 1)
        return messages

    messages = asyncio.run(run())
    # Frames that waited behind one another went as one message, in order.
    assert "".join(m["html"] for m in messages) == "".join(f"<i>{n}</i>" for n in range(50))
    assert {m["type"] for m in messages} == {"chat.frame"}
    assert 1 < len(messages) < 50


def test_a_layer_that_fails_is_logged_and_the_frames_after_it_still_go(
    spanning, monkeypatch, caplog
):
    async def run():
        layer, channel = await listen(relay.chat_group(CHAT))
        real = layer.group_send
        calls = {"n": 0}

        async def flaky(group, message):
            calls["n"] += 1
            if calls["n"] == 1:
                raise ConnectionError("redis went away")
            await real(group, message)

        monkeypatch.setattr(layer, "group_send", flaky)
        relay.publish(CHAT, "lost")
        await asyncio.sleep(0.05)  # the sender tried it and failed
        relay.publish(CHAT, "kept")
        return await received(layer, channel, 1)

    (message,) = asyncio.run(run())
    assert message["html"] == "kept"
    assert "could not reach the channel layer" in caplog.text


def test_an_outbox_that_overflowed_owes_the_chat_one_resync(spanning, monkeypatch):
    monkeypatch.setattr(relay, "LANE_FRAMES", 5)

    async def run():
        layer, channel = await listen(relay.chat_group(CHAT))
        for n in range(12):  # no await between: the sender cannot keep up
            relay.publish(CHAT, f"<i>{n}</i>")
        return await received(layer, channel, 2)

    frames, resync = asyncio.run(run())
    assert frames["html"] == "".join(f"<i>{n}</i>" for n in range(5))  # the lane's five
    assert resync == {"type": "chat.resync", "chat_id": CHAT, "origin": relay.ORIGIN}


def test_stop_and_whole_asked_through_the_layer_reach_the_running_reply():
    async def run():
        layer, socket = await listen("unrelated")
        generation = Generation(pk=979797, chat_id=CHAT, status=Message.Status.STREAMING)
        generation.text = "Half of the answer"
        stopped = asyncio.Event()

        async def work():
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                stopped.set()
                raise

        REGISTRY.start(generation, work())
        try:
            await reply_owner.claim(CHAT)
            relay.whole_wanted(CHAT, socket)
            (whole,) = await received(layer, socket, 1)
            relay.stop_elsewhere(CHAT, generation.pk)
            await asyncio.wait_for(stopped.wait(), 5)
        finally:
            REGISTRY.finished(generation)
            await reply_owner.release(CHAT)
        return whole

    whole = asyncio.run(run())
    assert whole["type"] == "chat.frame"
    assert "Half of the answer" in whole["html"] and 'id="composer-actions"' in whole["html"]


def left_streaming(user) -> Message:
    chat = Chat.objects.create(owner=user, title="in flight")
    return Message.objects.create(
        chat=chat, role=Message.Role.ASSISTANT, status=Message.Status.STREAMING, text="Half"
    )


@pytest.mark.django_db
def test_with_a_shared_layer_only_a_reply_nobody_touched_for_a_lease_is_swept(owner, settings):
    """Several web processes: a reply in flight in the database may be a
    sibling's, which touches it every HEARTBEAT seconds; one untouched for
    LEASE seconds is an orphan and is marked interrupted."""
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer", "CONFIG": {}}
    }
    fresh, stale = left_streaming(owner), left_streaming(owner)
    long_ago = timezone.now() - timedelta(seconds=reply_owner.LEASE + 5)
    Message.objects.filter(pk=stale.pk).update(updated_at=long_ago)
    assert reply_owner.interrupted_sweep() == 1
    statuses = dict(Message.objects.values_list("pk", "status"))
    assert statuses == {fresh.pk: "streaming", stale.pk: "interrupted"}
