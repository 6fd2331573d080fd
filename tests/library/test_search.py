"""search(): hostile queries, filters, result fields."""

from datetime import date

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.search import Filters, fts_query, search


@pytest.fixture
def library(owner, vault, make_source, embedder):
    vault.write(
        "jobs/acme.md",
        "---\ntype: job_application\ncompany: Acme\nstatus: rejected\ntags: [remote, python]\n"
        "date: 2026-05-02\n---\n# Acme backend role\n\nApplied for the backend role.\n",
    )
    vault.write(
        "jobs/globex.md",
        "---\ntype: job_application\ncompany: Globex\nstatus: interviewing\n"
        "tags: [remote-first]\ndate: 2026-09-10\n---\n# Globex data role\n\nApplied for the data role.\n",
    )
    vault.write("notes/kitchen.md", "# Kitchen\n\nThe backend of the fridge hums.\n")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    return source


@pytest.mark.parametrize(
    "query",
    ['"', "*", "NEAR(backend", "-backend", "title:backend", "a AND OR NOT", "(((", "x" * 10_000],
)
def test_fts_syntax_and_huge_queries_do_not_error(owner, library, query):
    response = search(user=owner, query=query)
    assert response.mode in {"lookup", "present", "history"}


def test_fts_query_quotes_every_word():
    assert fts_query('backend" OR title:* NEAR(x') == '"backend" OR "title" OR "near"'


def test_a_record_header_makes_records_findable_by_their_fields(owner, library):
    top = search(user=owner, query="jobs I was rejected from", limit=1).results[0]
    assert top.path == "jobs/acme.md"


def test_tag_filter_is_an_exact_match(owner, library):
    remote = search(user=owner, query="applied role", filters=Filters(tags=["remote"])).results
    assert {r.path for r in remote} == {"jobs/acme.md"}  # not remote-first


def test_category_status_and_entity_filters(owner, library):
    found = search(
        user=owner,
        query="applied",
        filters=Filters(category="job_application", status="interviewing"),
    )
    assert {r.path for r in found.results} == {"jobs/globex.md"}
    by_entity = search(user=owner, query="applied", filters=Filters(entity="acme"))
    assert {r.path for r in by_entity.results} == {"jobs/acme.md"}


def test_date_range_filter(owner, library):
    found = search(user=owner, query="applied role", filters=Filters(date_from=date(2026, 9, 1)))
    assert {r.path for r in found.results} == {"jobs/globex.md"}


def test_kind_and_source_filters(owner, library):
    assert search(user=owner, query="backend", filters=Filters(kinds=["pdf"])).results == []
    assert (
        search(user=owner, query="backend", filters=Filters(source_ids=[library.pk + 99])).results
        == []
    )
    assert search(user=owner, query="backend", filters=Filters(source_ids=[library.pk])).results


def test_results_say_which_legs_matched(owner, library):
    results = search(user=owner, query="fridge hums", limit=3).results
    assert results[0].path == "notes/kitchen.md"
    assert "keyword" in results[0].legs and "semantic" in results[0].legs


def test_an_empty_query_returns_nothing(owner, library):
    assert search(user=owner, query="   ").results == []


def test_limit_is_respected(owner, library):
    assert len(search(user=owner, query="applied backend role fridge", limit=2).results) == 2


def test_a_search_loads_its_passages_in_the_same_few_queries_however_many_it_returns(
    owner, vault, make_source, embedder
):
    """Passages are loaded with only the fields a search reads: one a result
    needed but was not loaded would cost a query per passage (slow at scale)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for n in range(12):
        vault.write(
            f"home/boiler-{n:02d}.md",
            f"---\ndate: 2026-0{1 + n % 9}-1{n % 10}\nstatus: done\n---\n# Boiler visit {n}\n\n"
            f"The engineer serviced the boiler and checked the pressure, visit {n}.\n",
        )
    source_sync(source=make_source(owner, vault), embedder=embedder)
    search(user=owner, query="boiler pressure service", limit=10)  # warm per-process caches
    counts = {}
    for limit in (2, 10):
        with CaptureQueriesContext(connection) as queries:
            found = search(user=owner, query="boiler pressure service", limit=limit).results
        assert len(found) == limit
        assert all(r.date and r.source and r.text for r in found)
        counts[limit] = len(queries.captured_queries)
    assert counts[10] == counts[2]


@pytest.mark.parametrize("mode", ["lookup", "present", "history"])
def test_a_search_embeds_the_question_once(owner, library, embedder, mode):
    """The keyword, semantic, record and version steps share one query vector
    (the model is the slowest step a search can repeat)."""
    found = search(user=owner, query="applied for the backend role", mode=mode, embedder=embedder)
    assert found.results
    assert embedder.queries == 1


@pytest.mark.parametrize(
    "query",
    [
        "roles I applied for that are not remote",
        "applied roles not tagged remote",
        "applications that weren't fully remote",
    ],
)
def test_a_tag_the_question_negates_is_left_out(owner, library, query):
    paths = [r.path for r in search(user=owner, query=query).results]
    assert "jobs/globex.md" in paths  # tagged remote-first: another tag
    assert "jobs/acme.md" not in paths


def test_a_negated_word_that_is_no_tag_leaves_nothing_out(owner, library):
    paths = [r.path for r in search(user=owner, query="backend role, not kitchen").results]
    assert "jobs/acme.md" in paths
