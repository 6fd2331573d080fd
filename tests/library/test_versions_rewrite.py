"""Versions that survive a rewrite, and families that need a sign of identity:
a note moved into a subfolder and largely rewritten between two dated
versions is still one document, and its newer version answers "at the
moment" questions; common names never join on name alone; the same name in
two formats is one document only when the content or the dates say so."""

from __future__ import annotations

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.models import Document, DocumentFile
from apps.library.search import search

pytestmark = pytest.mark.django_db

MARCH = """# Plan — March 2026

## Money

We are saving for the kitchen: new worktops and a sink. The fence can wait.

## Garden

Sow the beans in April and keep the lawn short.
"""

SEPTEMBER = """# Plan — September 2026

## House

The kitchen is finished. Next is the roof, which leaks over the landing,
and the fence along the lane before the winter storms.

## Money

Put aside 150 a month for the roof.
"""


def doc(source, path: str) -> Document:
    return DocumentFile.objects.get(source=source, path=path).document


def synced(owner, vault, make_source, embedder):
    source = make_source(owner, vault)
    report = source_sync(source=source, embedder=embedder)
    assert report.failed == []
    return source


def test_a_moved_and_rewritten_note_with_dated_headings_joins_its_family(
    owner, vault, make_source, embedder
):
    vault.write("plan.md", MARCH)
    vault.write("home/plan.md", SEPTEMBER)
    source = synced(owner, vault, make_source, embedder)
    old, new = doc(source, "plan.md"), doc(source, "home/plan.md")
    assert old.family == new.family
    assert new.is_latest and not old.is_latest


def test_the_rewritten_version_ranks_first_for_an_at_the_moment_question(
    owner, vault, make_source, embedder
):
    vault.write("plan.md", MARCH)
    vault.write("home/plan.md", SEPTEMBER)
    synced(owner, vault, make_source, embedder)
    found = search(
        user=owner, query="what is the plan for the fence at the moment", embedder=embedder
    )
    assert found.results[0].path == "home/plan.md"
    assert found.results[0].is_latest
    paths = [r.path for r in found.results]
    assert "plan.md" not in paths or paths.index("plan.md") > paths.index("home/plan.md")


def test_date_keys_and_dated_file_names_count_as_explicit_dates(
    owner, vault, make_source, embedder
):
    vault.write("budget 2026-03.md", "# Budget\n\nFood 400, rent 900, the kitchen fund 200.\n")
    vault.write(
        "money/budget 2026-09.md",
        "---\ndate: 2026-09-01\n---\n# Budget\n\nRent 950 now; food 420; the kitchen is paid.\n",
    )
    source = synced(owner, vault, make_source, embedder)
    old, new = doc(source, "budget 2026-03.md"), doc(source, "money/budget 2026-09.md")
    assert old.family == new.family and new.is_latest


def test_undated_notes_with_one_name_and_different_text_stay_apart(
    owner, vault, make_source, embedder
):
    vault.write("plan.md", MARCH.replace(" — March 2026", ""))
    vault.write("home/plan.md", SEPTEMBER.replace(" — September 2026", ""))
    source = synced(owner, vault, make_source, embedder)
    assert doc(source, "plan.md").family != doc(source, "home/plan.md").family


def test_common_names_never_join_on_name_and_dates_alone(owner, vault, make_source, embedder):
    vault.write("index.md", "# Index — March 2026\n\nThe kitchen, the fence and the garden.\n")
    vault.write(
        "home/index.md", "# Index — September 2026\n\nThe kitchen, the roof and the fence.\n"
    )
    vault.write("todo.md", "# Todo — March 2026\n\nFix the fence. Paint the kitchen.\n")
    vault.write("work/todo.md", "# Todo — September 2026\n\nFix the fence. Book the kitchen.\n")
    source = synced(owner, vault, make_source, embedder)
    assert doc(source, "index.md").family != doc(source, "home/index.md").family
    assert doc(source, "todo.md").family != doc(source, "work/todo.md").family
    assert doc(source, "index.md").is_latest and doc(source, "home/index.md").is_latest


def test_the_same_name_in_two_formats_with_unrelated_content_is_two_documents(
    owner, vault, make_source, embedder
):
    vault.write("images.md", "# Images\n\nHoliday photos from Lisbon: the tram and the castle.\n")
    vault.write("images.txt", "Quarterly sales figures by region, exported from the till.\n")
    source = synced(owner, vault, make_source, embedder)
    first, second = doc(source, "images.md"), doc(source, "images.txt")
    assert first.family != second.family
    assert first.is_latest and second.is_latest


def test_the_same_name_in_two_formats_with_the_same_content_stays_one_family(
    owner, vault, make_source, embedder
):
    text = "Boiler service booked with Hearth and Sons; the engineer checks the flue and pressure."
    vault.write("boiler.md", f"# Boiler\n\n{text}\n")
    vault.write("boiler.txt", f"{text} Receipt kept in the drawer.\n")
    source = synced(owner, vault, make_source, embedder)
    assert doc(source, "boiler.md").family == doc(source, "boiler.txt").family


def test_the_same_file_in_two_collections_takes_one_result_slot_listing_both_places(
    owner, make_vault, make_source, embedder
):
    text = "# Warranty\n\nThe dishwasher warranty runs until March 2028; keep the receipt.\n"
    first, second = make_vault("home"), make_vault("archive")
    first.write("warranty.md", text)
    second.write("old/warranty.md", text)
    for vault, name in ((first, "Home"), (second, "Archive")):
        source_sync(source=make_source(owner, vault, name=name), embedder=embedder)
    found = search(user=owner, query="dishwasher warranty", embedder=embedder, limit=5)
    hits = [r for r in found.results if "dishwasher" in r.text]
    assert len(hits) == 1
    places = {f"{hits[0].source}/{hits[0].path}", *hits[0].duplicate_paths}
    assert places == {"Home/warranty.md", "Archive/old/warranty.md"}
