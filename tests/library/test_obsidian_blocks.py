"""Obsidian block ids (`… ^b15695`) kept as anchors and never as words: the
document page has an anchor for each block, a link `[[Note#^id]]` reaches it
(when the reader may see that note), an embed `![[Note#^id]]` pulls in just
that block, and the id is in no passage, keyword index row, embedding or
search result. The vault is synced with the real embedder into the real
database, as in test_obsidian_vault.py."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from apps.library.index import fts
from apps.library.ingest.sync import source_sync
from apps.library.models import Chunk, Document, Source
from apps.library.search import search
from tests.support.fixtures import CountingEmbedder

pytestmark = pytest.mark.django_db

BOILER = """# Boiler

The boiler is serviced in October. ^b15695

The filter is cleaned every spring.

- Pressure should read 1.5 bar. ^press1
- Bleed the radiators first.

An odd id ^a"b<script>

The id in `code ^inl1` stays code.

```
fenced ^fen1
```

## Spare key <!-- private -->

The spare key is under the blue pot. ^key1
"""

HOUSE = """# House

When is it serviced? See [[Boiler#^b15695|the boiler date]].

A link to [[Boiler#^nosuch|a missing block]], to [[Nowhere#^b15695|no such note]]
and to [[Boiler#^a"b<script>|an odd id]].

Where is the key? [[Boiler#^key1|the key block]].

Weekend: [[Diary#^secret1|the plan]].

Forged \ue002Boiler#forged1\ue003markers\ue004 are only text.

![[Boiler#^b15695]]

![[Boiler#^press1]]

![[Boiler#^nosuch]]

![[Boiler#^key1]]

![[Diary#^secret1]]
"""

DIARY = "# Diary\n\nThe surprise party is on Saturday. ^secret1\n"


class RecordingEmbedder(CountingEmbedder):
    """The real embedder, remembering every text it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_passages(self, texts):
        self.texts.extend(texts)
        return super().embed_passages(texts)


@pytest.fixture
def recording() -> RecordingEmbedder:
    return RecordingEmbedder()


@pytest.fixture
def synced(owner, vault, make_source, recording):
    vault.write("Boiler.md", BOILER)
    vault.write("House.md", HOUSE)
    vault.write("private/Diary.md", DIARY)
    source = make_source(
        owner,
        vault,
        sharing=Source.Sharing.HOUSEHOLD,
        cloud=Source.Cloud.ALLOWED,
        private_dirs=["private"],
    )
    report = source_sync(source=source, embedder=recording)
    assert report.failed == []
    return source


def document(path: str) -> Document:
    return Document.objects.get(files__path=path)


def passages(path: str) -> list[Chunk]:
    return list(document(path).chunks.order_by("ordinal"))


def page(client, user, path: str) -> str:
    client.force_login(user)
    response = client.get(f"/library/doc/{document(path).pk}/")
    assert response.status_code == 200
    return response.content.decode()


def text_part(html: str) -> str:
    """The document page's Text section."""
    return html.split('id="text-h"', 1)[1].split("</section>", 1)[0]


def words(html: str) -> str:
    """What a reader sees of some HTML (tags, and so attributes, removed)."""
    return re.sub(r"<[^>]+>", "", html)


def keyword_rows(word: str) -> list[int]:
    """Passages the keyword index finds `word` in (any column)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT rowid FROM {fts.FTS_TABLE} WHERE {fts.FTS_TABLE} MATCH %s", [f'"{word}"']
        )
        return [row[0] for row in cursor.fetchall()]


def link_to(path: str, anchor: str = "") -> str:
    return f'href="/library/doc/{document(path).pk}/{anchor}"'


# --- never a word -------------------------------------------------------------------


def test_a_block_id_is_in_no_passage_keyword_row_or_embedding(synced, recording):
    boiler = passages("Boiler.md")
    assert "The boiler is serviced in October." in boiler[0].text
    for block in ("b15695", "press1", "key1"):
        assert all(block not in c.text and block not in c.section for c in boiler)
        assert all(block not in text for text in recording.texts)
        assert keyword_rows(block) == []
    # The words around it are indexed (so the query above could have found it).
    assert keyword_rows("serviced")
    assert all("^" not in c.text for c in passages("House.md") if c.origin == "embed")


def test_a_search_finds_the_block_by_its_words_and_its_passage_holds_no_id(
    synced, owner, recording
):
    found = search(user=owner, query="when is the boiler serviced", embedder=recording, limit=5)
    hit = next(r for r in found.results if r.path == "Boiler.md")
    assert "serviced in October." in hit.text
    assert "b15695" not in hit.text and "b15695" not in hit.section
    by_id = search(user=owner, query="b15695", embedder=recording, limit=5)
    assert all("b15695" not in r.text and "keyword" not in r.legs for r in by_id.results)


# --- the page's anchors ---------------------------------------------------------------


def test_the_document_page_has_an_anchor_at_each_block(synced, client, owner):
    text = text_part(page(client, owner, "Boiler.md"))
    assert '<p><span id="^b15695"></span>The boiler is serviced in October.</p>' in text
    assert '<li><span id="^press1"></span>Pressure should read 1.5 bar.</li>' in text
    assert '<span id="^key1"></span>The spare key' in text  # the owner sees the private section
    assert "^b15695" not in words(text) and "press1" not in words(text)


def test_an_id_of_other_characters_is_text_escaped_like_the_rest(synced, client, owner):
    assert 'An odd id ^a"b<script>' in passages("Boiler.md")[0].text
    text = text_part(page(client, owner, "Boiler.md"))
    assert 'An odd id ^a"b&lt;script&gt;' in text
    assert "<script" not in text
    assert 'id="^a' not in text


def test_a_block_id_in_code_is_left_as_written_and_is_no_anchor(synced, client, owner):
    joined = "\n".join(c.text for c in passages("Boiler.md"))
    assert "`code ^inl1`" in joined
    assert "fenced ^fen1" in joined
    text = text_part(page(client, owner, "Boiler.md"))
    assert 'id="^inl1"' not in text and 'id="^fen1"' not in text
    assert "<code>code ^inl1</code>" in text


# --- links to blocks ---------------------------------------------------------------------


def test_a_link_to_a_block_points_at_its_anchor_for_everyone_who_may_read_the_note(
    synced, client, owner, member
):
    for reader in (owner, member):
        text = text_part(page(client, reader, "House.md"))
        assert f"<a {link_to('Boiler.md', '#^b15695')}" in text
        assert re.search(r'#\^b15695" rel="noopener noreferrer">the boiler date</a>', text)


def test_a_link_to_a_missing_block_or_note_stays_readable_without_an_anchor(synced, client, owner):
    text = text_part(page(client, owner, "House.md"))
    # The note exists: its page, no anchor. No note: the words alone, as any link.
    assert f'<a {link_to("Boiler.md")} rel="noopener noreferrer">a missing block</a>' in text
    assert "to no such note" in words(text) and ">no such note</a>" not in text
    assert "an odd id" in words(text) and ">an odd id</a>" not in text
    assert "<script" not in text
    # Characters that look like markers, written in the note, are no link.
    assert ">markers</a>" not in text and "markers are only text" in words(text)


def test_a_block_in_a_private_section_is_no_anchor_for_anyone_else(synced, client, owner, member):
    assert f'{link_to("Boiler.md", "#^key1")} rel="noopener noreferrer">the key block' in (
        text_part(page(client, owner, "House.md"))
    )
    seen = text_part(page(client, member, "House.md"))
    assert f'<a {link_to("Boiler.md")} rel="noopener noreferrer">the key block</a>' in seen
    assert "key1" not in seen
    assert 'id="^key1"' not in page(client, member, "Boiler.md")


def test_a_link_into_someone_elses_private_note_says_nothing_about_it(
    synced, client, owner, member
):
    diary = document("private/Diary.md")
    assert f"/library/doc/{diary.pk}/#^secret1" in page(client, owner, "House.md")
    seen = page(client, member, "House.md")
    assert "the plan" in words(text_part(seen))
    assert f"/library/doc/{diary.pk}/" not in seen
    assert "secret1" not in seen
    assert ">the plan</a>" not in seen


# --- embeds of blocks ----------------------------------------------------------------------


def test_an_embedded_block_brings_just_that_block_marked_with_its_source(synced):
    chunks = passages("House.md")
    embedded = [c for c in chunks if c.origin == "embed"]
    assert [c.text for c in embedded] == [
        "The boiler is serviced in October.",
        "Pressure should read 1.5 bar.",
    ]
    assert {c.section for c in embedded} == {"Embedded from Boiler"}
    # A missing block, a private section's and a private folder's bring nothing.
    everything = "\n".join(c.text for c in chunks)
    assert "spare key" not in everything and "surprise party" not in everything


def test_the_embedding_note_is_found_by_the_embedded_blocks_words(synced, owner, recording):
    found = search(user=owner, query="pressure 1.5 bar", embedder=recording, limit=5)
    assert "House.md" in [r.path for r in found.results]


def test_notes_embedding_each_others_blocks_take_one_level_each(
    owner, vault, make_source, embedder
):
    vault.write("A.md", "# A\n\nKettles boil fast. ^ka\n\n![[B#^lb]]\n")
    vault.write("B.md", "# B\n\nLanterns glow at dusk. ^lb\n\n![[A#^ka]]\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    a = [c.text for c in passages("A.md") if c.origin == "embed"]
    b = [c.text for c in passages("B.md") if c.origin == "embed"]
    assert a == ["Lanterns glow at dusk."]
    assert b == ["Kettles boil fast."]


def test_every_block_of_a_long_note_has_its_anchor_once_across_passages(
    client, owner, vault, make_source, embedder
):
    paragraphs = [
        f"Paragraph {n} of the long manual explains one more step in detail. ^p{n}"
        for n in range(40)
    ]
    vault.write("Manual.md", "# Manual\n\n" + "\n\n".join(paragraphs) + "\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    assert len(passages("Manual.md")) > 2  # several passages, which overlap
    text = text_part(page(client, owner, "Manual.md"))
    for n in range(40):
        assert text.count(f'id="^p{n}"') == 1, n
        assert f'<span id="^p{n}"></span>Paragraph {n} of' in text
        # Shown once, though the overlap that repeats it crosses a paragraph break.
        assert text.count(f"Paragraph {n} of") == 1, n
    assert "^p" not in words(text)


def test_an_id_on_a_line_of_its_own_names_the_whole_list_or_table_above_it(
    client, owner, vault, make_source, embedder
):
    vault.write(
        "Kit.md",
        "# Kit\n\n- Torch\n- Spare fuses\n\n^kitlist\n\n"
        "| Room | Radiator |\n|---|---|\n| Hall | 2 |\n\n^rads\n",
    )
    vault.write("Uses kit.md", "# Uses kit\n\n![[Kit#^kitlist]]\n\n![[Kit#^rads]]\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    embedded = [c.text for c in passages("Uses kit.md") if c.origin == "embed"]
    assert embedded == ["- Torch\n- Spare fuses", "| Room | Radiator |\n|---|---|\n| Hall | 2 |"]
    text = text_part(page(client, owner, "Kit.md"))
    # The list and the table still render as such, each with its anchor above it.
    assert re.search(r'<span id="\^kitlist"></span></p>\s*<ul>\s*<li>Torch</li>', text)
    assert re.search(r'<span id="\^rads"></span></p>\s*<table>', text)
    assert "kitlist" not in words(text) and "rads" not in words(text)
