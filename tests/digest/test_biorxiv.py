"""The bioRxiv client against the fake details API: paging, category and
keyword matching, versions, and every way the API misbehaves."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from apps.digest.biorxiv import BiorxivDown, fetch_category, fetch_keywords
from tests.digest.conftest import TODAY
from tests.fakes.biorxiv import FakePreprint

WEEK = {"start": TODAY - timedelta(days=7), "end": TODAY}


def preprint(n: int, *, category="bioinformatics", abstract="", days=1, version=1, title=""):
    return FakePreprint(
        doi=f"10.1101/2026.02.{n:02d}.{n:06d}",
        title=title or f"Preprint number {n}",
        authors=["A. Author", "B. Author"],
        abstract=abstract or f"Abstract {n}.",
        posted=TODAY - timedelta(days=days),
        category=category,
        version=version,
    )


@pytest.fixture
def api(fake_biorxiv):
    fake_biorxiv.preprints = [preprint(n) for n in range(1, 8)]
    fake_biorxiv.page_size = 3
    return fake_biorxiv


def test_a_category_is_walked_page_by_page(api):
    found = fetch_category("bioinformatics", limit=50, **WEEK)
    assert [p.doi for p in found] == [p.doi for p in api.preprints]
    assert [r.cursor for r in api.requests] == [0, 3, 6]
    assert {r.category for r in api.requests} == {"bioinformatics"}
    assert api.requests[0].path.startswith(
        f"/details/biorxiv/{WEEK['start'].isoformat()}/{TODAY.isoformat()}/0"
    )
    first = found[0]
    assert first.authors == ["A. Author", "B. Author"]
    assert first.link == "https://doi.org/10.1101/2026.02.01.000001"
    assert first.posted == TODAY - timedelta(days=1)


def test_the_limit_stops_paging(api):
    assert len(fetch_category("bioinformatics", limit=4, **WEEK)) == 4
    assert len(api.requests) == 2


def test_category_names_with_spaces_go_as_underscores(api):
    api.add(preprint(50, category="cell biology"))
    found = fetch_category("cell biology", limit=5, **WEEK)
    assert [p.doi for p in found] == [preprint(50).doi]
    assert api.requests[0].category == "cell_biology"


def test_a_server_ignoring_the_category_cannot_flood_the_digest(api, monkeypatch):
    # Answer every category with everything (the parameter ignored).
    original = api.answer
    monkeypatch.setattr(api, "answer", lambda s, e, c, cat: original(s, e, c, ""))
    api.add(preprint(60, category="neuroscience"))
    found = fetch_category("bioinformatics", limit=50, **WEEK)
    assert preprint(60).doi not in {p.doi for p in found}


def test_only_the_latest_version_of_a_doi_is_kept(api):
    api.add(preprint(3, version=2, days=0, abstract="Revised."))
    found = fetch_category("bioinformatics", limit=50, **WEEK)
    thirds = [p for p in found if p.doi == preprint(3).doi]
    assert len(thirds) == 1 and thirds[0].version == 2 and thirds[0].abstract == "Revised."


def test_keywords_match_title_or_abstract_across_categories_once_per_doi(api):
    api.add(
        preprint(20, category="immunology", abstract="A CYTOMETRY panel."),
        preprint(21, category="genomics", title="Spatial transcriptomics of the liver"),
        preprint(22, abstract="Cytometry meets spatial transcriptomics."),
    )
    found = fetch_keywords([("cytometry", 10), ("spatial transcriptomics", 10)], **WEEK)
    by_doi = {p.doi: p.matched for p in found}
    assert by_doi == {
        preprint(20).doi: ["cytometry"],
        preprint(21).doi: ["spatial transcriptomics"],
        preprint(22).doi: ["cytometry", "spatial transcriptomics"],
    }
    assert all(r.category == "" for r in api.requests)


def test_each_keyword_has_its_own_limit(api):
    api.add(*(preprint(30 + n, abstract="cytometry again") for n in range(5)))
    found = fetch_keywords([("cytometry", 2)], **WEEK)
    assert len(found) == 2


def test_an_empty_week_is_believed_after_asking_again(fake_biorxiv):
    fake_biorxiv.preprints = []
    assert fetch_category("bioinformatics", limit=5, **WEEK) == []
    assert len(fake_biorxiv.requests) == 3


@pytest.mark.parametrize("fault", ["fail", "garbage", "empty", "drop", "wrong_type"])
def test_a_glitch_is_retried(api, fault):
    getattr(api, f"{fault}_next")()
    assert len(fetch_category("bioinformatics", limit=50, **WEEK)) == 7
    assert len(api.requests) == 4


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("fail", "HTTP 503"),
        ("garbage", "not JSON"),
        ("empty", "an empty page"),
    ],
)
def test_an_api_that_keeps_failing_is_down_with_the_reason(api, fault, cause):
    getattr(api, f"{fault}_next")(None)
    with pytest.raises(BiorxivDown, match=cause) as failure:
        fetch_category("bioinformatics", limit=50, **WEEK)
    assert "tried 3 times" in str(failure.value)
    assert len(api.requests) == 3


def test_a_client_error_is_not_retried(api):
    api.fail_next(None, status=400)
    with pytest.raises(BiorxivDown, match="refused the request"):
        fetch_category("bioinformatics", limit=50, **WEEK)
    assert len(api.requests) == 1


def test_a_malformed_record_is_skipped_and_paging_stays_in_step(api):
    api.malformed_next()
    found = fetch_category("bioinformatics", limit=50, **WEEK)
    assert [p.doi for p in found] == [p.doi for p in api.preprints]


def test_the_configured_api_host_is_trusted_like_arxivs(api, settings):
    # An admin pointed JARVIS_BIORXIV_API_URL at a local mirror: the fetch
    # guard exempts that host (as it does the arXiv URLs), nothing else.
    settings.FETCH_ALLOW_HOSTS = []
    assert fetch_category("bioinformatics", limit=5, **WEEK)
    assert api.requests


def test_dates_and_old_records_outside_the_window_are_not_asked_for(api):
    api.add(preprint(40, days=30))
    found = fetch_keywords([("abstract", 50)], start=date(2026, 2, 23), end=TODAY)
    assert preprint(40).doi not in {p.doi for p in found}
