"""One search for a cloud model's turn: `search(cloud_only=True,
with_everything=True)` scans each leg once over everything the person may
read and returns two views of it. Each view must be exactly what its own
search returns: the answer what a cloud-only search returns (local-only
passages ranked above cloud-allowed ones must not push those out of a leg),
and `everything` what a search over all the person may read returns (the
hold-back rule reads it)."""

from __future__ import annotations

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.search import Filters, legs, search

pytestmark = pytest.mark.django_db

# More local-only matches than a leg keeps (LEG_DEPTH 50), each naming the
# question's words more often than the cloud-allowed notes do: a leg cut to
# its best 50 over everything would hold no cloud-allowed passage at all.
LOCAL_NOTES = 60
CLOUD_NOTES = 12


@pytest.fixture
def crowded(owner, make_vault, make_source, embedder):
    local = make_vault("local")
    for i in range(LOCAL_NOTES):
        local.write(
            f"boiler/log-{i:02}.md",
            f"---\ntags: [heating]\n---\n# Boiler log {i}\n\n"
            f"Boiler pressure {i} bar; boiler service and boiler valve checked, boiler ok.\n",
        )
    local.write(
        "boiler/plan_2026-03.md", "# Boiler plan\n\nService the boiler with Tomasz in March.\n"
    )
    source_sync(source=make_source(owner, local, name="local"), embedder=embedder)
    shared = make_vault("shared")
    for i in range(CLOUD_NOTES):
        shared.write(
            f"house/note-{i:02}.md",
            f"---\ntags: [heating]\n---\n# House note {i}\n\nThe boiler was looked at, note {i}.\n",
        )
    shared.write(
        "house/boiler_2026-10.md", "# Boiler plan\n\nPriya services the boiler in October.\n"
    )
    shared.write("private/boiler-secret.md", "# Secret\n\nThe boiler key is under the mat.\n")
    source_sync(
        source=make_source(owner, shared, name="shared", cloud="allowed"), embedder=embedder
    )


def shape(response) -> list[tuple]:
    return [(r.chunk_id, r.rank, r.is_latest, r.relevant, r.legs) for r in response.results]


CASES = [
    dict(query="boiler service valve pressure"),
    dict(query="who services the boiler", mode="present"),
    dict(query="boiler plan over time", mode="history"),
    dict(query="boiler", latest_only=True),
    dict(query="boiler valve", filters=Filters(tags=["heating"])),  # the exact KNN per cell
    dict(query="qwxzv flurbo"),  # nothing relevant: the semantic leg's neighbours only
]


@pytest.fixture(params=["as shipped", "tight legs"])
def depths(request, monkeypatch):
    """The legs as shipped, and cut so small that this vault overflows each
    cut (the KNN's rescored set too), the way a large library does."""
    if request.param == "tight legs":
        monkeypatch.setattr(legs, "LEG_DEPTH", 8)
        monkeypatch.setattr(legs, "RESCORE_CANDIDATES", 12)


@pytest.mark.parametrize("case", CASES, ids=[c["query"] for c in CASES])
def test_each_view_is_what_its_own_search_returns(owner, crowded, depths, case):
    both = search(user=owner, limit=10, cloud_only=True, with_everything=True, **case)
    cloud = search(user=owner, limit=10, cloud_only=True, **case)
    assert shape(both) == shape(cloud)
    assert all(r.cloud == "allowed" and not r.private for r in both.results)
    everything_case = {**case, "latest_only": False}
    everything = search(user=owner, limit=10, reranker=None, **everything_case)
    assert shape(both.everything) == shape(everything)


def test_the_answer_keeps_cloud_passages_that_rank_below_local_only_ones(owner, crowded):
    both = search(
        user=owner,
        query="boiler service valve pressure",
        limit=10,
        cloud_only=True,
        with_everything=True,
    )
    # Everything the person may read is led by the local-only logs …
    assert both.everything.results[0].cloud == "local-only"
    # … and the answer still has its cloud-allowed notes, the October plan among them.
    assert "house/boiler_2026-10.md" in {r.path for r in both.results}
    assert len(both.results) == 10


def test_without_cloud_passages_the_answer_is_empty_and_everything_is_not(
    owner, make_vault, make_source, embedder
):
    local = make_vault("local")
    local.write("tax.md", "# Tax\n\nThe accountant is Ms Okafor, appointment in March.\n")
    source_sync(source=make_source(owner, local, name="local"), embedder=embedder)
    both = search(user=owner, query="accountant appointment", cloud_only=True, with_everything=True)
    assert both.results == []
    assert [r.path for r in both.everything.relevant] == ["tax.md"]


def test_a_plain_search_has_no_everything_view(owner, crowded):
    assert search(user=owner, query="boiler").everything is None
    assert search(user=owner, query="boiler", with_everything=True).everything is None
