"""Regenerating a reply and editing a sent message: the conversation is a
tree, the page and the model follow the branch shown, earlier versions stay
to page back to, and a private chat never moves to a cloud model."""

from __future__ import annotations

import importlib
import json
import re

import pytest
from asgiref.sync import async_to_sync
from django.apps import apps as django_apps

from apps.chats import services
from apps.chats.history import search_history
from apps.chats.models import Chat, Message
from apps.chats.runner import reply_start
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def finish(answer: Message) -> Message:
    """Run a reply that services started (regenerate, edit) to its end."""

    async def wait():
        await reply_start(answer.pk, answer.chat_id).task

    async_to_sync(wait)()
    answer.refresh_from_db()
    return answer


@pytest.fixture
def started(monkeypatch) -> list[int]:
    """Replies the views started. The test client runs an async view on an
    event loop that ends with the request, so the test runs them (`finish`)."""
    ids: list[int] = []
    monkeypatch.setattr("apps.chats.views.reply_start", lambda pk, chat_id, **_: ids.append(pk))
    return ids


def sent_messages(llm, index: int = -1) -> str:
    return json.dumps(llm.chat_requests[index].json["messages"])


@pytest.fixture
def two_exchanges(owner, local_model, llm):
    llm.queue(Reply(text="Paris is the capital."), Reply(text="About two million people."))
    chat, first = run_turn(owner, "What is the capital of France?")
    chat, second = run_turn(owner, "How many live there?", chat=chat)
    return chat, first, second


def page(user, chat) -> str:
    return signed_in(user).get(f"/chat/{chat.pk}/").content.decode()


