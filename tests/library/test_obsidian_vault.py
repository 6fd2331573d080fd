"""An Obsidian vault read as Obsidian means it (tests/library/obsidian_vault/):
aliases and descriptions are searched like the title, code stays code,
embedded notes are read where they are embedded, callouts read as their
titles, block ids and links to headings leave no litter, and only real
`#tags` are tags. The vault is synced with the real embedder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from apps.library.index import fts
from apps.library.ingest.embeds import MAX_EMBED_CHARS
from apps.library.ingest.parsing.chunking import pack_text
from apps.library.ingest.parsing.markdown import parse_markdown
from apps.library.ingest.sync import source_sync
from apps.library.models import Chunk, Document, Source
from apps.library.search import search

pytestmark = pytest.mark.django_db

VAULT = Path(__file__).parent / "obsidian_vault"


def note(rel: str):
    return parse_markdown((VAULT / rel).read_text(), fallback_title=Path(rel).stem)


def text_of(parsed) -> str:
    return "\n".join(chunk.text for chunk in parsed.chunks)


@pytest.fixture
def synced(owner, vault, make_source, embedder):
    shutil.copytree(VAULT, vault.root, dirs_exist_ok=True)
    source = make_source(
        owner,
        vault,
        sharing=Source.Sharing.HOUSEHOLD,
        cloud=Source.Cloud.ALLOWED,
        private_dirs=["private"],
    )
    report = source_sync(source=source, embedder=embedder)
    assert report.failed == []
    return source


def document(path: str) -> Document:
    return Document.objects.get(files__path=path)


def passages(path: str) -> list[Chunk]:
    return list(document(path).chunks.order_by("ordinal"))


# --- frontmatter: aliases and description ------------------------------------------


def test_aliases_as_a_list_or_one_string_are_kept_without_a_warning():
    appearance, sync = note("notes/Appearance.md"), note("notes/Sync.md")
    assert appearance.warnings == [] and sync.warnings == []
    assert appearance.record.extra["x_aliases"] == "Colour schemes; Look and feel"
    assert sync.record.extra["x_aliases"] == "Remote sync"
    assert appearance.record.extra["x_description"].startswith("Change how your notes look")


def test_a_search_for_an_alias_or_the_description_finds_the_note_by_its_title_column(
    synced, owner, embedder
):
    fields = fts.document_fields(document("notes/Appearance.md"))
    assert "Look and feel" in fields.title and "CSS snippet" in fields.title
    found = search(user=owner, query="colour schemes", embedder=embedder, limit=3)
    assert found.results[0].path == "notes/Appearance.md"
    assert "keyword" in found.results[0].legs


def test_the_embed_header_carries_the_aliases_and_description(synced):
    header = passages("notes/Appearance.md")[0].header
    assert "Colour schemes; Look and feel" in header
    assert "CSS snippet" in header


# --- code ----------------------------------------------------------------------


def test_inline_code_is_left_exactly_as_written():
    text = text_of(note("notes/Appearance.md"))
    assert "`[[Three laws of motion]]`" in text
    # The lone `[[` stays code and does not pair with the brackets further on.
    assert "A lone `[[` opens" in text
    assert "closing brackets ]] of nothing" in text
    assert "`#define`" in text


def test_fenced_code_keeps_its_links_and_hashes():
    text = text_of(note("notes/Appearance.md"))
    assert "/* #not-a-tag [[not a link]] */" in text


# --- tags ------------------------------------------------------------------------


def test_only_real_tags_are_tags_not_heading_links_colours_or_code():
    assert note("notes/Appearance.md").record.tags == ["appearance", "styling"]


def test_a_link_to_a_heading_of_the_same_note_reads_as_the_heading_and_is_no_tag():
    parsed = note("notes/Appearance.md")
    assert "see Snippets." in text_of(parsed)
    assert "snippets" not in parsed.record.tags


# --- callouts and block ids --------------------------------------------------------


def test_a_callout_reads_as_its_kind_and_title_above_its_content():
    text = text_of(note("notes/Appearance.md"))
    assert "**Note**\nThemes load after snippets." in text  # "Note" once, not "Note: Note"
    assert "**Warning — Careful with themes**\nA theme can hide the ribbon." in text
    assert "[!" not in text and "\n> " not in text


def test_nested_and_hyphenated_callouts_read_as_words():
    text = text_of(note("notes/Appearance.md"))
    assert "**Tip — Nested tip**\nHold Shift to preview." in text
    assert "**My custom — Folded custom callout**" in text


def test_block_ids_are_dropped_from_the_text_and_links_to_blocks_read_as_their_note():
    assert "^a1b2c3" not in text_of(note("notes/Appearance.md"))
    sync = text_of(note("notes/Sync.md"))
    assert "for twelve months." in sync and "^hist01" not in sync
    assert "the history block" in text_of(note("Home.md"))


# --- embeds ------------------------------------------------------------------------


def test_an_embedded_heading_is_a_passage_of_the_embedding_note_marked_with_its_source(synced):
    chunks = passages("Home.md")
    sections = [c.section for c in chunks]
    assert "Embedded from Sync › Sync history" in sections
    embedded = chunks[sections.index("Embedded from Sync › Sync history")]
    assert "twelve months" in embedded.text
    assert embedded.origin == "embed"
    # Only that heading: the note's other sections stay where they are.
    assert "Choose which file types" not in embedded.text
    # It follows the passage that embeds it, as the reader sees it.
    marker = next(i for i, c in enumerate(chunks) if "[embedded: Sync › Sync history]" in c.text)
    assert sections.index("Embedded from Sync › Sync history") == marker + 1
    assert sections.index("Embedded from Appearance") > marker + 1


def test_a_whole_note_embed_brings_its_text_and_an_image_embed_stays_a_link(synced):
    chunks = passages("Home.md")
    embedded = "\n".join(c.text for c in chunks if c.section == "Embedded from Appearance")
    assert "Pick a theme under Settings." in embedded
    assert "[embedded: screenshot.png]" in "\n".join(c.text for c in chunks)


def test_the_embedding_note_is_found_by_the_embedded_words(synced, owner, embedder):
    found = search(user=owner, query="version history twelve months", embedder=embedder, limit=5)
    assert "Home.md" in [r.path for r in found.results]


def test_notes_that_embed_each_other_take_one_level_each(synced):
    a = passages("notes/Loop A.md")
    embedded = [c for c in a if c.origin == "embed"]
    assert [c.section for c in embedded] == ["Embedded from Loop B"]
    assert "kettles" in embedded[0].text and "lanterns" not in embedded[0].text
    b = passages("notes/Loop B.md")
    assert [c.section for c in b if c.origin == "embed"] == ["Embedded from Loop A"]


def test_a_shared_note_never_pulls_in_a_note_from_a_private_folder(synced):
    chunks = passages("Shared page.md")
    assert all("surprise party" not in c.text for c in chunks)
    assert all(c.origin != "embed" for c in chunks)


def test_an_embed_is_cut_at_its_size_limit(owner, vault, make_source, embedder):
    long = " ".join(f"Sentence {n} about the long reference note." for n in range(600))
    vault.write("Reference.md", f"# Reference\n\n{long}\n")
    vault.write("Uses it.md", "# Uses it\n\nBelow.\n\n![[Reference]]\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    embedded = [c for c in passages("Uses it.md") if c.origin == "embed"]
    assert embedded
    assert sum(len(c.text) for c in embedded) <= MAX_EMBED_CHARS + 200 * len(embedded)
    assert "Sentence 599" not in "".join(c.text for c in embedded)


# --- the document page ---------------------------------------------------------------


def test_the_document_page_shows_the_overlap_between_passages_once(
    client, owner, vault, make_source, embedder
):
    sentences = [f"Step {n} of the long procedure is written here." for n in range(80)]
    body = "\n\n".join(" ".join(sentences[i : i + 4]) for i in range(0, 80, 4))
    assert len(pack_text(body)) > 2  # several passages that overlap
    vault.write("Procedure.md", f"# Procedure\n\n{body}\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    client.force_login(owner)
    page = client.get(f"/library/doc/{document('Procedure.md').pk}/").content.decode()
    for sentence in sentences:
        assert page.count(sentence) == 1, sentence
    assert "…" not in page.split('class="chunk"', 1)[1]
