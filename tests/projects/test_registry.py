"""The registry: which notes are projects, one record per project from its
newest version, every field linked to the passage that states it, the date
decided by code, each version read once (again when it changes)."""

from apps.library.ingest.sync import source_sync
from apps.library.models import Chunk, Document
from apps.projects.models import Project, ProjectReading
from apps.projects.selectors import projects_for, projects_named_for, timeline_for
from tests.projects.conftest import QUBIT_OCT


def test_notes_in_a_projects_folder_and_type_project_notes_are_projects(
    owner, project_vault, refresh
):
    report = refresh()
    assert report.projects == 2
    assert sorted(p.name for p in Project.objects.all()) == ["PixelNet", "QubitML"]


def test_the_newest_version_wins_and_its_date_is_the_notes(owner, project_vault, refresh):
    refresh()
    (qubit,) = projects_named_for(user=owner, name="qubitml")
    newest = Document.objects.get(path="projects/qubitml_oct2026.md")
    assert qubit.project.document == newest and newest.is_latest
    assert qubit.status == "paused"
    assert qubit.last_updated == newest.shown_date and qubit.last_updated.month == 10


def test_every_field_links_to_the_passage_that_states_it(owner, project_vault, refresh):
    refresh()
    (qubit,) = projects_named_for(user=owner, name="QubitML")
    assert qubit.reason.startswith("The project is too theoretical for my resume goals")
    assert qubit.key_result == "Speed-up over grid search: 1.4x on small problems"
    for field in ("status", "reason", "key_result"):
        evidence = qubit.evidence[field]
        chunk = Chunk.objects.get(pk=evidence.chunk_id)
        assert chunk.document_id == qubit.project.document_id
        assert evidence.section == chunk.section
    assert "PAUSED" in Chunk.objects.get(pk=qubit.evidence["status"].chunk_id).section
    assert "1.4x" in Chunk.objects.get(pk=qubit.evidence["key_result"].chunk_id).text


def test_frontmatter_fields_are_taken_as_they_are(owner, project_vault, refresh):
    refresh()
    (pixel,) = projects_named_for(user=owner, name="PixelNet")
    assert pixel.status == "done"
    assert pixel.key_result == "91.3% CIFAR-10 test accuracy"
    assert pixel.evidence["key_result"].origin == "frontmatter"
    assert pixel.evidence["key_result"].chunk_id is None


def test_nothing_is_filled_in_that_the_note_does_not_state(owner, project_vault, refresh):
    refresh()
    (pixel,) = projects_named_for(user=owner, name="PixelNet")
    assert pixel.reason == "" and pixel.next_steps == [] and pixel.blockers == []
    (qubit,) = projects_named_for(user=owner, name="QubitML")
    assert qubit.next_steps == []  # the August version's next steps are not the record's


def test_the_timeline_shows_the_status_change_across_versions(owner, project_vault, refresh):
    refresh()
    (qubit,) = projects_named_for(user=owner, name="QubitML")
    rows = timeline_for(user=owner, project=qubit.project)
    assert [(r.status, r.changed, r.is_latest) for r in rows] == [
        ("active", False, False),
        ("paused", True, True),
    ]
    assert [r.date.month for r in rows] == [8, 10]


def test_an_unchanged_note_is_not_read_again_and_a_changed_one_is(
    owner, vault, project_vault, refresh
):
    refresh()
    first = {r.document_id: r.read_at for r in ProjectReading.objects.all()}
    report = refresh()
    assert report.read == 0 and report.unchanged == 3
    vault.write("projects/qubitml_oct2026.md", QUBIT_OCT.replace("PAUSED", "BLOCKED"))
    source_sync(source=project_vault, embedder=None)
    report = refresh()
    assert report.read == 1
    (qubit,) = projects_named_for(user=owner, name="QubitML")
    assert qubit.status == "blocked"
    assert (
        ProjectReading.objects.get(document__path="notes/pixelnet.md").read_at
        == first[Document.objects.get(path="notes/pixelnet.md").pk]
    )


def test_a_note_that_stops_being_a_project_leaves_the_registry(
    owner, vault, project_vault, refresh
):
    refresh()
    vault.write("notes/pixelnet.md", "# PixelNet\n\nJust a note now.\n")
    source_sync(source=project_vault, embedder=None)
    report = refresh()
    assert report.removed == 1
    assert [v.name for v in projects_for(user=owner)] == ["QubitML"]


def test_status_filters_pick_from_the_list(owner, project_vault, refresh):
    refresh()
    assert [v.name for v in projects_for(user=owner, status="paused")] == ["QubitML"]
    assert [v.name for v in projects_for(user=owner, status="done")] == ["PixelNet"]
    assert projects_for(user=owner, status="active") == []
