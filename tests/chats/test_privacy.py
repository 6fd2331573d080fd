"""Privacy is enforced in code at the tool and provider boundary: a cloud
model only ever sees cloud-allowed content, a private chat stays local, and a
planted marker in a local-only note never reaches the fake cloud server."""

import json

import pytest

from apps.chats import services
from apps.chats.history import search_history
from apps.chats.tools import LOCAL_ONLY_STOP, MIXED_CAVEAT
from apps.core.errors import Refused
from apps.library.ingest.sync import source_sync
from apps.library.models import Document
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "zebracorn-4417"


@pytest.fixture
def library(owner, make_vault, make_source, embedder):
    """Local-only notes with the marker (a private folder and a local-only
    vault), and a cloud-allowed vault about the same topic."""
    local = make_vault("local")
    local.write("health/physio.md", f"# Physio\n\nKnee physio every Tuesday. Code {MARKER}.\n")
    local.write("private/diary.md", f"# Diary\n\nPhysio hurt today. {MARKER} again.\n")
    source_sync(source=make_source(owner, local, name="local"), embedder=embedder)
    shared = make_vault("shared")
    shared.write("garden.md", "# Garden\n\nThe apple tree needs pruning in February.\n")
    shared.write("private/secret.md", f"# Secret\n\nApple tree secret {MARKER}.\n")
    source_sync(
        source=make_source(owner, shared, name="shared", cloud="allowed"), embedder=embedder
    )


def requests_text(llm, since: int = 0) -> str:
    return json.dumps([r.json for r in llm.chat_requests[since:]])


def test_a_question_matching_only_local_only_notes_stops_without_a_model_call(
    cloud_user, library, cloud_model, llm
):
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "knee physio Tuesday"}))]),
        Reply(text="should never be asked"),
    )
    chat, answer = run_turn(cloud_user, "When is my knee physio?", model="cloud:big")
    assert answer.text == LOCAL_ONLY_STOP
    # Jarvis's own first search decides it: no model call at all.
    assert len(llm.chat_requests) == 0
    assert MARKER not in requests_text(llm)
    assert not chat.private


def test_mixed_results_carry_the_fixed_caveat(cloud_user, library, cloud_model, llm):
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "apple tree secret"}))]),
        Reply(text="Prune in February [1]."),
    )
    _, answer = run_turn(cloud_user, "What about the apple tree?", model="cloud:big")
    assert MIXED_CAVEAT in answer.notes
    assert MARKER not in requests_text(llm)
    assert "pruning in February" in requests_text(llm)


def test_get_document_and_list_documents_never_serve_local_only_content_to_the_cloud(
    cloud_user, library, cloud_model, llm
):
    diary = Document.objects.get(path="private/diary.md")
    physio = Document.objects.get(path="health/physio.md")
    llm.queue(
        Reply(
            tool_calls=[
                ("get_document", json.dumps({"document_id": diary.pk})),
                ("get_document", json.dumps({"document_id": physio.pk})),
            ]
        ),
        Reply(tool_calls=[("list_documents", "{}"), ("library_stats", "{}")]),
        Reply(text="done"),
    )
    _, _answer = run_turn(cloud_user, "read everything", model="cloud:big")
    sent = requests_text(llm)
    assert MARKER not in sent and "Physio" not in sent and "Diary" not in sent
    assert f"document {diary.pk} not found" in sent and f"document {physio.pk} not found" in sent
    assert "Garden" in sent  # the cloud-allowed note is listed


def test_a_local_model_reading_local_only_notes_makes_the_chat_private_for_good(
    cloud_user, library, local_model, cloud_model, llm
):
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "knee physio"}))]),
        Reply(text="Tuesdays [1]."),
    )
    chat, answer = run_turn(cloud_user, "When is physio?")
    assert chat.private
    assert any("now private" in n for n in answer.notes)
    with pytest.raises(Refused, match="local model"):
        services.chat_model_set(user=cloud_user, chat=chat, label="cloud:big")
    # Even a label set behind its back does not send the chat to the cloud.
    type(chat).objects.filter(pk=chat.pk).update(model_label="cloud:big")
    before = len(llm.chat_requests)
    _, refused = run_turn(cloud_user, "and now?", chat=chat)
    assert refused.status == "error" and "local model" in refused.text
    assert len(llm.chat_requests) == before


