"""The server side of the composer's /private: a chat made private by hand
stays on local models; a chat on a cloud model is refused with what to do;
a new chat can start private. Only the chat's owner, with the CSRF token."""

from __future__ import annotations

import pytest

from apps.chats.models import Chat, Message
from tests.fakes.llm import Reply
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_private_marks_a_chat_on_a_local_model(owner, local_model):
    chat = Chat.objects.create(owner=owner, title="Tax")
    response = signed_in(owner).post(f"/chat/{chat.pk}/private/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "private now" in response["Jarvis-Said"]
    assert 'data-testid="private-badge"' in response.content.decode()
    chat.refresh_from_db()
    assert chat.private
    # Again: nothing changes, and it says so.
    again = signed_in(owner).post(f"/chat/{chat.pk}/private/", HTTP_HX_REQUEST="true")
    assert "already private" in again["Jarvis-Said"]


def test_private_on_a_cloud_model_is_refused_with_what_to_do(cloud_user, local_model, cloud_model):
    chat = Chat.objects.create(owner=cloud_user, title="Tax", model_label="cloud:big")
    response = signed_in(cloud_user).post(f"/chat/{chat.pk}/private/", HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert "a cloud model: switch it to a local model first" in response.content.decode()
    chat.refresh_from_db()
    assert not chat.private


def test_another_persons_chat_cannot_be_made_private(owner, member, local_model):
    chat = Chat.objects.create(owner=owner, title="Tax")
    assert signed_in(member).post(f"/chat/{chat.pk}/private/").status_code == 404
    chat.refresh_from_db()
    assert not chat.private


def test_private_needs_the_csrf_token(owner, local_model):
    chat = Chat.objects.create(owner=owner, title="Tax")
    assert signed_in(owner, csrf=True).post(f"/chat/{chat.pk}/private/").status_code == 403
    chat.refresh_from_db()
    assert not chat.private


def test_a_new_chat_can_start_private(owner, local_model, llm):
    llm.queue(Reply(text="Noted."))
    response = signed_in(owner).post("/chat/send/", {"text": "About my tax", "private": "1"})
    assert response.status_code == 302
    chat = Chat.objects.get()
    assert chat.private


def test_a_new_private_chat_on_a_cloud_model_is_refused_before_anything_is_written(
    cloud_user, local_model, cloud_model
):
    response = signed_in(cloud_user).post(
        "/chat/send/", {"text": "About my tax", "private": "1", "model": "cloud:big"}
    )
    assert response.status_code == 400
    assert "pick a local model for a private chat" in response.content.decode()
    assert not Chat.objects.exists() and not Message.objects.exists()
