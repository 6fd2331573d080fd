"""Chat pages and sockets: only the owner can open, follow, send to, stop or
search a chat; sending, switching model and the list behave as a person expects."""

import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.management import CommandError, call_command
from django.test import Client

from apps.chats.models import Chat, Message
from apps.library.ingest.sync import source_sync
from jarvis_site.asgi import application
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def socket_connects(client: Client, chat_id: int) -> bool:
    from django.conf import settings

    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    headers = [
        (b"host", b"localhost"),
        (b"origin", b"http://localhost"),
        (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()),
    ]

    async def attempt():
        communicator = WebsocketCommunicator(application, f"/ws/chats/{chat_id}/", headers=headers)
        connected, _ = await communicator.connect()
        await communicator.disconnect()
        return connected

    return async_to_sync(attempt)()


@pytest.fixture
def chat(owner, local_model, llm):
    llm.queue(Reply(text="Hello Olivia."))
    chat, _ = run_turn(owner, "Hello")
    return chat


def test_the_owner_opens_and_follows_their_chat(owner, chat):
    client = signed_in(owner)
    html = client.get(f"/chat/{chat.pk}/").content.decode()
    assert "Hello Olivia." in html and 'ws-connect="/ws/chats/' in html
    assert socket_connects(client, chat.pk)


def test_nobody_else_can_open_follow_send_stop_or_find_it(owner, member, admin, chat):
    answer = chat.messages.filter(role="assistant").first()
    for person in (member, admin):
        client = signed_in(person)
        assert client.get(f"/chat/{chat.pk}/").status_code == 404
        assert client.post(f"/chat/{chat.pk}/send/", {"text": "hi"}).status_code == 404
        assert client.post(f"/chat/{chat.pk}/stop/{answer.pk}/").status_code == 404
        assert client.post(f"/chat/{chat.pk}/delete/").status_code == 404
        assert not socket_connects(client, chat.pk)
        assert f"/chat/{chat.pk}/" not in client.get("/chat/search/?q=Hello").content.decode()
    assert Chat.objects.filter(pk=chat.pk).exists()


def test_no_chat_exists_until_the_first_message(owner):
    client = signed_in(owner)
    assert b"Ask about your notes" in client.get("/chat/").content
    assert not Chat.objects.exists()


def test_sending_the_first_message_creates_the_chat_and_redirects(owner, local_model, llm):
    llm.queue(Reply(text="Hi!"))
    response = signed_in(owner).post(
        "/chat/send/", {"text": "First question"}, HTTP_HX_REQUEST="true"
    )
    chat = Chat.objects.get()
    assert response.status_code == 204
    assert response["HX-Redirect"] == f"/chat/{chat.pk}/"
    assert chat.title == "First question"


def test_an_empty_or_oversized_send_says_why(owner, chat):
    client = signed_in(owner)
    empty = client.post(f"/chat/{chat.pk}/send/", {"text": "  "}, HTTP_HX_REQUEST="true")
    assert empty.status_code == 400 and b"write a message first" in empty.content
    huge = client.post(f"/chat/{chat.pk}/send/", {"text": "x" * 40_000}, HTTP_HX_REQUEST="true")
    assert huge.status_code == 400 and b"the limit is 32,000" in huge.content
    assert chat.messages.count() == 2


