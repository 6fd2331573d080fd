"""What the MCP tools return, checked in-process: only what the person may see
and may send to a cloud model, every passage re-checked before it leaves, and
results that carry dates, latest/superseded and the path."""

import contextlib
import json
from dataclasses import replace

import pytest
from django.db.models import Q

from apps.library.models import Chunk, Document
from apps.library.search import Response, search
from apps.library.search.results import chunk_result
from apps.mcp import reads
from tests.mcp.conftest import PROBES
from tests.support.fixtures import MARKER, MAX_MARKER


def everything(user) -> str:
    """Every answer every tool gives `user` for the probes, as one string."""
    answers = []
    for probe in PROBES:
        for mode in reads.MODES:
            found = reads.notes_search(user, probe, mode=mode, limit=20)
            answers.append(found["results"])  # not the query, which echoes the probe
    for document in Document.objects.all():
        with contextlib.suppress(reads.NotFound):
            answers.append(reads.document_read(user, document.pk))
    answers.append(reads.projects_list(user))
    for name in ("Shed rebuild", "Tax return", "PixelNet"):
        with contextlib.suppress(reads.NotFound):
            answers.append(reads.project_status(user, name))
    answers.append(reads.overview(user))
    return json.dumps(answers)


@pytest.mark.parametrize("who", ["owner", "member", "outsider"])
def test_the_marker_never_comes_out_of_any_tool(request, household, who):
    text = everything(request.getfixturevalue(who))
    assert MARKER not in text
    # Max's own notes are his (he shares them with cloud models), nobody else's.
    assert (MAX_MARKER in text) == (who == "member")


def test_the_owner_gets_shared_passages_with_dates_versions_and_paths(owner, household):
    found = reads.notes_search(owner, "when was the boiler serviced", mode="history", limit=5)
    boiler = [r for r in found["results"] if r["path"].startswith("boiler")]
    assert [r["path"] for r in boiler] == ["boiler_2025-03.md", "boiler_2026-03.md"]
    old, new = boiler
    assert (old["date"], old["is_latest"]) == ("2025-03-01", False)
    assert old["superseded_by"]["path"] == "boiler_2026-03.md"
    assert (new["is_latest"], new["superseded_by"]) == (True, None)
    current = reads.notes_search(owner, "when was the boiler serviced", mode="current")
    assert "boiler_2025-03.md" not in [r["path"] for r in current["results"]]


def test_a_shared_note_comes_without_its_private_section(member, household):
    handover = Document.objects.get(path="handover.md")
    read = reads.document_read(member, handover.pk)
    sections = [p["section"] for p in read["passages"]]
    assert sections == ["Garden", "Plans"]


def test_local_only_private_and_other_peoples_documents_are_not_found(owner, member, household):
    for path in ("private/diary.md", "tax.md"):
        with pytest.raises(reads.NotFound):
            reads.document_read(owner, Document.objects.get(path=path).pk)
    with pytest.raises(reads.NotFound):
        reads.document_read(owner, Document.objects.get(path="gifts.md").pk)
    with pytest.raises(reads.NotFound):
        reads.document_read(owner, 999999)


def test_projects_come_from_the_registry_without_local_only_ones(owner, member, household):
    listed = reads.projects_list(owner)
    assert [p["name"] for p in listed["projects"]] == ["PixelNet", "Shed rebuild"]
    assert reads.projects_list(owner, status="done")["projects"][0]["key_result"] == (
        "Test accuracy: 91.3% on CIFAR-10"
    )
    with pytest.raises(reads.NotFound):
        reads.project_status(owner, "Tax return")  # its note is local-only
    (shed,) = reads.project_status(member, "shed")["matches"]
    assert shed["status"] == "paused" and shed["reason"] is None
    assert shed["next_steps"] == ["Order the timber"]
    assert shed["timeline"] == [
        {"date": None, "status": "paused", "path": "projects/shed.md", "is_latest": True}
    ]


def test_every_result_is_checked_again_before_it_leaves(owner, household, monkeypatch):
    """Plant passages the search must never have returned (private sections, a
    private folder, local-only notes, another person's note): none comes out."""
    planted = [
        chunk_result(chunk)
        for chunk in Chunk.objects.select_related("document__source").filter(
            Q(text__contains=MARKER) | Q(text__contains=MAX_MARKER)
        )
    ]
    assert sorted(r.path for r in planted) == [
        "gifts.md",  # Max's own
        "handover.md",  # a private section
        "private/diary.md",  # a private folder
        "private/project-overview.md",  # Olivia's overview: her private folder
        "projects/shed.md",  # a private section
        "tax.md",  # a local-only collection
        "taxes_project.md",
    ]

    def leaky_search(*, user, query, **options):
        honest = search(user=user, query=query, **options)
        return replace(honest, results=planted + honest.results)

    monkeypatch.setattr(reads, "search", leaky_search)
    found = reads.notes_search(owner, "quince", mode="any", limit=20)
    assert found["results"]
    assert MARKER not in json.dumps(found) and MAX_MARKER not in json.dumps(found)


def test_a_response_with_nothing_shareable_is_empty_not_an_error(outsider, household):
    assert reads.notes_search(outsider, "quince")["results"] == []
    assert reads.projects_list(outsider)["projects"] == []
    assert isinstance(search(user=outsider, query="quince"), Response)
