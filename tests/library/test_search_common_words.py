"""search() in a large library: very common words, and the legs run side by side.

A large library is simulated by lowering the share of chunks that makes a word
common (the rules are the same at 100,000 chunks, bench/search_latency.py)."""

import pytest
from django.db import transaction

from apps.library.ingest.sync import source_sync
from apps.library.search import query, search


@pytest.fixture
def common_words(monkeypatch):
    """Every word in more than 2 of the library's chunks counts as common."""
    monkeypatch.setattr(query, "COMMON_TERM_FLOOR", 2)
    monkeypatch.setattr(query, "COMMON_TERM_SHARE", 0.0)
    # Counts from other tests' libraries must not decide this one's.
    monkeypatch.setattr(query, "_chunk_count", (0.0, 0))
    monkeypatch.setattr(query, "_term_counts", {})


def _write(vault, words_per_note: dict[str, str]) -> None:
    for name, body in words_per_note.items():
        vault.write(f"notes/{name}.md", f"# {name.title()}\n\n{body}\n")


def test_a_question_of_common_words_only_matches_its_rarest_word(
    owner, vault, make_source, embedder, common_words
):
    # "garden" in 6 notes, "shed" in 5, "padlock" in 3: all common here.
    _write(
        vault,
        {
            f"note{n}": " ".join(
                word for word, count in (("garden", 6), ("shed", 5), ("padlock", 3)) if n < count
            )
            + f" entry {n}."
            for n in range(8)
        },
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)
    results = search(user=owner, query="garden shed padlock", limit=10).results
    by_keyword = [r for r in results if "keyword" in r.legs]
    assert by_keyword
    assert all("padlock" in r.text for r in by_keyword)


def test_a_common_prefix_is_not_matched_but_the_word_itself_is(
    owner, vault, make_source, embedder, common_words
):
    # "garden" itself is in 2 notes (not common); compounds it begins are in 4 more.
    _write(
        vault,
        {
            "exact1": "the garden at dusk",
            "exact2": "a garden path",
            "compound1": "the gardenhouse roof",
            "compound2": "a gardenparty invite",
            "compound3": "the gardenwall gate",
            "compound4": "our gardenshed key",
            "other": "nothing here",
        },
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)
    results = search(user=owner, query="garden", limit=10).results
    by_keyword = {r.path for r in results if "keyword" in r.legs}
    assert by_keyword == {"notes/exact1.md", "notes/exact2.md"}


@pytest.mark.django_db(transaction=True)
def test_a_search_outside_a_transaction_finds_what_one_inside_finds(
    owner, vault, make_source, embedder
):
    """The web and MCP search outside a transaction: the semantic leg then runs
    on its own thread beside the keyword leg, over its own connection."""
    _write(
        vault,
        {
            "boiler": "The boiler is serviced every October by the engineer.",
            "garden": "The hedge is trimmed in spring.",
            "bins": "Bins go out on Tuesday night.",
        },
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)
    question = "when does the heating get its yearly check"
    outside = search(user=owner, query=question, limit=3).results
    with transaction.atomic():
        inside = search(user=owner, query=question, limit=3).results
    assert [r.chunk_id for r in outside] == [r.chunk_id for r in inside]
    assert outside[0].path == "notes/boiler.md"
