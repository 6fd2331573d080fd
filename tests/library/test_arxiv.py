"""arXiv client against a fake arXiv on 127.0.0.1: id parsing, metadata, listings,
retries of the API's known glitches, PDFs."""

from __future__ import annotations

import logging
from datetime import date

import pymupdf
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from apps.core.fetch import FetchError
from apps.library.ingest import arxiv
from apps.library.ingest.arxiv import (
    ArxivId,
    PaperNotFound,
    PaperSourceDown,
    download_pdf,
    fetch_metadata,
    parse_arxiv_id,
    search_category,
)
from tests.fakes.arxiv import FakeArxiv, FakePaper


@pytest.fixture
def fake(settings, monkeypatch):
    monkeypatch.setattr(arxiv, "RETRY_BACKOFF_SECONDS", 0.0)
    with FakeArxiv() as server:
        server.configure(settings)
        yield server


# --- Identifiers

PARSED = [
    ("2401.12345", ArxivId("2401.12345", None)),
    ("2401.12345v2", ArxivId("2401.12345", 2)),
    ("arXiv:2401.12345", ArxivId("2401.12345", None)),
    ("arxiv:2401.12345v1", ArxivId("2401.12345", 1)),
    ("ARXIV:2401.12345", ArxivId("2401.12345", None)),
    ("https://arxiv.org/abs/2401.12345", ArxivId("2401.12345", None)),
    ("http://arxiv.org/abs/2401.12345v3", ArxivId("2401.12345", 3)),
    ("https://arxiv.org/pdf/2401.12345", ArxivId("2401.12345", None)),
    ("https://arxiv.org/pdf/2401.12345v2.pdf", ArxivId("2401.12345", 2)),
    ("https://arxiv.org/pdf/2401.12345.pdf", ArxivId("2401.12345", None)),
    ("https://export.arxiv.org/abs/2401.12345", ArxivId("2401.12345", None)),
    ("https://www.arxiv.org/abs/2401.12345v1", ArxivId("2401.12345", 1)),
    ("https://arxiv.org/abs/2401.12345/", ArxivId("2401.12345", None)),
    ("https://arxiv.org/abs/2401.12345?context=cs#top", ArxivId("2401.12345", None)),
    ("https://arxiv.org/html/2401.12345v2", ArxivId("2401.12345", 2)),
    ("HTTPS://ArXiv.org/abs/2401.12345", ArxivId("2401.12345", None)),
    ("arxiv.org/abs/2401.12345", ArxivId("2401.12345", None)),
    ("hep-th/9901001", ArxivId("hep-th/9901001", None)),
    ("hep-th/9901001v2", ArxivId("hep-th/9901001", 2)),
    ("math.GT/0309136", ArxivId("math/0309136", None)),
    ("arXiv:math.GT/0309136v1", ArxivId("math/0309136", 1)),
    ("cond-mat/0102536", ArxivId("cond-mat/0102536", None)),
    ("https://arxiv.org/abs/hep-th/9901001v2", ArxivId("hep-th/9901001", 2)),
    ("https://arxiv.org/pdf/hep-th/9901001", ArxivId("hep-th/9901001", None)),
    ("0704.0001", ArxivId("0704.0001", None)),
    ("1412.9999v4", ArxivId("1412.9999", 4)),
    ("1501.00001", ArxivId("1501.00001", None)),
    ("  2401.12345v2 \n", ArxivId("2401.12345", 2)),
    ("\thttps://arxiv.org/abs/2401.12345 ", ArxivId("2401.12345", None)),
    ("10.48550/arXiv.2401.12345", ArxivId("2401.12345", None)),
    ("https://doi.org/10.48550/arXiv.2401.12345", ArxivId("2401.12345", None)),
]

