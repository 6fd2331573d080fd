"""The "about" ranking of documents first (apps.library.search.fusion) is
made only of passages the asking person may read: a section its note marks
private says nothing about the note to anyone else, not even by moving it
up a list."""

from __future__ import annotations

import pytest

from apps.library.index.tables import index_state
from apps.library.ingest.sync import source_sync
from apps.library.models import Document, Source
from apps.library.search.fusion import _about
from apps.library.selectors import visible_pools

pytestmark = pytest.mark.django_db

GARDEN = """\
# Garden

## Roses
Prune the roses in late winter and feed them with compost in spring.

## Herbs
Basil and thyme grow best on the sunny south wall, watered every other day.

## Boiler pressure <!-- private -->
The boiler pressure gauge reads below one bar; the pressure relief valve drips.

## Boiler service <!-- private -->
The boiler's expansion vessel needs recharging and the pressure valve replacing.

## Boiler costs <!-- private -->
The boiler repair with a new pressure valve was quoted at four hundred euros.
"""

HOUSE = """\
# House

## Heating
The boiler is serviced once a year; check its pressure gauge before winter.

## Paint
The hallway is painted in a pale grey, the kitchen in a warm white.
"""


@pytest.fixture
def notes(owner, vault, make_source, embedder):
    vault.write("garden.md", GARDEN)
    vault.write("house.md", HOUSE)
    source = make_source(owner, vault, sharing=Source.Sharing.HOUSEHOLD, cloud=Source.Cloud.ALLOWED)
    assert source_sync(source=source, embedder=embedder).failed == []
    garden = Document.objects.get(title="Garden")
    house = Document.objects.get(title="House")
    return garden.pk, house.pk


def test_a_private_section_moves_its_note_only_for_its_owner(owner, member, notes, embedder):
    garden, house = notes
    question = embedder.embed_query("the boiler pressure valve")
    generation = index_state().generation
    # The owner reads all of the garden note, which is mostly about the boiler.
    assert _about([garden, house], question, visible_pools(owner), generation) == [garden, house]
    # Anyone else reads roses and herbs there: the house note is the one about it.
    assert _about([garden, house], question, visible_pools(member), generation) == [house, garden]
