"""Private sections: a heading marked `<!-- private -->`, or named in the note's
`private_sections:` frontmatter, makes its passages owner-only and local-only
inside an otherwise shared note, in both search legs, the history expansion,
the document page, the original file and the chat tool that reads documents."""

import pytest

from apps.library.index.embeddings import get_embedder
from apps.library.index.tables import index_state
from apps.library.ingest.parsing.markdown import parse_markdown
from apps.library.ingest.sync import source_sync
from apps.library.models import Chunk, Document, Source
from apps.library.search import search
from apps.library.selectors import visible_pools
from apps.library.services.sources import source_update
from apps.library.versions.search import (
    Candidate,
    expand_families,
    expand_history,
    family_view,
    mark_current,
)
from tests.library.test_privacy import both_legs

MARKER = "Marker pelican-9931 is the blood pressure reading from the clinic."
ALSO = "Marker heron-5512 sits in a section the frontmatter names."

NOTE = f"""# Weekly handover

## Garden
The quince tree needs pruning before the frost.

## Health <!-- private -->
{MARKER}

### Medication
Marker ibis-2270: the dose under the private heading.

## Plans
Repaint the shed in the spring.
"""

FRONT_NOTE = f"""---
private_sections: [Money matters]
tags: [handover]
---
# Budget handover

## Groceries
Oat milk and quince jam for the week.

## Money matters
{ALSO} #salary-review

## Trips
The lake trip is in June.
"""


def test_the_parser_marks_the_section_and_its_subsections_private():
    parsed = parse_markdown(NOTE, fallback_title="handover")
    by_section = {c.section: c.private for c in parsed.chunks}
    assert by_section == {
        "Garden": False,
        "Health": True,
        "Health › Medication": True,
        "Plans": False,
    }


def test_frontmatter_names_a_private_section_and_its_tags_stay_inside_it():
    parsed = parse_markdown(FRONT_NOTE, fallback_title="budget")
    private = [c.section for c in parsed.chunks if c.private]
    assert private == ["Money matters"]
    assert "salary-review" not in parsed.record.tags
    assert "handover" in parsed.record.tags
    assert not any(k.startswith("x_private") for k in parsed.record.extra)


@pytest.fixture
def shared_note(owner, vault, make_source, embedder):
    vault.write("handover.md", NOTE)
    vault.write("budget.md", FRONT_NOTE)
    source = make_source(owner, vault, sharing=Source.Sharing.HOUSEHOLD, cloud=Source.Cloud.ALLOWED)
    source_sync(source=source, embedder=embedder)
    return source


def _texts(user, query, **options):
    return " ".join(r.text for r in search(user=user, query=query, limit=20, **options).results)


def test_the_owner_finds_their_private_section(owner, shared_note):
    results = search(user=owner, query="pelican-9931 blood pressure", limit=5).results
    hit = next(r for r in results if "pelican-9931" in r.text)
    assert hit.private and hit.cloud == "local-only"


@pytest.mark.parametrize("query", [MARKER, ALSO, "ibis-2270 dose medication"])
def test_a_household_member_never_gets_a_private_section_from_either_leg(
    member, shared_note, query
):
    keyword, semantic = both_legs(member, query)
    assert keyword + semantic  # the shared sections of the same notes are there
    joined = " ".join(keyword + semantic) + _texts(member, query)
    for marker in ("pelican-9931", "ibis-2270", "heron-5512"):
        assert marker not in joined
    assert "quince" in _texts(member, "quince tree pruning frost")


def test_the_history_expansion_does_not_pull_a_private_section_in(member, vault, shared_note):
    vault.write("handover_v2.md", NOTE.replace("Repaint the shed", "Rebuild the shed"))
    source_sync(source=shared_note, embedder=None)
    newer = Chunk.objects.select_related("document").get(
        document__path="handover_v2.md", section="Plans"
    )
    older = Document.objects.get(path="handover.md")
    assert newer.document.family == older.family  # one family, two versions
    vector = get_embedder().embed_query(MARKER)
    pools = visible_pools(member)
    expanded = expand_history(
        [Candidate(newer, 0.0, ["keyword"])], {}, vector, pools, index_state().generation, 5
    )
    pulled = [c.chunk for c in expanded if c.legs == ["version"]]
    assert [c.document_id for c in pulled] == [older.pk]  # the older version came in…
    assert not any(c.private for c in pulled)  # …by a shared passage, never the private one
    for mode in ("history", "lookup", "present"):
        assert "pelican" not in _texts(member, MARKER, mode=mode)


