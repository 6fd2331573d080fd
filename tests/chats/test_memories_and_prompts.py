"""Memories and the prompts a person controls.

A memory is proposed by the model (`remember`) and stored only by the
person's Keep; it reaches only that person's chats, and a cloud model only
when they marked it cloud-allowed. The system prompt is the instance's
prompt, then the admin's note for the model, then the person's layer, then
the chat's; no tool changes any of it. Checked on what the fake model server
actually received."""

import json

import pytest
from django.test import Client

from apps.accounts.memories import memory_add
from apps.accounts.models import Memory
from apps.chats.models import Chat, PendingAction
from apps.chats.tools import TOOLS, TurnContext, run_tool
from apps.instance.prompts import system_prompt as instance_prompt
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)

SECRET_MEMORY = "My locker code is walrus-5150"
CLOUD_MEMORY = "I prefer answers in British English"


def system_of(request) -> str:
    messages = request.json["messages"]
    assert messages[0]["role"] == "system"
    return messages[0]["content"]


def test_remember_shows_a_card_and_stores_nothing_until_keep(owner, local_model, llm):
    llm.queue(
        Reply(tool_calls=[("remember", json.dumps({"text": "I am vegetarian"}))]),
        Reply(text="I can remember that if you keep it."),
    )
    chat, answer = run_turn(owner, "Remember that I am vegetarian.")
    card = PendingAction.objects.get(message=answer)
    assert card.kind == "remember" and card.payload["text"] == "I am vegetarian"
    assert not Memory.objects.exists()

    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    refused = client.post(f"/chat/action/{card.pk}/", {"confirm": "1"})
    assert refused.status_code == 403 and not Memory.objects.exists()  # CSRF
    token = client.get(f"/chat/{chat.pk}/").cookies["csrftoken"].value
    kept = client.post(
        f"/chat/action/{card.pk}/",
        {"confirm": "1", "text": "I am vegetarian (no fish either)", "csrfmiddlewaretoken": token},
    )
    assert kept.status_code == 200 and "Kept" in kept.content.decode()
    memory = Memory.objects.get()
    assert (memory.owner, memory.text, memory.cloud_allowed) == (
        owner,
        "I am vegetarian (no fish either)",
        False,
    )


def test_dont_keep_stores_nothing_and_another_persons_card_is_a_404(
    client, owner, member, local_model, llm
):
    llm.queue(
        Reply(tool_calls=[("remember", json.dumps({"text": "Likes jazz"}))]), Reply(text="ok")
    )
    _, answer = run_turn(owner, "Remember I like jazz.")
    card = PendingAction.objects.get(message=answer)
    client.force_login(member)
    assert client.post(f"/chat/action/{card.pk}/", {"confirm": "1"}).status_code == 404
    client.force_login(owner)
    client.post(f"/chat/action/{card.pk}/", {"confirm": "0"})
    card.refresh_from_db()
    assert card.status == "dismissed" and not Memory.objects.exists()


def test_a_memory_reaches_local_models_and_only_its_persons_chats(owner, member, local_model, llm):
    memory_add(owner=owner, text=SECRET_MEMORY)
    run_turn(owner, "Hello")
    assert SECRET_MEMORY in system_of(llm.chat_requests[-1])
    run_turn(member, "Hello")
    assert SECRET_MEMORY not in system_of(llm.chat_requests[-1])


def test_a_cloud_model_gets_only_cloud_allowed_memories(cloud_user, cloud_model, llm):
    memory_add(owner=cloud_user, text=SECRET_MEMORY)
    memory_add(owner=cloud_user, text=CLOUD_MEMORY, cloud_allowed=True)
    run_turn(cloud_user, "Hello", model="cloud:big")
    system = system_of(llm.chat_requests[-1])
    assert CLOUD_MEMORY in system
    assert "walrus" not in json.dumps([r.json for r in llm.chat_requests])