NOT_IDS = [
    "",
    "   ",
    "10.1103/PhysRevLett.116.061102",
    "https://doi.org/10.1038/nature14539",
    "https://example.com/abs/2401.12345",
    "https://example.com/",
    "2401.123",
    "2401.1234567",
    "2413.12345",  # month 13
    "0612.0001",  # before new-style ids existed
    "1501.0001",  # four digits after 2014
    "1412.00001",  # five digits before 2015
    "2401.12345v0",
    "2401.12345v",
    "arxiv.org.evil.com/abs/2401.12345",
    "https://arxiv.org.evil.com/abs/2401.12345",
    "https://evil.com/arxiv.org/abs/2401.12345",
    "https://arxiv.org@evil.com/abs/2401.12345",
    "https://user@arxiv.org/abs/2401.12345",
    "ftp://arxiv.org/abs/2401.12345",
    "javascript:alert(1)//arxiv.org/abs/2401.12345",
    "https://arxiv.org/list/cs.LG/recent",
    "https://arxiv.org/abs/",
    "https://arxiv.org/abs/2401.12345/extra",
    "hep-th/990100",
    "hep-th/99010011",
    "2401.12345 2401.12346",
    "arXiv:",
    "arXiv:nonsense",
    "see 2401.12345",
]


@pytest.mark.parametrize(("text", "expected"), PARSED, ids=[text for text, _ in PARSED])
def test_parse_arxiv_id_accepts_common_forms(text, expected):
    assert parse_arxiv_id(text) == expected


@pytest.mark.parametrize("text", NOT_IDS)
def test_parse_arxiv_id_refuses_everything_else(text):
    assert parse_arxiv_id(text) is None


@hypothesis_settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_parse_arxiv_id_never_raises(text):
    result = parse_arxiv_id(text)
    assert result is None or isinstance(result, ArxivId)


@hypothesis_settings(max_examples=200, deadline=None)
@given(
    year=st.integers(7, 99),
    month=st.integers(1, 12),
    number=st.integers(1, 99999),
    version=st.none() | st.integers(1, 30),
    form=st.sampled_from(["{}", "arXiv:{}", "https://arxiv.org/abs/{}", "http://arxiv.org/pdf/{}"]),
)
def test_parse_arxiv_id_round_trips_new_style_ids(year, month, number, version, form):
    if year == 7 and month < 4:
        month = 4
    digits = 5 if year >= 15 else 4
    number %= 10**digits
    arxiv_id = ArxivId(f"{year:02d}{month:02d}.{number:0{digits}d}", version)
    assert parse_arxiv_id(form.format(arxiv_id.versioned)) == arxiv_id


def test_canonical_url_has_no_version():
    assert ArxivId("2401.12345", 2).canonical_url == "https://arxiv.org/abs/2401.12345"
    assert ArxivId("hep-th/9901001", 1).canonical_url == "https://arxiv.org/abs/hep-th/9901001"
    assert str(ArxivId("2401.12345", 2)) == "2401.12345v2"


# --- Metadata


def test_fetch_metadata_of_a_known_paper(fake):
    meta = fetch_metadata(ArxivId("2401.12345"))

    assert meta.arxiv_id == ArxivId("2401.12345", 2)
    assert meta.title == (
        "Sparse Attention for Very Long Household Documents: A Study of Retrieval"
    )
    assert meta.authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]
    assert meta.abstract.startswith("We show that sparse attention retrieves facts")
    assert "\n" not in meta.abstract and "  " not in meta.abstract
    assert meta.abstract.endswith("confirm it.")
    assert meta.published == date(2024, 1, 22)
    assert meta.updated == date(2024, 2, 5)
    assert meta.doi == "10.1234/jarvis.2024.001"
    assert meta.primary_category == "cs.LG"
    assert meta.categories == ["cs.LG", "cs.CL"]
    assert meta.abs_url == "https://arxiv.org/abs/2401.12345"
    assert meta.pdf_url == "https://arxiv.org/pdf/2401.12345v2"
    [request] = fake.api_requests
    assert request.path == "/api/query"
    assert request.param("id_list") == "2401.12345"


def test_fetch_metadata_of_a_named_version_and_an_old_style_id(fake):
    first = fetch_metadata(ArxivId("2401.12345", 1))
    assert first.arxiv_id == ArxivId("2401.12345", 1)
    assert first.pdf_url == "https://arxiv.org/pdf/2401.12345v1"
    assert fake.api_requests[-1].param("id_list") == "2401.12345v1"

    old = fetch_metadata(parse_arxiv_id("https://arxiv.org/abs/hep-th/9901001"))
    assert old.arxiv_id == ArxivId("hep-th/9901001", 3)
    assert old.title == "Strings on a Household Budget"
    assert old.doi == ""
    assert old.primary_category == "hep-th"
    assert old.abs_url == "https://arxiv.org/abs/hep-th/9901001"


