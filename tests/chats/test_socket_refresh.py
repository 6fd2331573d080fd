"""The page can ask its chat socket for a reply as it is now: after a send
whose first frames beat the POST's response, or a reply that ended between
the page render and the socket opening."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from apps.chats.live import REGISTRY
from apps.chats.models import Message
from apps.chats.relay import LISTENER_FRAMES
from apps.chats.reply import Generation
from jarvis_site.asgi import application
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn
from tests.support.sockets import session_headers

pytestmark = pytest.mark.django_db(transaction=True)


def ask(user, chat_id: int, *messages: dict) -> list[str]:
    headers = session_headers(user)

    async def talk():
        communicator = WebsocketCommunicator(application, f"/ws/chats/{chat_id}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        await communicator.receive_from(timeout=5)  # the latest reply, sent on connect
        frames = []
        for message in messages:
            await communicator.send_to(text_data=json.dumps(message))
            if await communicator.receive_nothing(timeout=0.5):
                continue
            frames.append(await communicator.receive_from())
        await communicator.disconnect()
        return frames

    return async_to_sync(talk)()


def test_a_finished_reply_is_sent_as_it_was_saved(owner, local_model, llm):
    llm.queue(Reply(text="The boiler was serviced in **March**."))
    chat, answer = run_turn(owner, "When was the boiler serviced?")
    (frame,) = ask(owner, chat.pk, {"refresh": answer.pk})
    assert f'id="msg-{answer.pk}-answer"' in frame and "<strong>March</strong>" in frame
    assert 'id="composer-actions"' in frame  # the composer turns back to Send


def test_only_replies_of_this_chat_are_sent(owner, member, local_model, llm):
    llm.queue(Reply(text="mine"), Reply(text="theirs"))
    chat, _ = run_turn(owner, "one")
    _, other_answer = run_turn(member, "two")
    frames = ask(owner, chat.pk, {"refresh": other_answer.pk}, {"refresh": "x"}, {"nonsense": 1})
    assert frames == []


def test_a_socket_that_opens_after_the_reply_ended_gets_it_as_saved(owner, local_model, llm):
    llm.queue(Reply(text="Finished before you looked."))
    chat, answer = run_turn(owner, "quick one")
    headers = session_headers(owner)

    async def connect():
        communicator = WebsocketCommunicator(application, f"/ws/chats/{chat.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        frame = await communicator.receive_from(timeout=5)
        await communicator.disconnect()
        return frame

    frame = async_to_sync(connect)()
    assert f'id="msg-{answer.pk}-answer"' in frame and "Finished before you looked." in frame


def test_a_finished_reply_comes_with_the_chats_token_use(owner, local_model, llm):
    # A page that missed the final frame learns the chat's new total too.
    llm.queue(Reply(text="One.", usage=(100, 5)), Reply(text="Two.", usage=(200, 7), cost=0.002))
    chat, _ = run_turn(owner, "first")
    chat, answer = run_turn(owner, "second", chat=chat)
    (frame,) = ask(owner, chat.pk, {"refresh": answer.pk})
    assert "200 tokens in · 7 out · $0.0020" in frame  # the reply's own
    assert 'id="chat-usage"' in frame and "300 tokens in · 12 out · $0.0020" in frame


def test_a_socket_that_fell_behind_is_sent_the_reply_whole(owner, local_model, llm):
    """Frames published faster than a socket reads overflow its queue
    (relay.LISTENER_FRAMES): it is then sent the running reply as it is now,
    whole, rather than the pieces it missed (which it could not join up)."""
    llm.queue(Reply(text="Earlier."))
    chat, _ = run_turn(owner, "first")
    headers = session_headers(owner)
    generation = Generation(pk=987654, chat_id=chat.pk, status=Message.Status.STREAMING)
    generation.text = "The whole answer so far"

    async def behind():
        communicator = WebsocketCommunicator(application, f"/ws/chats/{chat.pk}/", headers=headers)
        assert (await communicator.connect())[0]
        await communicator.receive_from(timeout=5)  # the latest reply, sent on connect
        REGISTRY.generations[generation.pk] = generation
        try:
            # One burst with no await between: the socket's sender cannot read.
            for n in range(LISTENER_FRAMES + 1):
                REGISTRY.publish(chat.pk, f'<span id="piece-{n}"></span>')
            frame = await communicator.receive_from(timeout=5)
            quiet = await communicator.receive_nothing(timeout=0.3)
        finally:
            REGISTRY.generations.pop(generation.pk, None)
            await communicator.disconnect()
        return frame, quiet

    frame, quiet = async_to_sync(behind)()
    assert "The whole answer so far" in frame and 'id="composer-actions"' in frame
    assert "piece-" not in frame and quiet  # none of the dropped pieces follow
