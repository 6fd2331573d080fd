"""Lookup mode shows one passage per version family, and when the latest
version carries the very passage an older one ranked first with, the latest's
copy stands for the family: a person who clicks through lands on the current
note, labelled latest."""

from __future__ import annotations

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.search import search

PASSAGE = "Call Priya at Heatwise on 0161 555 0199 about the boiler."
QUERY = "Heatwise boiler contacts phone number"


@pytest.fixture
def boiler_notes(owner, vault, make_source, embedder):
    # The older version's heading matches the question better, so its copy of
    # the shared passage ranks above the latest's in both legs.
    vault.write("home/boiler_2025-03.md", f"# Boiler contacts Heatwise\n\n{PASSAGE}\n")
    vault.write("home/boiler_2026-10.md", f"# Numbers\n\n{PASSAGE}\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)


def test_the_older_copy_ranks_first_when_versions_are_side_by_side(owner, boiler_notes):
    # History mode shows every version: the premise of the test below holds.
    results = search(user=owner, query=QUERY, mode="history", limit=5).results
    assert [r.path for r in results] == ["home/boiler_2025-03.md", "home/boiler_2026-10.md"]
    ranked = sorted(results, key=lambda r: -r.score)
    assert ranked[0].path == "home/boiler_2025-03.md"


def test_lookup_shows_the_latest_copy_of_the_same_passage(owner, boiler_notes):
    results = search(user=owner, query=QUERY, mode="lookup", limit=5).results
    assert len(results) == 1  # one per family
    assert results[0].path == "home/boiler_2026-10.md"
    assert results[0].is_latest
    assert results[0].text == PASSAGE


def test_lookup_keeps_an_older_passage_the_latest_does_not_carry(
    owner, vault, make_source, embedder
):
    vault.write("home/boiler_2025-03.md", f"# Boiler contacts Heatwise\n\n{PASSAGE}\n")
    vault.write("home/boiler_2026-10.md", "# Numbers\n\nThe boiler was replaced by a heat pump.\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    results = search(user=owner, query=QUERY, mode="lookup", limit=5).results
    # The family's latest version joins above its older ones (issue 10's family
    # expansion), and the older passage it no longer carries is still shown.
    assert [r.path for r in results] == ["home/boiler_2026-10.md", "home/boiler_2025-03.md"]
    assert not results[1].is_latest
    assert results[1].text == PASSAGE