def test_unknown_id_is_not_found_after_three_requests(fake):
    with pytest.raises(PaperNotFound) as caught:
        fetch_metadata(ArxivId("2401.99999"))

    assert str(caught.value) == "arXiv has no paper 2401.99999 (checked 3 times)"
    assert len(fake.api_requests) == 3
    assert {r.param("id_list") for r in fake.api_requests} == {"2401.99999"}


def test_an_error_entry_means_not_found_at_once(fake):
    fake.unknown_ids = "error"
    with pytest.raises(PaperNotFound, match=r"^arXiv has no paper 2401\.99999$"):
        fetch_metadata(ArxivId("2401.99999"))
    assert len(fake.api_requests) == 1


def test_two_empty_answers_then_the_entry(fake):
    fake.empty_next(2)
    meta = fetch_metadata(ArxivId("2312.04567"))
    assert meta.title == "Embedding Drift in Personal Archives"
    assert len(fake.api_requests) == 3


def test_503_twice_then_success(fake):
    fake.fail_next(2, status=503)
    meta = fetch_metadata(ArxivId("2402.01001"))
    assert meta.title == "Gradient Descent on Grocery Lists"
    assert len(fake.api_requests) == 3


def test_503_forever_is_source_down(fake):
    fake.fail_next(None, status=503)
    with pytest.raises(PaperSourceDown, match="503") as caught:
        fetch_metadata(ArxivId("2402.01001"))
    assert "3 times" in str(caught.value)
    assert len(fake.api_requests) == 3


def test_empty_then_503s_ends_as_source_down(fake):
    fake.empty_next(1)
    fake.fail_next(2, status=502)
    with pytest.raises(PaperSourceDown, match="502"):
        fetch_metadata(ArxivId("2402.01001"))
    assert len(fake.api_requests) == 3


def test_429_is_retried_other_4xx_are_not(fake):
    fake.fail_next(1, status=429)
    assert fetch_metadata(ArxivId("2402.01001")).title == "Gradient Descent on Grocery Lists"
    assert len(fake.api_requests) == 2

    fake.requests.clear()
    fake.fail_next(1, status=400)
    with pytest.raises(PaperSourceDown, match="400"):
        fetch_metadata(ArxivId("2402.01001"))
    assert len(fake.api_requests) == 1


def test_timeout_dropped_connection_and_broken_xml_are_retried(fake, monkeypatch):
    monkeypatch.setattr(arxiv, "API_TIMEOUT_SECONDS", 0.3)
    fake.slow_next(1, seconds=1.0)
    fake.drop_next(1)
    meta = fetch_metadata(ArxivId("2402.01001"))
    assert meta.title == "Gradient Descent on Grocery Lists"
    assert len(fake.api_requests) == 3

    fake.requests.clear()
    fake.garbage_next(1)
    assert fetch_metadata(ArxivId("2402.01001")).arxiv_id.id == "2402.01001"
    assert len(fake.api_requests) == 2


def test_timeouts_forever_are_source_down(fake, monkeypatch):
    monkeypatch.setattr(arxiv, "API_TIMEOUT_SECONDS", 0.2)
    fake.slow_next(None, seconds=0.6)
    with pytest.raises(PaperSourceDown):
        fetch_metadata(ArxivId("2402.01001"))
    assert len(fake.api_requests) == 3


def test_retries_back_off_exponentially_on_top_of_the_courtesy_delay(fake, settings, monkeypatch):
    monkeypatch.setattr(arxiv, "RETRY_BACKOFF_SECONDS", 0.05)
    settings.ARXIV_DELAY_SECONDS = 0.1
    fake.fail_next(2, status=503)
    fetch_metadata(ArxivId("2402.01001"))
    fetch_metadata(ArxivId("2401.00007"))

    at = [request.at for request in fake.api_requests]
    assert len(at) == 4
    assert at[1] - at[0] >= 0.1 + 0.05
    assert at[2] - at[1] >= 0.1 + 0.1
    assert at[3] - at[2] >= 0.1  # the courtesy delay holds between separate calls too


