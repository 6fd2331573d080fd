"""Reading project notes with the owner's local model (the fake OpenAI-compatible
server): strict JSON, and code rejects what the note does not state."""

import json
import re

import pytest

from apps.projects.models import ProjectReading
from apps.projects.selectors import projects_named_for
from tests.fakes.llm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def _prompt(request) -> str:
    return request["messages"][-1]["content"]


def passage_saying(request, words: str) -> int:
    """The number of the passage of the prompt that contains `words`."""
    blocks = re.split(r"\n\n(?=\[\d+\] )", _prompt(request))
    for block in blocks:
        match = re.match(r"\[(\d+)\] ", block)
        if match and words in block:
            return int(match.group(1))
    raise AssertionError(f"no passage says {words!r}")


def answer(make):
    """A fake model that answers the QubitML October note with `make(request)`
    and every other note with an empty form."""

    def reply(request):
        if "too theoretical" in _prompt(request):
            return Reply(text=json.dumps(make(request)))
        return Reply(text='{"status": null, "reason": null, "next_steps": [], "blockers": []}')

    return reply


def reading_of(path: str) -> ProjectReading:
    return ProjectReading.objects.get(document__path=path)


def test_the_local_model_fills_the_form_and_each_field_keeps_its_passage(
    owner, project_vault, local_model, llm, refresh
):
    def form(request):
        why = passage_saying(request, "too theoretical")
        return {
            "status": {"value": "paused", "passage": passage_saying(request, "inconclusive")},
            "reason": {"value": "too theoretical for my resume goals", "passage": why},
            "next_steps": [],
            "blockers": [],
            "key_result": {
                "value": "1.4x speed-up over grid search",
                "passage": passage_saying(request, "1.4x"),
            },
        }

    llm.default = answer(form)
    refresh()
    reading = reading_of("projects/qubitml_oct2026.md")
    assert "model home:local-7b" in reading.read_by
    assert reading.fields["reason"]["value"] == "too theoretical for my resume goals"
    assert reading.fields["reason"]["origin"] == "model"
    assert "too theoretical" in reading.fields["reason"]["quote"]
    assert reading.fields["key_result"]["value"] == "1.4x speed-up over grid search"
    assert len(llm.chat_requests) == 3  # one call per project note
    refresh()
    assert len(llm.chat_requests) == 3  # unchanged notes are not read again


@pytest.mark.parametrize(
    ("field", "invented", "why"),
    [
        ("status", {"value": "in-progress", "passage": 0}, "is not one of"),
        ("status", {"value": "ongoing research", "passage": 0}, "is not one of"),
        ("reason", {"value": "N/A", "passage": 0}, "says nothing"),
        ("reason", {"value": "paused", "passage": 0}, "only repeats the status"),
        (
            "reason",
            {"value": "Prof. Sharma moved to another university", "passage": 0},
            "does not say",
        ),
        (
            "reason",
            {"value": "too theoretical for my resume goals", "passage": 99},
            "cites no passage",
        ),
        ("key_result", {"value": "a clear speed-up", "passage": 0}, "has no number"),
        ("key_result", {"value": "2.7x speed-up over grid search", "passage": 0}, "does not say"),
    ],
)
def test_the_checks_reject_an_invented_field_and_leave_it_empty(
    owner, project_vault, local_model, llm, refresh, field, invented, why
):
    def form(request):
        data = {"status": {"value": "paused", "passage": passage_saying(request, "PAUSED")}}
        entry = dict(invented)
        if entry["passage"] == 0:  # cite the passage that holds the true value of the field
            entry["passage"] = passage_saying(
                request, "too theoretical" if field == "reason" else "1.4x"
            )
        data[field] = entry
        return data

    llm.default = answer(form)
    refresh()
    reading = reading_of("projects/qubitml_oct2026.md")
    assert any(why in note for note in reading.notes), reading.notes
    kept = reading.fields.get(field)
    assert kept is None or kept["value"] != invented["value"]
    if kept is not None:  # a field the note does state is filled by rules instead
        assert kept["origin"] == "rules"


def test_keys_outside_the_form_are_dropped(owner, project_vault, local_model, llm, refresh):
    llm.default = answer(
        lambda request: {
            "status": {"value": "paused", "passage": passage_saying(request, "PAUSED")},
            "budget": {"value": "4000 euros", "passage": 0},
            "owner": "Arjun",
        }
    )
    refresh()
    reading = reading_of("projects/qubitml_oct2026.md")
    assert set(reading.fields) <= {"status", "reason", "next_steps", "blockers", "key_result"}
    assert "4000" not in json.dumps(reading.fields)
    assert any("budget: not a field of the form" in n for n in reading.notes)


def test_list_items_the_note_does_not_state_are_dropped_one_by_one(
    owner, project_vault, local_model, llm, refresh
):
    llm.default = answer(
        lambda request: {
            "blockers": [
                {
                    "value": "No internship is asking for quantum ML",
                    "passage": passage_saying(request, "No internship"),
                },
                {
                    "value": "The lab's GPU is broken",
                    "passage": passage_saying(request, "No internship"),
                },
            ],
        }
    )
    refresh()
    (qubit,) = projects_named_for(user=owner, name="QubitML")
    assert qubit.blockers == ["No internship is asking for quantum ML"]


def test_a_reply_that_is_not_json_leaves_the_note_to_the_rules(
    owner, project_vault, local_model, llm, refresh
):
    llm.default = lambda request: Reply(text="Sure! The project is paused because it was hard.")
    refresh()
    reading = reading_of("projects/qubitml_oct2026.md")
    assert reading.status == "paused"  # from the "Status: PAUSED" heading, by rules
    assert reading.fields["status"]["origin"] == "rules"
    assert any("not valid JSON" in n or "no JSON object" in n for n in reading.notes)
    assert "hard" not in json.dumps(reading.fields)


def test_a_failing_model_is_asked_again_on_the_next_refresh(
    owner, project_vault, local_model, llm, refresh
):
    llm.default = lambda request: Reply(status=503)
    refresh()
    assert reading_of("projects/qubitml_oct2026.md").provisional
    calls = len(llm.chat_requests)
    llm.default = answer(
        lambda request: {
            "status": {"value": "paused", "passage": passage_saying(request, "PAUSED")}
        }
    )
    refresh()
    assert len(llm.chat_requests) > calls
    reading = reading_of("projects/qubitml_oct2026.md")
    assert not reading.provisional and reading.fields["status"]["origin"] == "model"


def test_a_cloud_model_never_reads_project_notes(owner, project_vault, cloud_model, llm, refresh):
    owner.default_model = cloud_model
    owner.save()
    refresh()
    assert llm.chat_requests == []
    (qubit,) = projects_named_for(user=owner, name="QubitML")
    assert qubit.status == "paused" and qubit.evidence["status"].origin == "rules"
