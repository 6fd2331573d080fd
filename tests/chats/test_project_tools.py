"""Chat tools over the project registry and private sections: a cloud model
never receives a local-only project, a field read from a private section, or a
private section of a shared note; a local model reading the owner's private
section makes the chat private. Checked on what the fake model server received."""

import json
import re

import pytest

from apps.library.models import Document
from tests.fakes.llm import Reply
from tests.support.fixtures import MARKER, run_turn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("household")]


def sent(llm) -> str:
    return json.dumps([r.json for r in llm.chat_requests])


def test_a_status_question_is_answered_from_the_registry_with_a_citation(owner, local_model, llm):
    def cite_the_project(body):
        # Jarvis's own first search may have numbered passages before the
        # tool's: cite the number the project's status was given.
        number = re.search(r"PixelNet: done \[(\d+)\]", body["messages"][-1]["content"])
        return Reply(text=f"PixelNet is done [{number.group(1)}].")

    llm.queue(
        Reply(tool_calls=[("list_projects", json.dumps({"status": "done"}))]), cite_the_project
    )
    _, answer = run_turn(owner, "Which projects are done?")
    tool_result = llm.chat_requests[1].json["messages"][-1]["content"]
    assert "PixelNet: done [" in tool_result and "Shed" not in tool_result
    assert answer.citations[0]["path"] == "projects/pixelnet.md"


def test_a_cloud_model_never_gets_local_only_projects_or_private_fields(
    cloud_user, cloud_model, llm
):
    llm.queue(
        Reply(tool_calls=[("list_projects", "{}")]),
        Reply(tool_calls=[("get_project_status", json.dumps({"name": "shed"}))]),
        Reply(tool_calls=[("get_project_status", json.dumps({"name": "Tax return"}))]),
        Reply(text="Done."),
    )
    chat, answer = run_turn(cloud_user, "How are my projects?", model="cloud:big")
    text = sent(llm)
    assert "Shed rebuild" in text and "PixelNet" in text
    assert "Tax return: blocked" not in text and "No project called 'Tax return'" in text
    assert "reason: not stated" in text  # the reason is in a private section
    assert MARKER not in text
    assert "left out" in " ".join(answer.notes)
    assert not chat.private


def test_get_document_on_a_cloud_model_leaves_out_a_private_section(cloud_user, cloud_model, llm):
    handover = Document.objects.get(path="handover.md")
    llm.queue(
        Reply(tool_calls=[("get_document", json.dumps({"document_id": handover.pk}))]),
        Reply(text="The quince needs pruning [1]."),
    )
    run_turn(cloud_user, "What is in my handover?", model="cloud:big")
    text = sent(llm)
    assert "quince tree" in text and "Repaint the shed" in text
    assert MARKER not in text and "Health" not in text


def test_the_owner_s_local_model_reads_the_private_section_and_the_chat_turns_private(
    owner, local_model, llm
):
    handover = Document.objects.get(path="handover.md")
    llm.queue(
        Reply(tool_calls=[("get_document", json.dumps({"document_id": handover.pk}))]),
        Reply(text="Your blood pressure code is noted [2]."),
    )
    chat, _ = run_turn(owner, "What did the clinic say?")
    assert MARKER in sent(llm)
    assert chat.private


def test_the_first_search_brings_the_projects_registry_record(owner, local_model, llm):
    # A model that calls no tool still gets the project's status, citable.
    def cite_the_status(body):
        sent = json.dumps(body["messages"][-1])
        number = re.search(r"status: done \[(\d+)\]", sent)
        return Reply(text=f"PixelNet is done [{number.group(1)}]." if number else "No idea.")

    llm.queue(cite_the_status)
    _, answer = run_turn(owner, "Where does the PixelNet classifier project stand?")
    assert "registry's records" in sent(llm) and "Project PixelNet" in sent(llm)
    assert answer.text.startswith("PixelNet is done [")
    assert answer.citations[0]["path"] == "projects/pixelnet.md"