def test_a_regenerated_reply_keeps_the_earlier_one_to_page_back_to(
    owner, llm, two_exchanges, started
):
    chat, _first, second = two_exchanges
    llm.queue(Reply(text="Roughly 2.1 million in the city itself."))
    response = signed_in(owner).post(
        f"/chat/{chat.pk}/regenerate/{second.pk}/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    new = Message.objects.filter(chat=chat, role="assistant").latest("pk")
    assert started == [new.pk] and new.parent_id == second.parent_id
    assert f'id="msg-{new.pk}"' in response.content.decode()  # the page shows it coming
    finish(new)
    # The model was asked the same question with the same history, without the old answer.
    sent = sent_messages(llm)
    assert "How many live there?" in sent and "Paris is the capital." in sent
    assert "About two million people." not in sent

    html = page(owner, chat)
    assert "Roughly 2.1 million" in html and "About two million people." not in html
    assert "2 of 2" in html

    # Paging back shows (and continues from) the earlier reply.
    signed_in(owner).post(f"/chat/{chat.pk}/branch/{second.pk}/")
    html = page(owner, chat)
    assert "About two million people." in html and "Roughly 2.1 million" not in html
    assert "1 of 2" in html
    llm.queue(Reply(text="Yes."))
    chat.refresh_from_db()
    run_turn(owner, "Is that the metro area?", chat=chat)
    sent = sent_messages(llm)
    assert "About two million people." in sent and "Roughly 2.1 million" not in sent


def test_an_edited_message_continues_from_the_edit_and_keeps_the_old_branch(
    owner, llm, two_exchanges, started
):
    chat, _first, second = two_exchanges
    question = second.parent
    llm.queue(Reply(text="Lyon has about half a million."))
    response = signed_in(owner).post(
        f"/chat/{chat.pk}/edit/{question.pk}/",
        {"text": "How many live in Lyon?"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "How many live in Lyon?" in response.content.decode()
    edited = Message.objects.get(chat=chat, role="user", text="How many live in Lyon?")
    assert edited.parent_id == question.parent_id  # the same place in the conversation
    assert started == [edited.children.get().pk]
    finish(edited.children.get())
    sent = sent_messages(llm)
    assert "How many live in Lyon?" in sent and "Paris is the capital." in sent
    assert "How many live there?" not in sent and "two million" not in sent

    html = page(owner, chat)
    assert "Lyon has about half a million." in html and "How many live there?" not in html
    assert "2 of 2" in html
    # The old branch, question and answer, is a page back.
    signed_in(owner).post(f"/chat/{chat.pk}/branch/{question.pk}/")
    html = page(owner, chat)
    assert "How many live there?" in html and "About two million people." in html
    assert "Lyon" not in html


def test_the_history_index_follows_the_branch_shown(owner, llm, two_exchanges):
    chat, _, second = two_exchanges
    assert search_history(owner, "two million")[0].message_id == second.pk
    llm.queue(Reply(text="Over two thousand thousand, i.e. many."))
    new = finish(services.reply_regenerate(user=owner, chat=chat, reply=second))
    assert [h.message_id for h in search_history(owner, "thousand")] == [new.pk]
    assert search_history(owner, "million") == []  # the regenerated answer left the history
    services.branch_show(chat=chat, message=second)
    assert [h.message_id for h in search_history(owner, "million")] == [second.pk]
    assert search_history(owner, "thousand") == []


def test_nothing_changes_branch_while_a_reply_runs(owner, two_exchanges, started):
    chat, first, second = two_exchanges
    services.turn_start(user=owner, chat=chat, text="and then?")  # a reply left pending
    client = signed_in(owner)
    for url, data in (
        (f"/chat/{chat.pk}/regenerate/{second.pk}/", {}),
        (f"/chat/{chat.pk}/edit/{second.parent_id}/", {"text": "changed"}),
        (f"/chat/{chat.pk}/branch/{first.pk}/", {}),
    ):
        response = client.post(url, data, HTTP_HX_REQUEST="true")
        assert response.status_code == 409 and b"still being written" in response.content
    assert chat.messages.count() == 6


def test_a_private_chat_regenerates_only_on_a_local_model(
    cloud_user, local_model, cloud_model, llm, started
):
    llm.queue(Reply(text="Local answer."))
    chat, answer = run_turn(cloud_user, "Where is the spare key?")
    Chat.objects.filter(pk=chat.pk).update(private=True)
    client = signed_in(cloud_user)
    html = client.get(f"/chat/{chat.pk}/").content.decode()
    offered = re.search(r'<template id="regenerate-models">.*?</template>', html, re.S).group(0)
    assert 'value="home:local-7b"' in offered and "cloud:big" not in offered

    response = client.post(
        f"/chat/{chat.pk}/regenerate/{answer.pk}/", {"model": "cloud:big"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert b"can only continue on a local model" in response.content
    chat.refresh_from_db()
    assert chat.model_label == "" and chat.messages.count() == 2
    assert len(llm.chat_requests) == 1  # no request reached any model

    llm.queue(Reply(text="Local again."))
    client.post(
        f"/chat/{chat.pk}/regenerate/{answer.pk}/",
        {"model": "home:local-7b"},
        HTTP_HX_REQUEST="true",
    )
    new = finish(Message.objects.get(pk=started[-1]))
    assert new.text == "Local again." and new.model_label == "home:local-7b"


def test_regenerating_with_another_model_moves_the_chat_to_it(
    cloud_user, local_model, cloud_model, llm
):
    llm.queue(Reply(text="From the local model."))
    chat, answer = run_turn(cloud_user, "Plan a picnic")
    llm.queue(Reply(text="From the cloud model."))
    new = finish(
        services.reply_regenerate(user=cloud_user, chat=chat, reply=answer, model_label="cloud:big")
    )
    assert new.model_label == "cloud:big" and new.text == "From the cloud model."
    assert llm.chat_requests[-1].json["model"] == "big"
    chat.refresh_from_db()
    assert chat.model_label == "cloud:big"


def test_someone_without_cloud_permission_cannot_regenerate_on_a_cloud_model(
    owner, local_model, cloud_model, llm, started
):
    llm.queue(Reply(text="ok"))
    chat, answer = run_turn(owner, "hello")
    response = signed_in(owner).post(
        f"/chat/{chat.pk}/regenerate/{answer.pk}/", {"model": "cloud:big"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400 and b"may not use cloud models" in response.content
    assert chat.messages.count() == 2


def test_other_people_cannot_regenerate_edit_page_or_read_a_chat(
    owner, member, outsider, two_exchanges
):
    chat, first, second = two_exchanges
    for person in (member, outsider):
        client = signed_in(person)
        assert client.post(f"/chat/{chat.pk}/regenerate/{second.pk}/").status_code == 404
        assert (
            client.post(f"/chat/{chat.pk}/edit/{first.parent_id}/", {"text": "x"}).status_code
            == 404
        )
        assert client.post(f"/chat/{chat.pk}/branch/{first.pk}/").status_code == 404
        assert client.get(f"/chat/{chat.pk}/conversation/").status_code == 404
    assert chat.messages.count() == 4


def test_a_message_of_another_chat_is_not_found(owner, local_model, llm, two_exchanges):
    chat, _, _ = two_exchanges
    llm.queue(Reply(text="other"))
    _other, other_answer = run_turn(owner, "another chat")
    response = signed_in(owner).post(f"/chat/{chat.pk}/regenerate/{other_answer.pk}/")
    assert response.status_code == 404


def test_a_stale_tab_continues_from_the_branch_it_shows(owner, llm, two_exchanges, started):
    chat, _first, second = two_exchanges
    llm.queue(Reply(text="Another count."))
    finish(services.reply_regenerate(user=owner, chat=chat, reply=second))
    # A second tab still shows the first version and sends from there.
    llm.queue(Reply(text="Fine."))
    signed_in(owner).post(
        f"/chat/{chat.pk}/send/", {"text": "Thanks", "after": second.pk}, HTTP_HX_REQUEST="true"
    )
    question = Message.objects.get(chat=chat, text="Thanks")
    assert question.parent_id == second.pk
    chat.refresh_from_db()
    assert chat.leaf_id == question.children.get().pk


def test_a_summary_is_dropped_when_a_branch_starts_before_it(owner, llm):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="tiny", kind="openai", base_url=llm.base_url, location="local"
    )
    model_add(connection=connection, model_id="small", context_length=600, default=True)
    chat = None
    answers = []
    for n in range(5):
        llm.queue(Reply(text=f"Answer {n}: " + "words " * 60))
        chat, answer = run_turn(owner, f"Question {n}: " + "context " * 40, chat=chat)
        answers.append(answer)
    llm.queue(Reply(text="Summary: question 0 was asked."), Reply(text="Fine."))
    chat, last = run_turn(owner, "And now?", chat=chat)
    assert chat.summary_upto == answers[0].pk

    # A branch after the summarised part keeps the summary…
    llm.queue(Reply(text="Fine again."))
    finish(services.reply_regenerate(user=owner, chat=chat, reply=last))
    chat.refresh_from_db()
    assert chat.summary.startswith("Summary:")
    assert "Summary: question 0" in sent_messages(llm)

    # …one that starts inside it drops it: the edited branch never said that.
    first_question = answers[0].parent
    llm.queue(Reply(text="A new start."))
    _, answer = services.message_edit(chat=chat, message=first_question, text="Question zero?")
    chat.refresh_from_db()
    assert (chat.summary, chat.summary_upto) == ("", 0)
    finish(answer)
    assert "Summary" not in sent_messages(llm)


def test_existing_chats_are_linked_into_one_line(owner):
    chat = Chat.objects.create(owner=owner, title="old")
    rows = [
        Message.objects.create(chat=chat, role=role, text=f"m{n}", status="done")
        for n, role in enumerate(["user", "assistant", "user", "assistant"])
    ]
    migration = importlib.import_module("apps.chats.migrations.0006_chat_parity_message_tree")
    migration.link_linearly(django_apps, None)
    chat.refresh_from_db()
    assert chat.leaf_id == rows[-1].pk
    parents = [Message.objects.get(pk=m.pk).parent_id for m in rows]
    assert parents == [None, rows[0].pk, rows[1].pk, rows[2].pk]
