"""A send flood from one person: refused with words (HTTP 429), through the
real send, regenerate and edit paths; another person is unaffected, and the
limits are counted in the database (so every web process agrees)."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.chats import services
from apps.chats.models import Chat, Message
from apps.core.errors import TooMany

pytestmark = pytest.mark.django_db


def replies(user, n: int, *, status=Message.Status.DONE, age=timedelta(0)) -> list[Message]:
    """`n` replies of `user`'s, each in its own chat, started `age` ago."""
    made = []
    for i in range(n):
        chat = Chat.objects.create(owner=user, title=f"chat {i}")
        question = Message.objects.create(chat=chat, role=Message.Role.USER, text="Hello?")
        reply = Message.objects.create(
            chat=chat,
            parent=question,
            role=Message.Role.ASSISTANT,
            status=status,
            text="Hello.",
            created_at=timezone.now() - age,
        )
        chat.leaf = reply
        chat.save(update_fields=["leaf"])
        made.append(reply)
    return made


def test_too_many_replies_being_written_refuses_the_next_send(owner, member, settings):
    settings.CHAT_MAX_RUNNING_PER_PERSON = 3
    replies(owner, 3, status=Message.Status.STREAMING)
    with pytest.raises(TooMany, match="You already have 3 replies being written"):
        services.turn_start(user=owner, chat=None, text="One more?")
    assert not Chat.objects.filter(owner=owner, title__startswith="One more").exists()
    # Someone else in the household is not held up by it.
    chat, _, answer = services.turn_start(user=member, chat=None, text="Mine?")
    assert chat.owner == member and answer.status == Message.Status.PENDING


def test_replies_waiting_on_the_person_are_not_counted(owner, settings):
    settings.CHAT_MAX_RUNNING_PER_PERSON = 1
    replies(owner, 2, status=Message.Status.WAITING)
    chat, _, _ = services.turn_start(user=owner, chat=None, text="Go on")
    assert chat.owner == owner


def test_a_minute_of_replies_refuses_then_a_minute_later_allows(owner, settings):
    settings.CHAT_MAX_REPLIES_PER_MINUTE = 2
    [done, _] = replies(owner, 2)
    with pytest.raises(TooMany, match="You have started 2 replies in the last minute"):
        services.turn_start(user=owner, chat=done.chat, text="Again")
    Message.objects.filter(chat__owner=owner).update(
        created_at=timezone.now() - timedelta(minutes=2)
    )
    _, question, _ = services.turn_start(user=owner, chat=done.chat, text="Again")
    assert question.text == "Again"


def test_the_send_endpoint_answers_429_with_the_reason(owner, settings):
    settings.CHAT_MAX_REPLIES_PER_MINUTE = 1
    [done] = replies(owner, 1)
    client = Client()
    client.force_login(owner)
    response = client.post(
        reverse("chats:send", args=[done.chat_id]), {"text": "Flood"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 429
    assert "You have started 1 reply in the last minute" in response.content.decode()
    assert not done.chat.messages.filter(text="Flood").exists()


def test_regenerate_counts_too(owner, settings):
    settings.CHAT_MAX_REPLIES_PER_MINUTE = 1
    [done] = replies(owner, 1)
    client = Client()
    client.force_login(owner)
    response = client.post(
        reverse("chats:regenerate", args=[done.chat_id, done.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 429
    assert done.chat.messages.count() == 2
    assert "1 reply in the last minute" in response.content.decode()