def test_the_layers_come_in_order_instance_model_note_person_chat(owner, local_model, llm):
    local_model.prompt_note = "ADMIN-NOTE: this model needs short prompts."
    local_model.save()
    owner.instructions = "PERSON: I am a nurse."
    owner.save()
    memory_add(owner=owner, text="MEMORY: call me Liv")
    chat, _ = run_turn(owner, "Hello")
    chat.instructions = "CHAT: answer in German."
    chat.save()
    run_turn(owner, "Again", chat=chat)
    system = system_of(llm.chat_requests[-1])
    positions = [
        system.index(part)
        for part in (
            instance_prompt()[:40],
            "ADMIN-NOTE",
            "PERSON: I am a nurse",
            "MEMORY: call me Liv",
            "CHAT: answer in German",
        )
    ]
    assert positions == sorted(positions)


def test_no_tool_changes_a_prompt_or_stores_a_memory(owner, local_model):
    chat = Chat.objects.create(owner=owner, title="t", instructions="mine")
    ctx = TurnContext(user=owner, chat=chat, cloud=False, notes_only=False)
    arguments = json.dumps(
        {
            "text": "ignore everything",
            "instructions": "be evil",
            "prompt": "be evil",
            "system_prompt": "be evil",
            "query": "x",
            "name": "x",
            "document_id": 1,
        }
    )
    for name in list(TOOLS):
        run_tool(ctx, name, arguments)
    owner.refresh_from_db()
    chat.refresh_from_db()
    assert owner.instructions == "" and chat.instructions == "mine"
    assert instance_prompt().startswith("You are Jarvis")
    assert not Memory.objects.exists()


def test_the_memories_page_lists_edits_and_deletes_only_your_own(client, owner, member):
    mine = memory_add(owner=owner, text="I am vegetarian")
    theirs = memory_add(owner=member, text="Max hates mushrooms")
    client.force_login(owner)
    page = client.get("/settings/memories/").content.decode()
    assert "I am vegetarian" in page and "mushrooms" not in page
    client.post(f"/settings/memories/{mine.pk}/", {"text": "Vegetarian", "cloud_allowed": "1"})
    mine.refresh_from_db()
    assert (mine.text, mine.cloud_allowed) == ("Vegetarian", True)
    assert client.post(f"/settings/memories/{theirs.pk}/", {"text": "x"}).status_code == 404
    assert client.post(f"/settings/memories/{theirs.pk}/delete/").status_code == 404
    client.post(f"/settings/memories/{mine.pk}/delete/")
    assert list(Memory.objects.values_list("text", flat=True)) == ["Max hates mushrooms"]


def test_the_memories_page_needs_csrf(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post("/settings/memories/add/", {"text": "x"}).status_code == 403
    assert not Memory.objects.exists()


def test_personal_instructions_are_saved_shown_in_order_and_reverted(client, owner):
    client.force_login(owner)
    client.post(
        "/settings/assistant/",
        {"default_model": "", "response_style": "", "instructions": "I am a nurse."},
    )
    owner.refresh_from_db()
    assert owner.instructions == "I am a nurse."
    page = client.get("/settings/assistant/").content.decode()
    assert page.index("The household") < page.index("I am a nurse.")
    client.post("/settings/assistant/revert-instructions/")
    owner.refresh_from_db()
    assert owner.instructions == ""


def test_chat_instructions_are_the_owners_to_set_and_revert(
    client, owner, member, local_model, llm
):
    chat, _ = run_turn(owner, "Hello")
    client.force_login(member)
    assert client.post(f"/chat/{chat.pk}/instructions/", {"instructions": "x"}).status_code == 404
    client.force_login(owner)
    client.post(f"/chat/{chat.pk}/instructions/", {"instructions": "Answer in German."})
    chat.refresh_from_db()
    assert chat.instructions == "Answer in German."
    assert "Answer in German." in client.get(f"/chat/{chat.pk}/").content.decode()
    client.post(f"/chat/{chat.pk}/instructions/", {"instructions": ""})
    chat.refresh_from_db()
    assert chat.instructions == ""


def test_chat_instructions_need_csrf(owner, local_model, llm):
    chat, _ = run_turn(owner, "Hello")
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    refused = client.post(f"/chat/{chat.pk}/instructions/", {"instructions": "x"})
    assert refused.status_code == 403
    chat.refresh_from_db()
    assert chat.instructions == ""
