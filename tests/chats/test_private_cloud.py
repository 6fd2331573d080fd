"""A private chat never goes to a cloud model, and says so before anything is
written: by the composer (a 400 with the reason and the next step, for the
one error path in static/js/app.js), not as a failed reply. The header's
badge and picker are rendered for the socket from the chat as saved."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from apps.chats import services
from apps.chats.models import Chat, Message
from apps.chats.pages import chat_header_frame
from apps.core.errors import Refused
from jarvis_site.asgi import application
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


def htmx_client(user) -> Client:
    client = Client(headers={"HX-Request": "true"})
    client.force_login(user)
    return client


@pytest.fixture
def cloud_chat(cloud_user, local_model, cloud_model, llm) -> Chat:
    """A chat on the cloud model that has since become private."""
    llm.queue(Reply(text="The valve was replaced in October."))
    chat, _ = run_turn(cloud_user, "When was the valve replaced?", model="cloud:big")
    Chat.objects.filter(pk=chat.pk).update(private=True)
    chat.refresh_from_db()
    return chat


def test_a_send_is_refused_with_the_model_and_the_next_step_and_nothing_is_written(
    cloud_user, cloud_chat, llm
):
    asked = len(llm.chat_requests)
    response = htmx_client(cloud_user).post(f"/chat/{cloud_chat.pk}/send/", {"text": "Who?"})

    assert response.status_code == 400
    body = response.content.decode()
    assert 'data-testid="refusal"' in body
    assert "can only continue on a local model" in body and "is a cloud model" in body
    assert "Choose a local model in the chat&#x27;s model menu" in body
    assert Message.objects.filter(chat=cloud_chat).count() == 2
    assert len(llm.chat_requests) == asked


def test_regenerating_on_a_local_model_is_the_way_out(cloud_user, cloud_chat):
    reply = cloud_chat.messages.get(role="assistant")
    with pytest.raises(Refused, match="can only continue on a local model"):
        services.reply_regenerate(user=cloud_user, chat=cloud_chat, reply=reply)

    answer = services.reply_regenerate(
        user=cloud_user, chat=cloud_chat, reply=reply, model_label="home:local-7b"
    )
    assert answer.parent_id == reply.parent_id
    cloud_chat.refresh_from_db()
    assert cloud_chat.model_label == "home:local-7b"


def test_the_picker_answers_htmx_with_the_reason_or_the_new_choice(cloud_user, cloud_chat):
    client = htmx_client(cloud_user)
    refused = client.post(f"/chat/{cloud_chat.pk}/model/", {"model": "cloud:big"})
    assert refused.status_code == 400
    assert "can only continue on a local model" in refused.content.decode()

    chosen = client.post(f"/chat/{cloud_chat.pk}/model/", {"model": "home:local-7b"})
    assert chosen.status_code == 200
    html = chosen.content.decode()
    assert 'id="chat-model-choice"' in html and 'hx-swap-oob="true"' in html
    assert '<option value="home:local-7b" selected>' in html
    assert 'value="cloud:big"' not in html  # a private chat's picker lists local models only
    cloud_chat.refresh_from_db()
    assert cloud_chat.model_label == "home:local-7b"


def test_the_header_frame_shows_the_badge_only_for_a_private_chat(
    cloud_user, cloud_chat, local_model, llm
):
    assert 'data-testid="private-badge"' in chat_header_frame(cloud_chat.pk)
    llm.queue(Reply(text="Hi."))
    plain, _ = run_turn(cloud_user, "Hello")
    frame = chat_header_frame(plain.pk)
    assert 'id="chat-private" hidden' in frame and 'data-testid="private-badge"' not in frame
    assert 'value="cloud:big"' in frame


def test_a_socket_that_opens_after_the_reply_gets_the_header_as_saved(cloud_user, cloud_chat):
    client = Client()
    client.force_login(cloud_user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    headers = [
        (b"host", b"localhost"),
        (b"origin", b"http://localhost"),
        (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()),
    ]

    async def first_frame():
        socket = WebsocketCommunicator(application, f"/ws/chats/{cloud_chat.pk}/", headers=headers)
        connected, _ = await socket.connect()
        assert connected
        frame = await socket.receive_from(timeout=5)
        await socket.disconnect()
        return frame

    frame = async_to_sync(first_frame)()
    assert 'id="chat-private" hx-swap-oob="true"' in frame
    assert 'data-testid="private-badge"' in frame
