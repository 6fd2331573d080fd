"""What "in flight" means, defined once (Message.IN_FLIGHT, Message.WRITING)
and pinned here through every place that asks: a reply waiting for the
person's answer on a card is in flight for the page (Stop, no usage line, no
second turn in the chat) but is not being written: the flood limit does not
count it, a restart does not mark it interrupted, and a late periodic save
does not overwrite it."""

from __future__ import annotations

import pytest

from apps.chats import frames, services
from apps.chats.flood import flood_check
from apps.chats.models import Chat, Message
from apps.chats.owner import interrupted_sweep
from apps.chats.reply import Reply
from apps.chats.saving import save_batch
from apps.chats.selectors import busy_message_for
from apps.core.errors import Conflict, TooMany

pytestmark = pytest.mark.django_db

S = Message.Status
# status: (in flight for the page, being written by a task)
MEANING = {
    S.PENDING: (True, True),
    S.STREAMING: (True, True),
    S.WAITING: (True, False),
    S.DONE: (False, False),
    S.STOPPED: (False, False),
    S.ERROR: (False, False),
    S.INTERRUPTED: (False, False),
}


def test_every_status_has_a_meaning():
    assert set(MEANING) == set(S)


def a_reply(user, status: str) -> Message:
    chat = Chat.objects.create(owner=user, title="boiler")
    question = Message.objects.create(chat=chat, role=Message.Role.USER, text="When?")
    reply = Message.objects.create(
        chat=chat, parent=question, role=Message.Role.ASSISTANT, status=status, text="In March"
    )
    chat.leaf = reply
    chat.save(update_fields=["leaf"])
    return reply


@pytest.mark.parametrize("status", list(MEANING))
def test_in_flight_for_the_page(owner, status):
    in_flight, _ = MEANING[status]
    reply = a_reply(owner, status)
    assert reply.in_flight is in_flight
    assert Reply.of(reply).in_flight is in_flight
    assert (busy_message_for(chat=reply.chat) == reply) is in_flight
    html = frames.render_blocks(Reply.of(reply), composer=True)
    assert ('data-testid="stop"' in html) is in_flight
    assert ('data-testid="usage"' in html) is not in_flight
    if in_flight:  # one turn at a time per chat
        with pytest.raises(Conflict):
            services.turn_start(user=owner, chat=reply.chat, text="And?")
    else:
        services.turn_start(user=owner, chat=reply.chat, text="And?")


@pytest.mark.parametrize("status", list(MEANING))
def test_being_written_by_a_task(owner, settings, status):
    _, written = MEANING[status]
    reply = a_reply(owner, status)
    assert Reply.of(reply).being_written is written

    settings.CHAT_MAX_RUNNING_PER_PERSON = 1
    if written:
        with pytest.raises(TooMany):
            flood_check(owner)
    else:
        flood_check(owner)

    # A periodic save that lands late changes only a reply still being written.
    late = Reply.of(reply)
    late.text = "In Ma"
    save_batch([late.snapshot()])
    reply.refresh_from_db()
    assert (reply.text == "In Ma") is written

    # A restart marks interrupted only what a task of the ended process was writing.
    assert interrupted_sweep() == int(written)
    reply.refresh_from_db()
    assert reply.status == (S.INTERRUPTED if written else status)