def test_chat_history_of_private_chats_never_reaches_the_cloud(
    cloud_user, library, local_model, cloud_model, llm
):
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "knee physio"}))]),
        Reply(text=f"Physio Tuesdays, code {MARKER} [1]."),
    )
    private_chat, _ = run_turn(cloud_user, "physio code?")
    assert private_chat.private
    assert search_history(cloud_user, "physio code")  # it is history…
    assert (
        search_history(cloud_user, "physio code", cloud_only=True) == []
    )  # …but not for the cloud
    since = len(llm.chat_requests)
    llm.queue(
        Reply(tool_calls=[("search_chat_history", json.dumps({"query": "physio code"}))]),
        Reply(text="Nothing I can see."),
    )
    # Worded so that no note is relevant: Jarvis's own first search then
    # leaves the turn to the model and its history search.
    run_turn(cloud_user, "what did I ask you last week?", model="cloud:big")
    assert "No earlier conversation matches" in requests_text(llm, since)
    assert MARKER not in requests_text(llm, since)


def test_compaction_of_a_private_chat_happens_on_its_local_model(cloud_user, library, llm):
    from apps.instance.services import connection_create, model_add

    local = connection_create(
        name="tinylocal", kind="openai", base_url=llm.base_url, location="local"
    )
    model_add(
        connection=local, model_id="small", supports_tools=True, context_length=200, default=True
    )
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "knee physio"}))]),
        Reply(text=f"{MARKER} " + "words " * 80),
    )
    chat, _ = run_turn(cloud_user, "physio? " + "context " * 40)
    assert chat.private
    for n in range(4):  # four more exchanges: the first is then older than the last four
        llm.queue(Reply(text="words " * 40))
        chat, _ = run_turn(cloud_user, f"more {n} " + "context " * 20, chat=chat)
    llm.queue(
        lambda request: Reply(
            text="Summary." if "Summarise the conversation" in json.dumps(request) else "ok"
        )
    )
    llm.queue(lambda request: Reply(text="ok"))
    chat, answer = run_turn(cloud_user, "more " + "context " * 40, chat=chat)
    assert chat.summary == "Summary."
    assert any("summarised" in n for n in answer.notes)
    # Every request, the summarising one included, went to the local connection's model.
    assert {r.json["model"] for r in llm.chat_requests} == {"small"}


def test_the_fake_cloud_server_never_saw_the_marker_across_a_whole_session(
    cloud_user, library, cloud_model, llm
):
    diary = Document.objects.get(path="private/diary.md")
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": MARKER}))]),
    )
    run_turn(cloud_user, f"find {MARKER}", model="cloud:big")
    llm.queue(
        Reply(
            tool_calls=[
                ("get_document", json.dumps({"document_id": diary.pk})),
                ("search_chat_history", json.dumps({"query": MARKER})),
            ]
        ),
        Reply(text="nothing"),
    )
    run_turn(cloud_user, "look harder", model="cloud:big")
    sent = requests_text(llm)
    # The person's own question holds the marker (they typed it); no note's text does.
    assert "again." not in sent and "Knee physio" not in sent and "Apple tree secret" not in sent


def test_a_passage_never_names_a_newer_version_the_reader_may_not_see(
    owner, member, make_vault, make_source, embedder
):
    from apps.chats.tools.context import newer_version_label as _superseded_by

    vault = make_vault("household")
    vault.write("plans/lisbon_2026-03-01.md", "# Lisbon trip\n\nDates: 12-16 April.\n")
    vault.write("private/lisbon_2026-05-01.md", f"# Lisbon trip\n\nMoved to May. {MARKER}\n")
    source_sync(
        source=make_source(owner, vault, name="household", sharing="household"), embedder=embedder
    )
    older = Document.objects.get(path="plans/lisbon_2026-03-01.md")
    newer = Document.objects.get(path="private/lisbon_2026-05-01.md")
    # The two as one family, the newer one in the owner's private folder.
    Document.objects.filter(pk__in=[older.pk, newer.pk]).update(family="lisbon")
    Document.objects.filter(pk=older.pk).update(is_latest=False)
    older.refresh_from_db()
    assert _superseded_by(older, owner).startswith("private/lisbon_2026-05-01.md")
    assert _superseded_by(older, member) == "a newer version"


def test_a_cloud_turn_searches_each_question_once(
    cloud_user, library, cloud_model, llm, monkeypatch
):
    """The hold-back rule needs what matches in all the person may read as
    well as in what the cloud may see: both come from one search, so the
    keyword leg runs once per question, not once per view."""
    from apps.library.search import engine

    searched = []
    real = engine.keyword_legs

    def counting(query, views, *args, **kwargs):
        searched.append((query, tuple(sorted(views))))
        return real(query, views, *args, **kwargs)

    monkeypatch.setattr(engine, "keyword_legs", counting)
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "apple tree secret"}))]),
        Reply(text="Prune in February [1]."),
    )
    _, answer = run_turn(cloud_user, "What about the apple tree?", model="cloud:big")
    assert MIXED_CAVEAT in answer.notes
    queries = [query for query, _ in searched]
    assert "apple tree secret" in queries
    assert len(queries) == len(set(queries)), searched
    # Each of those searches looked at both views at once.
    assert all(views == ("answer", "everything") for _, views in searched), searched
