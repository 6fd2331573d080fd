"""Small vocabulary gaps the keyword leg bridges: a name or rare word typed
wrong, and an acronym a note defines once and then uses alone."""

from __future__ import annotations

import pytest

from apps.library.ingest.parsing.markdown import parse_markdown
from apps.library.ingest.sync import source_sync
from apps.library.search import search

pytestmark = pytest.mark.django_db

TRIP = "# Trip\n\n## Flights\n\nWe fly to Lisbon on the 3rd and stay near the river in Alfama.\n"
GARDEN = "# Garden\n\nThe roses need feeding every fortnight from May.\n"
CHORES = "# Chores\n\nBins go out on Tuesday; the recurring ones are on the fridge.\n"


def synced(owner, vault, make_source, embedder, notes: dict[str, str]):
    for path, text in notes.items():
        vault.write(path, text)
    source_sync(source=make_source(owner, vault), embedder=embedder)


def keyword_paths(found) -> list[str]:
    return [r.path for r in found.results if "keyword" in r.legs]


def test_a_misspelt_name_still_finds_its_note_by_keyword(owner, vault, make_source, embedder):
    synced(owner, vault, make_source, embedder, {"trip.md": TRIP, "garden.md": GARDEN})
    found = search(user=owner, query="when do we fly to Lisbin", embedder=embedder)
    assert keyword_paths(found)[:1] == ["trip.md"]


def test_a_misspelt_rare_word_with_an_ending_still_matches(owner, vault, make_source, embedder):
    synced(owner, vault, make_source, embedder, {"chores.md": CHORES, "garden.md": GARDEN})
    found = search(user=owner, query="reccuring chores list", embedder=embedder)
    assert "chores.md" in keyword_paths(found)


def test_a_word_the_index_holds_is_taken_as_written(owner, vault, make_source, embedder):
    surname = "# Post\n\nA parcel for Mr Lisbin arrived next door.\n"
    synced(owner, vault, make_source, embedder, {"trip.md": TRIP, "post.md": surname})
    found = search(user=owner, query="Lisbin", embedder=embedder)
    assert keyword_paths(found) == ["post.md"]


def test_an_acronym_a_note_defines_is_known_by_its_long_form(owner, vault, make_source, embedder):
    epq = (
        "# School\n\nThis year I am doing an Extended Project Qualification (EPQ).\n\n"
        "## Deadlines\n\nThe EPQ draft goes to Mrs Hale on 14 March; the final on 2 May.\n"
    )
    other = "# Projects\n\nThe shed project is extended to June; the deadline moved.\n"
    parsed = parse_markdown(epq, fallback_title="school")
    assert parsed.record.extra["x_acronyms"] == "EPQ: Extended Project Qualification"
    synced(owner, vault, make_source, embedder, {"school.md": epq, "projects.md": other})
    found = search(user=owner, query="when is my extended project due", embedder=embedder)
    # The passage that only says "EPQ" is found by keyword, through the definition.
    deadline = [r for r in found.results if "14 March" in r.text]
    assert deadline and "keyword" in deadline[0].legs
    paths = [r.path for r in found.results]
    assert paths.index("school.md") < paths.index("projects.md")
