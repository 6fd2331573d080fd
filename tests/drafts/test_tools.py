"""The assistant's drafts tools through a real turn: what it may write, what
waits for the person, and what a cloud model never sees."""

from __future__ import annotations

import json

import pytest

from apps.chats.models import Chat, PendingAction
from apps.drafts import sandbox, services
from apps.drafts.models import Draft, Proposal
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


def call(name: str, **arguments) -> Reply:
    return Reply(tool_calls=[(name, json.dumps(arguments))])


def tool_results(llm) -> list[str]:
    return [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


def test_the_model_creates_a_draft_with_a_card_linking_to_it(owner, local_model, llm, drafts_root):
    llm.queue(
        call("create_draft", title="Insurer letter", filename="letter.md", content="Dear Sir,\n"),
        Reply(text="I drafted the letter."),
    )
    chat, answer = run_turn(owner, "Draft the letter to the insurer")
    draft = Draft.objects.get()
    assert draft.chat == chat and draft.owner == owner
    assert sandbox.read_text(owner.pk, draft.key, "letter.md") == "Dear Sir,\n"
    card = answer.actions.get()
    assert card.kind == "draft_created" and card.payload["draft_id"] == draft.pk
    assert "Created draft" in tool_results(llm)[0]


def test_changing_a_file_is_only_a_proposal(owner, local_model, llm, draft):
    llm.queue(
        call(
            "propose_draft_edit",
            draft_id=draft.pk,
            filename="letter.md",
            new_content="Dear Madam,\n",
        ),
        Reply(text="I suggested a change."),
    )
    _, answer = run_turn(owner, "Make it Madam")
    assert sandbox.read_text(owner.pk, draft.key, "letter.md") == "Dear Sir,\n"
    proposal = Proposal.objects.get()
    assert proposal.status == "pending" and proposal.hunks[0]["kind"] == "replace"
    card = answer.actions.get()
    assert card.kind == "review_draft_edit" and card.status == PendingAction.Status.PENDING
    assert card.payload["proposal_id"] == proposal.pk
    assert "Proposal only" in tool_results(llm)[0]


def test_bad_names_and_foreign_drafts_are_errors_the_model_reads(
    owner, member, local_model, llm, draft, drafts_root
):
    theirs = services.draft_create(owner=member, title="Max's", filename="max.md", content="mine")
    llm.queue(
        call("create_draft", title="x", filename="../../etc/passwd", content="x"),
        call("read_draft", draft_id=theirs.pk, filename="max.md"),
        call(
            "add_draft_file",
            draft_id=draft.pk,
            filename="-latex=pdflatex -shell-escape.tex",
            content="x",
        ),
        Reply(text="done"),
    )
    run_turn(owner, "try things")
    results = [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]
    assert "cannot contain '/'" in results[0]
    assert results[1].endswith(f"draft {theirs.pk} not found")
    assert "cannot start with '-'" in results[2]
    assert "mine" not in json.dumps(llm.chat_requests[-1].json)
    # Nothing was written anywhere but the two drafts' own folders.
    written = {p.relative_to(drafts_root).as_posix() for p in drafts_root.rglob("*") if p.is_file()}
    assert written == {f"{owner.pk}/{draft.key}/letter.md", f"{member.pk}/{theirs.key}/max.md"}


def test_a_private_draft_is_refused_to_a_cloud_model(owner, cloud_user, cloud_model, llm):
    private_chat = Chat.objects.create(owner=cloud_user, private=True)
    secret = services.draft_create(
        owner=cloud_user,
        title="Diagnosis",
        filename="health.md",
        content="MARKER-7731 results",
        chat=private_chat,
    )
    services.draft_create(owner=cloud_user, title="Shopping", filename="list.md", content="eggs")
    llm.queue(
        call("list_drafts"),
        call("read_draft", draft_id=secret.pk, filename="health.md"),
        Reply(text="ok"),
    )
    run_turn(cloud_user, "what drafts do I have?", model="cloud:big")
    results = tool_results(llm)
    assert "Shopping" in results[0] and "Diagnosis" not in results[0]
    assert "private" in results[1] and "cloud model cannot" in results[1]
    for request in llm.chat_requests:
        assert "MARKER-7731" not in json.dumps(request.json)


def test_reading_a_private_draft_on_a_local_model_makes_the_chat_private(owner, local_model, llm):
    private_chat = Chat.objects.create(owner=owner, private=True)
    secret = services.draft_create(
        owner=owner, title="Diagnosis", filename="health.md", content="results", chat=private_chat
    )
    llm.queue(call("read_draft", draft_id=secret.pk, filename="health.md"), Reply(text="ok"))
    chat, _ = run_turn(owner, "read my diagnosis draft")
    assert "BEGIN DRAFT FILE" in tool_results(llm)[0] and "results" in tool_results(llm)[0]
    assert chat.private
