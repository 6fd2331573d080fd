"""A chat send served in one thread hop (apps.core.onehop), against a real daphne.

The send, regenerate and edit endpoints run Django's sync middleware chain and
the view in one call on a pool of their own. These check, over HTTP as a
browser speaks it, that the chain still does its work there (the sign-in
redirect, the CSRF check, another person's chat is not found) and that the
reply the send starts runs to the end on daphne's event loop.
"""

from __future__ import annotations

import contextlib
import re
import time

import httpx
import pytest
from django.urls import reverse

from apps.chats.models import Chat, Message
from tests.conftest import PASSWORD
from tests.fakes.llm import Reply
from tests.support.web import csrf_token, signed_in_client

pytestmark = pytest.mark.e2e


def signed_in(base: str, username: str) -> tuple[httpx.Client, str]:
    """A client signed in as `username` on the login page, and a CSRF token."""
    client = signed_in_client(base, username, PASSWORD, timeout=30)
    return client, csrf_token(client, "/chat/")


def chat_of(user) -> Chat:
    chat = Chat.objects.create(owner=user, title="Boiler")
    question = Message.objects.create(chat=chat, role=Message.Role.USER, text="Hello")
    answer = Message.objects.create(
        chat=chat, role=Message.Role.ASSISTANT, parent=question, text="Hi.", status="done"
    )
    chat.leaf = answer
    chat.save(update_fields=["leaf"])
    return chat


def finished(chat: Chat) -> Message:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        reply = chat.messages.filter(role=Message.Role.ASSISTANT).order_by("-pk").first()
        if reply.status not in (Message.Status.PENDING, Message.Status.STREAMING):
            return reply
        time.sleep(0.1)
    raise AssertionError(f"the reply is still {reply.status}")


def test_a_send_is_written_answered_and_its_reply_runs_to_the_end(
    live_server_url, owner, local_model, llm
):
    chat = chat_of(owner)
    llm.queue(Reply(text="Every October, by Priya."))
    client, csrf = signed_in(live_server_url, owner.username)
    with contextlib.closing(client):
        response = client.post(
            reverse("chats:send", args=[chat.pk]),
            data={"text": "When is the boiler serviced?"},
            headers={"X-CSRFToken": csrf, "HX-Request": "true"},
        )
    assert response.status_code == 200, response.text
    assert "When is the boiler serviced?" in response.text  # the exchange to append
    assert finished(chat).text == "Every October, by Priya."


def test_a_send_without_the_csrf_token_is_refused_and_writes_nothing(
    live_server_url, owner, local_model
):
    chat = chat_of(owner)
    client, _ = signed_in(live_server_url, owner.username)
    with contextlib.closing(client):
        response = client.post(
            reverse("chats:send", args=[chat.pk]),
            data={"text": "Forged"},
            headers={"HX-Request": "true"},
        )
    assert response.status_code == 403
    assert not chat.messages.filter(text="Forged").exists()


def test_signed_out_a_send_goes_to_the_sign_in_page(live_server_url, owner):
    chat = chat_of(owner)
    with httpx.Client(base_url=live_server_url, timeout=30) as client:
        page = client.get("/accounts/login/").text
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
        response = client.post(
            reverse("chats:send", args=[chat.pk]),
            data={"text": "Hi"},
            headers={"X-CSRFToken": csrf},
        )
    assert response.status_code == 302
    assert response.headers["location"].startswith("/accounts/login/")
    assert not chat.messages.filter(text="Hi").exists()


def test_another_persons_chat_is_not_found_for_send_regenerate_and_edit(
    live_server_url, owner, member, local_model
):
    chat = chat_of(owner)
    question, answer = chat.messages.order_by("pk")
    client, csrf = signed_in(live_server_url, member.username)
    headers = {"X-CSRFToken": csrf, "HX-Request": "true"}
    with contextlib.closing(client):
        for url in (
            reverse("chats:send", args=[chat.pk]),
            reverse("chats:regenerate", args=[chat.pk, answer.pk]),
            reverse("chats:edit", args=[chat.pk, question.pk]),
        ):
            assert client.post(url, data={"text": "Mine now"}, headers=headers).status_code == 404
    assert chat.messages.count() == 2