def test_the_family_expansion_does_not_pull_a_newer_private_section_in(member, vault, shared_note):
    """An older version scores; its newer version joins the ranking by its
    passage closest to the question, which is the private section's: for
    anyone but the owner it must be a shared passage instead."""
    vault.write("handover_v2.md", NOTE.replace("Repaint the shed", "Rebuild the shed"))
    source_sync(source=shared_note, embedder=None)
    older = Chunk.objects.select_related("document__source").get(
        document__path="handover.md", section="Garden"
    )
    pools = visible_pools(member)
    candidates = [Candidate(older, 0.5, ["keyword"])]
    facts = family_view([older.document], pools)
    mark_current(candidates, facts)
    vector = get_embedder().embed_query(MARKER)
    expanded = expand_families(candidates, facts, vector, pools, index_state().generation)
    pulled = [c.chunk for c in expanded if c.legs == ["version"]]
    assert [c.document.path for c in pulled] == ["handover_v2.md"]  # the newer version came in…
    assert not any(c.private for c in pulled)  # …by a shared passage, never the private one
    for mode in ("lookup", "present"):
        assert "pelican" not in _texts(member, "quince pruning " + MARKER, mode=mode)


def test_a_cloud_search_never_returns_the_owners_private_section(owner, shared_note):
    for query in (MARKER, ALSO):
        results = search(user=owner, query=query, limit=20, cloud_only=True).results
        assert results and all(r.cloud == "allowed" for r in results)
        assert not any("pelican" in r.text or "heron" in r.text for r in results)
    keyword, semantic = both_legs(owner, MARKER, cloud_only=True)
    assert not any("pelican" in t for t in keyword + semantic)


def test_the_document_page_hides_private_sections_from_others(client, owner, member, shared_note):
    document = Document.objects.get(path="handover.md")
    client.force_login(member)
    page = client.get(f"/library/doc/{document.pk}/").content.decode()
    assert "quince tree" in page and "pelican" not in page and "ibis" not in page
    client.force_login(owner)
    page = client.get(f"/library/doc/{document.pk}/").content.decode()
    assert "pelican-9931" in page and "private section" in page


def test_only_the_owner_downloads_the_original_of_a_note_with_private_sections(
    client, owner, member, shared_note
):
    document = Document.objects.get(path="handover.md")
    client.force_login(member)
    assert client.get(f"/library/doc/{document.pk}/original/").status_code == 404
    assert (
        'data-testid="download"' not in client.get(f"/library/doc/{document.pk}/").content.decode()
    )
    client.force_login(owner)
    assert 'data-testid="download"' in client.get(f"/library/doc/{document.pk}/").content.decode()
    response = client.get(f"/library/doc/{document.pk}/original/")
    assert response.status_code == 200
    assert b"pelican-9931" in b"".join(response.streaming_content)


def test_removing_the_marker_makes_the_section_shared_again(member, vault, shared_note):
    vault.write("handover.md", NOTE.replace(" <!-- private -->", ""))
    source_sync(source=shared_note, embedder=None)
    assert not Chunk.objects.filter(document__path="handover.md", private=True).exists()
    assert "pelican-9931" in _texts(member, MARKER)


def test_a_private_section_stays_private_when_its_note_leaves_a_private_folder(
    member, vault, shared_note
):
    vault.write("private/moved.md", NOTE.replace("pelican-9931", "pelican-7777"))
    source_sync(source=shared_note, embedder=None)
    before = search(user=member, query="quince tree pruning frost pelican-7777", limit=20).results
    assert "private/moved.md" not in {r.path for r in before}
    source_update(
        source=shared_note,
        sharing=shared_note.sharing,
        cloud=shared_note.cloud,
        private_dirs=[],  # the folder is no longer private: its notes are re-filed
    )
    found = search(user=member, query="pelican-7777 blood pressure clinic quince", limit=20).results
    paths = {r.path for r in found}
    assert "private/moved.md" in paths  # the shared sections are now shared…
    assert not any("pelican-7777" in r.text for r in found)  # …the private one is not
    keyword, semantic = both_legs(member, "pelican-7777 blood pressure reading clinic")
    assert not any("pelican-7777" in t for t in keyword + semantic)
