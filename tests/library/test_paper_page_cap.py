"""The PDF page cap (JARVIS_MAX_PDF_PAGES) holds for papers too: an arXiv
paper is a PDF of kind `paper`, and a check keyed on kind "pdf" alone would
let a paper of any length through to the parser."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.library.models import Document

pytestmark = pytest.mark.django_db


def add_paper(owner, capture) -> Document:
    """Add arXiv 2401.12345 from the Add page and let the worker's task run."""
    client = Client()
    client.force_login(owner)
    with capture(execute=True):
        assert client.post("/library/add/url/", {"url": "2401.12345"}).status_code == 200
    return Document.objects.get(kind="paper")


def test_an_arxiv_paper_over_the_page_limit_fails_before_it_is_read(
    owner, fake_arxiv, settings, django_capture_on_commit_callbacks
):
    settings.MAX_PDF_PAGES = 4
    paper = fake_arxiv.paper("2401.12345")
    paper.pages = [f"{n} Section\n\nThe body of section {n}." for n in range(1, 7)]
    paper._pdf = None  # rebuilt with the new pages: a title page and six more
    document = add_paper(owner, django_capture_on_commit_callbacks)
    assert document.status == "failed"
    assert document.error == "the PDF has 7 pages, over the 4-page limit (JARVIS_MAX_PDF_PAGES)"
    assert not document.chunks.exists()


def test_a_paper_within_the_limit_is_read(
    owner, fake_arxiv, settings, django_capture_on_commit_callbacks
):
    settings.MAX_PDF_PAGES = 4
    document = add_paper(owner, django_capture_on_commit_callbacks)
    assert document.status == "ready" and document.chunks.exists()
