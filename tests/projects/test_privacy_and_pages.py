"""Who sees which project and which field: a project is visible to whoever may
read its latest note; a field read from a private section is its owner's
alone; a cloud model (or an MCP client) sees only projects whose note is
cloud-allowed. And the pages, the overview and the command."""

import json

import pytest
from django.core.management import call_command

from apps.library.ingest.sync import source_sync
from apps.library.models import Document
from apps.library.search import search
from apps.projects.overview import OVERVIEW_PATH, overview_markdown
from apps.projects.selectors import projects_for, projects_named_for

MARKER = "pelican-9931"

GARDEN = f"""# Garden shed rebuild

## Status: PAUSED

## Why paused <!-- private -->
- The {MARKER} diagnosis means no heavy lifting until spring

## Next steps
- Order the timber
"""

SECRET_PROJECT = f"""---
type: project
status: active
---
# Surprise party

Planning the surprise party, code {MARKER}.
"""


@pytest.fixture
def private_bits(owner, vault, make_vault, make_source, project_vault, embedder, refresh):
    vault.write("projects/garden_shed.md", GARDEN)
    vault.write("private/party.md", SECRET_PROJECT)
    source_sync(source=project_vault, embedder=embedder)
    local = make_vault("olivia-local")
    local.write("tax.md", "---\ntype: project\nstatus: blocked\n---\n# Tax return\n\nWaiting.\n")
    source_sync(source=make_source(owner, local, name="local"), embedder=embedder)
    refresh()


def names(views):
    return sorted(v.name for v in views)


def test_the_owner_sees_every_project_and_every_field(owner, private_bits):
    assert names(projects_for(user=owner)) == [
        "Garden shed rebuild",
        "PixelNet",
        "QubitML",
        "Surprise party",
        "Tax return",
    ]
    (garden,) = projects_named_for(user=owner, name="garden shed")
    assert MARKER in garden.reason and garden.withheld == 0


def test_a_household_member_sees_shared_projects_without_private_fields(member, private_bits):
    assert names(projects_for(user=member)) == ["Garden shed rebuild", "PixelNet", "QubitML"]
    (garden,) = projects_named_for(user=member, name="garden shed")
    assert garden.status == "paused" and garden.next_steps == ["Order the timber"]
    assert garden.reason == "" and garden.withheld == 1
    assert MARKER not in json.dumps([v.as_dict() for v in projects_for(user=member)])


def test_an_outsider_sees_no_project(outsider, private_bits):
    assert projects_for(user=outsider) == []


def test_a_cloud_view_lists_only_cloud_allowed_projects_and_no_private_field(owner, private_bits):
    views = projects_for(user=owner, cloud_only=True)
    assert names(views) == ["Garden shed rebuild", "PixelNet", "QubitML"]
    assert MARKER not in json.dumps([v.as_dict() for v in views])
    assert projects_named_for(user=owner, name="Tax return", cloud_only=True) == []
    assert MARKER not in overview_markdown(owner, cloud_only=True)
    assert "Tax return" not in overview_markdown(owner, cloud_only=True)


def test_the_overview_is_a_document_only_its_owner_finds(owner, member, private_bits):
    overview = Document.objects.get(source__owner=owner, path=OVERVIEW_PATH)
    assert overview.status == Document.Status.READY
    results = search(
        user=owner, query="project overview paused Garden shed rebuild", limit=10
    ).results
    assert any(r.document_id == overview.pk for r in results)
    assert all(r.cloud == "local-only" for r in results if r.document_id == overview.pk)
    member_results = search(
        user=member, query="project overview paused Garden shed rebuild", limit=10
    )
    assert all(r.document_id != overview.pk for r in member_results.results)
    assert not any(
        r.document_id == overview.pk
        for r in search(user=owner, query="project overview", limit=10, cloud_only=True).results
    )
    # Even when its collection is shared and cloud-allowed, the overview is not.
    overview.source.sharing, overview.source.cloud = "household", "allowed"
    overview.source.save()
    assert overview.in_private_dir
    for user, cloud_only in ((member, False), (owner, True)):
        found = search(
            user=user, query="project overview paused Garden shed", limit=10, cloud_only=cloud_only
        )
        assert all(r.document_id != overview.pk for r in found.results)


def test_the_projects_page_lists_filters_and_opens_a_timeline(client, owner, private_bits):
    client.force_login(owner)
    page = client.get("/projects/").content.decode()
    assert page.count('data-testid="project-row"') == 5
    paused = client.get("/projects/?status=paused").content.decode()
    assert "QubitML" in paused and "PixelNet" not in paused
    (qubit,) = projects_named_for(user=owner, name="QubitML")
    detail = client.get(f"/projects/{qubit.project.pk}/").content.decode()
    assert detail.count('data-testid="timeline-row"') == 2
    assert "changed" in detail and "too theoretical" in detail


def test_the_project_page_is_a_404_for_people_who_may_not_read_the_note(
    client, owner, member, outsider, private_bits
):
    (party,) = projects_named_for(user=owner, name="Surprise party")
    (garden,) = projects_named_for(user=owner, name="Garden shed")
    client.force_login(member)
    assert client.get(f"/projects/{party.project.pk}/").status_code == 404
    page = client.get(f"/projects/{garden.project.pk}/")
    assert page.status_code == 200 and MARKER not in page.content.decode()
    client.force_login(outsider)
    assert client.get(f"/projects/{garden.project.pk}/").status_code == 404
    assert 'data-testid="project-row"' not in client.get("/projects/").content.decode()


def test_the_pages_need_a_sign_in(client, private_bits):
    assert client.get("/projects/").status_code == 302


def test_projects_list_command_prints_json_as_the_person_sees_it(member, private_bits, capsys):
    call_command("projects", "list", "--user", member.username, "--json")
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["Garden shed rebuild", "PixelNet", "QubitML"]
    assert rows[0]["status"] == "paused" and rows[0]["reason"] is None
    call_command("projects", "list", "--user", member.username, "--status", "done")
    assert "PixelNet" in capsys.readouterr().out


def test_the_collection_page_marks_a_projects_folder(
    client, owner, vault, make_source, embedder, refresh
):
    vault.write("work/roadmap.md", "# Roadmap\n\n## Status: BLOCKED\n\n- waiting for the permit\n")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    refresh()
    assert projects_for(user=owner) == []
    client.force_login(owner)
    page = client.get("/library/collections/").content.decode()
    assert "Projects folders" in page
    client.post(
        f"/library/collections/{source.pk}/",
        {
            f"c{source.pk}-sharing": "owner",
            f"c{source.pk}-cloud": "local-only",
            f"c{source.pk}-private_dirs": "private",
            f"c{source.pk}-project_dirs": "work",
        },
    )
    source.refresh_from_db()
    assert source.project_dirs == ["work"]
    refresh()
    assert [(v.name, v.status) for v in projects_for(user=owner)] == [("Roadmap", "blocked")]
