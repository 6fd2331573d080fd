"""The new-chat page's model picker: a person with more than one usable model
picks one as they start a chat (their default preselected), the choice is
saved on the chat and answers with it, and a model they may not use is
refused before anything is written. Once a chat is private its picker offers
only local models."""

import re

import pytest

from apps.chats.models import Chat
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def picker(html: str) -> list[tuple[str, bool, str]]:
    """(value, selected, words) of each option of the new-chat model picker."""
    select = re.search(
        r'<select name="model" data-testid="new-chat-model">(.*?)</select>', html, re.S
    )
    if select is None:
        return []
    return [
        (value, bool(selected), words.strip())
        for value, selected, words in re.findall(
            r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select.group(1)
        )
    ]


def test_one_usable_model_shows_no_picker(owner, local_model):
    assert picker(signed_in(owner).get("/chat/").content.decode()) == []


def test_the_picker_offers_each_usable_model_with_the_default_preselected(
    cloud_user, local_model, cloud_model
):
    options = picker(signed_in(cloud_user).get("/chat/").content.decode())
    assert options == [
        ("cloud:big", False, "cloud:big · cloud"),
        ("", True, "home:local-7b · local (default)"),
    ]


def test_the_picked_model_is_saved_on_the_chat_and_answers(
    cloud_user, local_model, cloud_model, llm
):
    llm.queue(Reply(text="Hello from the big one."))
    response = signed_in(cloud_user).post(
        "/chat/send/", {"text": "Hello there", "model": "cloud:big"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 204
    chat = Chat.objects.get()
    assert chat.model_label == "cloud:big"
    _, answer = run_turn(cloud_user, "And again?", chat=chat)
    assert answer.model_label == "cloud:big"
    assert llm.chat_requests[-1].json["model"] == "big"


def test_the_default_left_as_it_is_keeps_the_chat_on_the_default(owner, local_model, llm):
    llm.queue(Reply(text="ok"))
    signed_in(owner).post("/chat/send/", {"text": "Hello", "model": ""}, HTTP_HX_REQUEST="true")
    assert Chat.objects.get().model_label == ""


def test_a_model_the_person_may_not_use_is_refused_and_no_chat_is_made(
    owner, local_model, cloud_model
):
    # owner lacks the cloud permission: a forged label for the cloud model.
    response = signed_in(owner).post(
        "/chat/send/", {"text": "Hello", "model": "cloud:big"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert "may not use cloud models" in response.content.decode()
    assert not Chat.objects.exists()


def test_a_private_chats_picker_offers_only_local_models(cloud_user, local_model, cloud_model, llm):
    chat, _ = run_turn(cloud_user, "Hello there")
    Chat.objects.filter(pk=chat.pk).update(private=True)
    html = signed_in(cloud_user).get(f"/chat/{chat.pk}/").content.decode()
    form = re.search(r'data-testid="model-form">(.*?)</form>', html, re.S).group(1)
    assert "home:local-7b" in form
    assert "cloud:big" not in form
