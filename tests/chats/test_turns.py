"""A chat turn end to end through the real runner, against a fake
OpenAI-compatible server over real HTTP: tools, citations, errors, limits."""

import json

import pytest
from django.test import Client

from apps.chats import services
from apps.chats.models import Message, PendingAction
from apps.chats.reply import Reply as ChatReply
from apps.library.ingest.sync import source_sync
from apps.library.models import Document
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(owner, vault, make_source, embedder):
    vault.write("home/boiler_2026-03.md", "# Boiler\n\nTomasz serviced the boiler in March 2026.\n")
    vault.write(
        "home/boiler_2026-10.md", "# Boiler\n\nPriya replaced the diverter valve in October 2026.\n"
    )
    source = make_source(owner, vault, cloud="allowed")
    source_sync(source=source, embedder=embedder)
    return source


def search_then(answer: str):
    """The model searches once, then answers with `answer`."""
    return [
        Reply(tool_calls=[("search_notes", json.dumps({"query": "diverter valve replaced"}))]),
        Reply(text=answer),
    ]


def test_a_turn_searches_cites_and_records_everything(owner, notes, local_model, llm):
    llm.queue(*search_then("Priya replaced the valve [1]."))
    chat, answer = run_turn(owner, "Who fixed the boiler?")
    assert answer.status == Message.Status.DONE
    assert answer.text == "Priya replaced the valve [1]."
    [citation] = answer.citations
    assert citation["path"].startswith("home/boiler_2026-10") and citation["is_latest"]
    # Jarvis's own first search, then the model's.
    assert [a["name"] for a in answer.activity] == ["search_notes", "search_notes"]
    assert answer.activity[0]["first"] and not answer.activity[1].get("first")
    assert answer.model_label == "home:local-7b"
    # The tool result reached the model as labelled data.
    tool_message = next(m for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool")
    assert (
        "<retrieved_data>" in tool_message["content"]
        and "latest version" in tool_message["content"]
    )
    # The exchange is searchable history.
    from apps.chats.history import search_history

    assert search_history(owner, "diverter valve")[0].chat_id == chat.pk


def test_citations_to_nothing_are_removed_and_counted(owner, notes, local_model, llm):
    llm.queue(*search_then("It was Priya [1], see also [9]."))
    _, answer = run_turn(owner, "Who fixed the boiler?")
    assert "[9]" not in answer.text and "[1]" in answer.text
    assert answer.usage["invalid_citations"] == 1
    assert "1 citation pointed at no passage and was removed." in answer.notes


def test_an_uncited_answer_is_asked_once_to_cite(owner, notes, local_model, llm):
    llm.queue(*search_then("Priya did it."), Reply(text="Priya did it [1]."))
    _, answer = run_turn(owner, "Who fixed the boiler?")
    assert answer.text == "Priya did it [1]."
    assert len(answer.citations) == 1
    assert "cited none" in json.dumps(llm.chat_requests[-1].json["messages"][-1])


def test_still_uncited_after_asking_is_marked(owner, notes, local_model, llm):
    llm.queue(*search_then("Priya did it."), Reply(text="Priya did it."))
    _, answer = run_turn(owner, "Who fixed the boiler?")
    assert answer.text == "Priya did it."
    assert any(note.startswith("Uncited") for note in answer.notes)


def test_bad_tool_calls_go_back_to_the_model_and_the_loop_continues(owner, notes, local_model, llm):
    llm.queue(
        Reply(tool_calls=[("search_notes", "{not json")]),
        Reply(tool_calls=[("delete_everything", "{}")]),
        Reply(tool_calls=[("get_document", json.dumps({"document_id": 999999}))]),
        Reply(text="I could not find it."),
    )
    _, answer = run_turn(owner, "Find the boiler note")
    assert answer.status == Message.Status.DONE
    results = [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in results[0]
    assert "Unknown tool 'delete_everything'" in results[1]
    assert "not found" in results[2]


def test_another_persons_document_is_not_found_for_the_model(
    owner, member, notes, local_model, llm
):
    mine = Document.objects.filter(source=notes).first()
    llm.queue(
        Reply(tool_calls=[("get_document", json.dumps({"document_id": mine.pk}))]), Reply(text="ok")
    )
    run_turn(member, "read it")
    tool = next(m for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool")
    assert tool["content"].endswith(f"document {mine.pk} not found")
    assert "Priya" not in json.dumps(llm.chat_requests[-1].json)


def test_endless_tool_calling_stops_at_the_round_limit(owner, notes, local_model, llm, settings):
    settings.CHAT_MAX_TOOL_ROUNDS = 2
    loop = Reply(tool_calls=[("library_stats", "{}")])
    llm.queue(loop, loop, loop, loop, loop)
    _, answer = run_turn(owner, "stats forever")
    assert answer.status == Message.Status.DONE
    assert any("kept calling tools" in n for n in answer.notes)
    assert len(llm.chat_requests) == 3


@pytest.mark.parametrize(
    "reply,cause",
    [
        (Reply(status=401), "rejected the API key"),
        (Reply(status=429), "429"),
        (Reply(status=500), "500"),
        (Reply(text="partial answer here", drop_after_chunks=2), "dropped"),
    ],
)
def test_endpoint_failures_become_a_saved_warning_and_the_chat_stays_usable(
    owner, notes, cloud_user, cloud_model, llm, reply, cause
):
    llm.queue(reply)
    chat, answer = run_turn(cloud_user, "Who fixed the boiler?", model="cloud:big")
    assert answer.status == Message.Status.ERROR
    assert "⚠️" in answer.text and cause in answer.text
    assert "sk-cloud-secret" not in answer.text + json.dumps(answer.turns) + json.dumps(
        answer.notes
    )
    assert "Search results" in answer.text and answer.citations  # the passages still help
    llm.queue(Reply(text="Back to normal."))
    _, again = run_turn(cloud_user, "hello again", chat=chat)
    assert again.status == Message.Status.DONE and again.text.startswith("Back to normal.")


def test_an_unreachable_endpoint_is_named(owner, notes, cloud_user, llm):
    from apps.instance.services import connection_create, model_add

    down = connection_create(
        name="down", kind="openai", base_url="http://127.0.0.1:9/v1", location="local"
    )
    model_add(connection=down, model_id="m", supports_tools=True)
    _, answer = run_turn(cloud_user, "anyone there?", model="down:m")
    assert answer.status == Message.Status.ERROR
    assert "could not reach" in answer.text


def test_without_any_model_the_chat_answers_with_search_results(owner, notes):
    _, answer = run_turn(owner, "Who fixed the boiler valve?")
    assert answer.status == Message.Status.DONE
    assert answer.text.startswith("**Search results**")
    assert answer.citations and "[1]" in answer.text
    assert any("No language model is configured" in n for n in answer.notes)
    # A member learns who can fix it.
    assert any("ask an admin to connect a model in Admin → Connections" in n for n in answer.notes)


def test_without_a_model_a_question_matching_nothing_gets_no_passages(owner, notes):
    _, answer = run_turn(owner, "qwxzv")
    assert "nothing in your library matches this question" in answer.text
    assert answer.citations == []


def test_remove_document_only_shows_a_card(owner, notes, local_model, llm):
    document = Document.objects.filter(source=notes).first()
    llm.queue(
        Reply(tool_calls=[("remove_document", json.dumps({"document_id": document.pk}))]),
        Reply(text="It awaits your confirmation."),
    )
    _, answer = run_turn(owner, "remove the old boiler note")
    assert Document.objects.filter(pk=document.pk).exists()
    [card] = PendingAction.objects.filter(message=answer)
    assert card.status == "pending" and card.payload["document_id"] == document.pk
    client = Client()
    client.force_login(owner)
    response = client.post(f"/chat/action/{card.pk}/", {"confirm": "1"})
    assert b"No file was touched" in response.content
    assert not Document.objects.filter(pk=document.pk).exists()


def test_add_document_queues_an_ingest(owner, notes, local_model, llm, settings):
    from tests.fakes.web import FakeWeb

    with FakeWeb() as web:
        settings.FETCH_ALLOW_HOSTS = [web.host_port]
        web.page(
            "/article",
            "<html><head><title>Rye bread</title></head><body><article><h1>Rye bread</h1>"
            + "<p>Rye dough is sticky; use wet hands and a long proof in a warm kitchen.</p>" * 6
            + "</article></body></html>",
        )
        llm.queue(
            Reply(tool_calls=[("add_document", json.dumps({"url_or_arxiv": web.url("/article")}))]),
            Reply(text="Added."),
        )
        _, answer = run_turn(owner, "save this page")
    page = Document.objects.get(kind="web")
    assert page.status == "ready"  # the ingest job ran (inline in tests)
    assert answer.activity[0]["state"] == "ok"


def test_one_turn_at_a_time_per_chat(owner, notes, local_model, llm):
    chat, _ = run_turn(owner, "first")
    services.turn_start(user=owner, chat=chat, text="second")  # leaves a reply pending
    from apps.core.errors import Conflict

    with pytest.raises(Conflict):
        services.turn_start(user=owner, chat=chat, text="third")


@pytest.mark.parametrize(
    "text,reason", [("   ", "write a message"), ("x" * 32_001, "the limit is 32,000")]
)
def test_empty_and_oversized_messages_are_refused(owner, text, reason):
    from apps.core.errors import Refused

    with pytest.raises(Refused, match=reason):
        services.turn_start(user=owner, chat=None, text=text)
    assert not Message.objects.exists()


def test_hostile_model_output_is_rendered_inert(owner, notes, local_model, llm):
    llm.queue(
        Reply(
            text='<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) <div hx-get="/accounts/logout/">y</div>'
        )
    )
    _, answer = run_turn(owner, "say something")
    html = str(ChatReply.of(answer).answer_html)
    assert "<script" not in html and "<img" not in html and "<div" not in html
    assert "javascript:" not in html.replace("(javascript:alert(3))", "")
    assert "&lt;script&gt;" in html


def test_compaction_summarises_only_what_is_older_than_the_last_four_exchanges(owner, notes, llm):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="tiny", kind="openai", base_url=llm.base_url, location="local"
    )
    model_add(
        connection=connection,
        model_id="small",
        supports_tools=True,
        context_length=600,
        default=True,
    )
    chat = None
    for n in range(5):  # five long exchanges: past 75% of 600 tokens
        llm.queue(Reply(text=f"Answer {n}: " + "words " * 60))
        chat, _ = run_turn(owner, f"Question {n}: " + "context " * 40, chat=chat)
    llm.queue(Reply(text="Summary: question 0 was asked."), Reply(text="Fine."))
    chat, answer = run_turn(owner, "And now?", chat=chat)
    assert chat.summary.startswith("Summary:")
    assert any("summarised" in n for n in answer.notes)
    summarising = json.dumps(llm.chat_requests[-2].json["messages"])
    assert "Question 0" in summarising and "Question 1" not in summarising
    last = llm.chat_requests[-1].json["messages"]
    assert "Summary: question 0" in last[0]["content"]
    sent = json.dumps(last[1:])
    assert "Question 0" not in sent
    assert all(f"Question {n}" in sent and f"Answer {n}" in sent for n in range(1, 5))


def test_a_model_of_unknown_context_length_is_compacted_against_a_safe_default(
    owner, notes, llm, settings
):
    from apps.instance.services import connection_create, model_add

    settings.CHAT_DEFAULT_CONTEXT_TOKENS = 1024
    connection = connection_create(
        name="unk", kind="openai", base_url=llm.base_url, location="local"
    )
    model_add(connection=connection, model_id="mystery", supports_tools=True, default=True)
    chat = None
    for n in range(5):
        llm.queue(Reply(text=f"Answer {n}: " + "words " * 120))
        chat, _ = run_turn(owner, f"Question {n}: " + "context " * 60, chat=chat)
    llm.queue(Reply(text="Summary: earlier."), Reply(text="Fine."))
    chat, _ = run_turn(owner, "And now?", chat=chat)
    assert chat.summary == "Summary: earlier."


def test_a_streaming_reply_is_saved_as_it_goes_and_a_late_batch_changes_nothing(
    owner, local_model, llm, monkeypatch
):
    import threading

    from asgiref.sync import async_to_sync, sync_to_async

    from apps.chats import saving
    from apps.chats.runner import reply_start

    # Every piece that arrives has the reply saved, and the stream's last piece
    # waits until a save of part of the text has been written: the test looks
    # at the row between the two, on events, however busy the machine is.
    monkeypatch.setattr(saving, "SAVE_INTERVAL", 0)
    saved_part = threading.Event()
    real_save_batch = saving.save_batch

    def save_batch(snapshots):
        real_save_batch(snapshots)
        if any(not s.final and s.fields.get("text") for s in snapshots):
            saved_part.set()

    monkeypatch.setattr(saving, "save_batch", save_batch)
    text = "word " * 60
    release = threading.Event()
    llm.queue(Reply(text=text, chunk_chars=5, hold_last_until=release))
    chat, _, answer = services.turn_start(user=owner, chat=None, text="talk slowly")

    def row():
        return Message.objects.values("status", "text").get(pk=answer.pk)

    async def watch():
        generation = reply_start(answer.pk, chat.pk)
        # A hang guard, not a timing assert: the save comes as soon as a piece does.
        assert await sync_to_async(saved_part.wait, thread_sensitive=False)(120)
        during = await sync_to_async(row, thread_sensitive=False)()
        release.set()
        await generation.task
        return during

    during = async_to_sync(watch)()
    assert during["status"] == "streaming" and 0 < len(during["text"]) < len(text)
    assert row() == {"status": "done", "text": text}
    # A periodic snapshot that arrives after the final save leaves the row alone.
    stale = saving.Snapshot(answer.pk, {**during, "reasoning": "", "activity": [],
                                        "citations": [], "notes": [], "model_label": ""},
                            final=False, index=False)  # fmt: skip
    saving.save_batch([stale])
    assert row()["status"] == "done"


def test_a_batch_left_by_an_ended_event_loop_does_not_stop_later_saves(monkeypatch):
    # The CLI and the tests run one event loop after another: a batch still
    # gathering when its loop ended must not keep every later reply unsaved.
    from types import SimpleNamespace

    from asgiref.sync import async_to_sync

    from apps.chats import saving

    written = []
    monkeypatch.setattr(saving, "save_batch", written.append)
    saver = saving.Saver()

    def reply(pk):  # what the saver asks of a reply; its snapshot is its id here
        return SimpleNamespace(pk=pk, save_task=None, snapshot=lambda: pk)

    async def leave_a_batch_gathering():
        saver.add(reply(1))

    async def save_another():
        saver.add(reply(2))
        await saver.task

    async_to_sync(leave_a_batch_gathering)()
    async_to_sync(save_another)()
    assert written == [[2]]