def test_a_second_send_while_busy_is_refused(owner, chat):
    Message.objects.create(chat=chat, role="assistant", status="streaming")
    response = signed_in(owner).post(
        f"/chat/{chat.pk}/send/", {"text": "again"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 409
    assert b"still being written" in response.content


def test_a_reply_left_running_by_a_restart_shows_as_interrupted(owner, chat):
    from apps.chats.services import turn_start

    _, _, stale = turn_start(user=owner, chat=chat, text="and then?")  # never started here
    Message.objects.filter(pk=stale.pk).update(status="streaming", text="half an ans")
    # What a web process runs once when it starts serving (tests/chats/test_interrupted.py
    # shows a real daphne doing it); the page then says what happened.
    from apps.chats.owner import interrupted_sweep

    assert interrupted_sweep() == 1
    html = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    stale.refresh_from_db()
    assert stale.status == "interrupted"
    assert "half an ans" in html and "Interrupted" in html


def test_rename_pin_search_and_delete(owner, chat):
    client = signed_in(owner)
    client.post(f"/chat/{chat.pk}/rename/", {"title": "Greetings"})
    client.post(f"/chat/{chat.pk}/pin/")
    chat.refresh_from_db()
    assert (chat.title, chat.pinned) == ("Greetings", True)
    found = client.get("/chat/search/?q=Olivia").content.decode()  # matches the answer text
    assert "Greetings" in found
    client.post(f"/chat/{chat.pk}/delete/")
    assert not Chat.objects.exists()
    from apps.chats.history import search_history

    assert search_history(owner, "Olivia") == []


def test_pinned_chats_come_first_then_the_newest(owner, local_model, llm):
    chats = []
    for n in range(3):
        llm.queue(Reply(text="ok"))
        chats.append(run_turn(owner, f"chat {n}")[0])
    signed_in(owner).post(f"/chat/{chats[0].pk}/pin/")
    html = signed_in(owner).get("/chat/").content.decode()
    positions = [html.index(f"/chat/{c.pk}/") for c in (chats[0], chats[2], chats[1])]
    assert positions == sorted(positions)


def test_a_private_chat_cannot_switch_to_a_cloud_model(owner, cloud_user, chat, cloud_model):
    Chat.objects.filter(pk=chat.pk).update(private=True)
    response = signed_in(cloud_user).post(
        f"/chat/{chat.pk}/model/", {"model": "cloud:big"}, follow=True
    )
    assert "can only continue on a local model" in response.content.decode()
    chat.refresh_from_db()
    assert chat.model_label == ""


def test_cloud_models_need_the_permission(owner, chat, cloud_model):
    response = signed_in(owner).post(f"/chat/{chat.pk}/model/", {"model": "cloud:big"}, follow=True)
    assert "may not use cloud models" in response.content.decode()


def test_mentions_offer_only_what_the_person_may_read(owner, member, vault, make_source, embedder):
    vault.write("private/letters.md", "# Letters to Max\n\nsecret\n")
    vault.write("public.md", "# Letters page\n\nhello\n")
    source_sync(source=make_source(owner, vault, sharing="household"), embedder=embedder)
    mine = json.loads(signed_in(owner).get("/chat/mentions/?q=Letters").content)["items"]
    theirs = json.loads(signed_in(member).get("/chat/mentions/?q=Letters").content)["items"]
    assert {i["label"] for i in mine} >= {"Letters to Max", "Letters page"}
    assert "Letters to Max" not in {i["label"] for i in theirs}


def test_the_chat_command_prints_the_documented_json(
    owner, local_model, llm, vault, make_source, embedder
):
    vault.write("tax.md", "# Tax\n\nThe tax return is due on 31 January.\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "tax return due"}))]),
        Reply(text="31 January [1]."),
    )
    out = StringIO()
    call_command("chat", "--user", "olivia", "--json", "When is the tax return due?", stdout=out)
    data = json.loads(out.getvalue())
    assert set(data) == {
        "chat_id",
        "message_id",
        "model",
        "private",
        "reply",
        "citations",
        "tool_calls",
        "notes",
        "stopped_reason",
    }
    assert data["reply"] == "31 January [1]."
    assert data["citations"][0]["path"] == "tax.md"
    assert set(data["citations"][0]) == {"n", "document_id", "path", "date", "is_latest"}
    assert data["tool_calls"] == [
        # Jarvis's own first search, then the model's.
        {
            "name": "search_notes",
            "arguments": '{"query": "When is the tax return due?"}',
            "ok": True,
        },
        {"name": "search_notes", "arguments": '{"query": "tax return due"}', "ok": True},
    ]
    assert data["notes"] == [
        "This chat read local-only notes: it is now private and stays on local models."
    ]
    assert data["private"] is True and data["stopped_reason"] == "stop"
    llm.queue(Reply(text="Continued."))
    again = StringIO()
    call_command(
        "chat",
        "--user",
        "olivia",
        "--chat",
        str(data["chat_id"]),
        "--json",
        "and then?",
        stdout=again,
    )
    assert json.loads(again.getvalue())["chat_id"] == data["chat_id"]


def test_the_chat_command_refuses_a_cloud_model_without_permission(owner, cloud_model):
    with pytest.raises(CommandError, match="cloud models"):
        call_command("chat", "--user", "olivia", "--model", "cloud:big", "hi", stdout=StringIO())
    assert not Chat.objects.exists()


def test_chats_beyond_the_limit_go_oldest_first_but_never_a_pinned_one(owner, settings):
    from apps.chats.history import index_exchange, search_history
    from apps.chats.models import Chat
    from apps.chats.services import chat_pin_toggle, turn_start
    from apps.instance.selectors import instance_settings

    row = instance_settings()
    row.chats_kept = 2
    row.save()

    def new_chat(text):
        chat, question, answer = turn_start(user=owner, chat=None, text=text)
        answer.status, answer.text = "done", f"About {text}."
        answer.save()
        index_exchange(question=question, answer=answer)
        return chat

    assert search_history(owner, "bicycle") == []
    oldest = new_chat("apple pie recipe")
    chat_pin_toggle(chat=oldest)
    second = new_chat("bicycle repair")  # the oldest unpinned one
    third = new_chat("camping list")
    fourth = new_chat("dentist visit")
    remaining = set(Chat.objects.filter(owner=owner).values_list("pk", flat=True))
    assert remaining == {oldest.pk, third.pk, fourth.pk}  # two unpinned kept, pinned kept too
    assert second.pk not in remaining
    assert search_history(owner, "bicycle") == []  # its history went with it
    assert {h.chat_id for h in search_history(owner, "camping")} == {third.pk}
    page = signed_in(owner).get("/chat/").content.decode()
    assert "keeps your 2 most recent chats" in page


def test_a_limit_of_zero_keeps_every_chat(owner):
    from apps.chats.models import Chat
    from apps.chats.services import turn_start
    from apps.instance.selectors import instance_settings

    row = instance_settings()
    row.chats_kept = 0
    row.save()
    for n in range(3):
        _, _, answer = turn_start(user=owner, chat=None, text=f"q{n}")
        Message.objects.filter(pk=answer.pk).update(status="done")
    assert Chat.objects.filter(owner=owner).count() == 3
    assert 'data-testid="chats-kept"' not in signed_in(owner).get("/chat/").content.decode()