# --- Category listings


def test_category_listing_is_newest_first_and_includes_cross_lists(fake):
    papers = search_category("cs.LG", max_results=10)

    assert [p.arxiv_id.id for p in papers] == ["2402.01001", "2401.12345", "2312.04567"]
    assert [p.published for p in papers] == sorted((p.published for p in papers), reverse=True)
    assert papers[2].primary_category == "cs.IR"
    [request] = fake.api_requests
    assert request.param("search_query") == "cat:cs.LG"
    assert request.param("sortBy") == "submittedDate"
    assert request.param("sortOrder") == "descending"
    assert request.param("start") == "0"
    assert request.param("max_results") == "10"


def test_category_listing_pages(fake):
    for day in range(1, 6):
        fake.add(
            FakePaper(
                id=f"2403.0000{day}",
                title=f"Paper of March {day}",
                authors=["A. Author"],
                abstract="Text.",
                published=fake.paper("2402.01001").published.replace(month=3, day=day),
                categories=["math.GT"],
            )
        )
    first = search_category("math.GT", max_results=2)
    second = search_category("math.GT", max_results=2, start=2)
    assert [p.title for p in first] == ["Paper of March 5", "Paper of March 4"]
    assert [p.title for p in second] == ["Paper of March 3", "Paper of March 2"]
    assert fake.api_requests[-1].param("start") == "2"


def test_malformed_entry_in_listing_is_skipped(fake, caplog):
    fake.malformed_next(1)
    with caplog.at_level(logging.WARNING, logger="apps.library.ingest.arxiv"):
        papers = search_category("cs.LG", max_results=10)

    assert [p.arxiv_id.id for p in papers] == ["2402.01001", "2401.12345", "2312.04567"]
    assert len(fake.api_requests) == 1
    assert "malformed entry" in caplog.text


def test_empty_listing_page_is_retried_but_an_empty_category_is_not(fake):
    fake.empty_next(1)
    assert len(search_category("cs.CL", max_results=5)) == 2
    assert len(fake.api_requests) == 2

    fake.requests.clear()
    assert search_category("astro-ph.CO", max_results=5) == []
    assert len(fake.api_requests) == 1

    fake.requests.clear()
    fake.empty_next(None)
    with pytest.raises(PaperSourceDown, match="empty"):
        search_category("cs.CL", max_results=5)
    assert len(fake.api_requests) == 3


def test_listing_refuses_a_malformed_category_or_range(fake):
    for category in ("", "cs.LG OR cat:math", "cat:cs.LG", "cs.LG&max_results=5"):
        with pytest.raises(ValueError):
            search_category(category, max_results=5)
    with pytest.raises(ValueError):
        search_category("cs.LG", max_results=5000)
    with pytest.raises(ValueError):
        search_category("cs.LG", max_results=5, start=-1)
    assert fake.requests == []


# --- PDFs


def test_download_pdf_returns_the_papers_pdf(fake):
    meta = fetch_metadata(ArxivId("2401.12345"))
    data = download_pdf(meta)

    assert data == fake.paper("2401.12345").pdf
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        assert doc.page_count == 3
        assert "Sparse Attention" in doc[0].get_text()
    assert fake.pdf_requests[-1].path == "/pdf/2401.12345v2"


def test_download_pdf_of_an_old_style_id(fake):
    data = download_pdf(fetch_metadata(ArxivId("hep-th/9901001")))
    assert data.startswith(b"%PDF-")
    assert fake.pdf_requests[-1].path == "/pdf/hep-th/9901001v3"


def test_download_pdf_refuses_a_response_that_is_not_pdf(fake):
    meta = fetch_metadata(ArxivId("2401.12345"))
    fake.wrong_type_next(1, content_type="text/html; charset=utf-8")
    with pytest.raises(FetchError):
        download_pdf(meta)
