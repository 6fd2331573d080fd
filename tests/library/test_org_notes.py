"""Org-mode files, the format added as one reader module and one row of
apps.library.formats: uploaded or synced, they are read by their outline
(headings as sections, #+TITLE as the title, tags), comments and property
drawers stay out, and every place that lists formats knows them."""

from __future__ import annotations

import importlib

import pytest
from django.test import Client

from apps.library.formats import FORMATS, accepted_types
from apps.library.ingest.sync import source_sync
from apps.library.models import Document
from apps.library.search import search
from apps.library.services.adding import upload_add
from apps.library.services.documents import document_ingest

pytestmark = pytest.mark.django_db

GARDEN = """\
#+TITLE: Garden plan
#+FILETAGS: :garden:
# Private aside: the neighbour's hedge is a secret for now.
* Compost bins                                                  :outdoor:
:PROPERTIES:
:ID: 6f1c2a
:END:
Turn the heap every =two weeks=; the [[https://example.org/compost][council guide]] says so.
* Tomatoes
** Seedlings
Prick out the seedlings when the first true leaves show.
#+BEGIN_SRC sh
# water at dawn
crontab -l
#+END_SRC
"""


def passages(document: Document) -> list:
    return list(document.chunks.order_by("ordinal"))


def test_an_uploaded_org_file_is_read_by_its_outline(owner, embedder):
    added = upload_add(owner=owner, name="garden.org", data=GARDEN.encode())
    assert added.error == ""
    document = document_ingest(document=added.document, embedder=embedder)
    assert document.status == Document.Status.READY
    assert document.kind == "org" and document.get_kind_display() == "Org note"
    assert document.title == "Garden plan"
    chunks = passages(document)
    sections = [c.section for c in chunks]
    assert "Compost bins" in sections and "Tomatoes › Seedlings" in sections
    text = "\n".join(c.text for c in chunks)
    # Comments and the property drawer are not text; a link reads as its words;
    # a source block stays verbatim (its "#" line is code, not a comment).
    assert "neighbour" not in text and ":ID:" not in text and "6f1c2a" not in text
    assert "council guide" in text and "https://example.org" not in text
    assert "# water at dawn" in text and "crontab -l" in text
    assert set(document.tag_rows.values_list("tag", flat=True)) >= {"garden", "outdoor"}


def test_an_org_file_in_a_synced_folder_is_indexed_and_found(owner, vault, make_source, embedder):
    vault.write("plans/garden.org", GARDEN)
    vault.write("plans/ignored.el", '(setq org-directory "~/org")')
    report = source_sync(source=make_source(owner, vault), embedder=embedder)
    assert report.failed == []
    documents = Document.objects.filter(source__owner=owner)
    assert [d.kind for d in documents] == ["org"]
    found = search(user=owner, query="when to prick out seedlings", embedder=embedder, limit=3)
    assert found.results and found.results[0].title == "Garden plan"
    assert found.results[0].section == "Tomatoes › Seedlings"


def test_an_org_name_on_other_bytes_is_refused(owner):
    pdf = b"%PDF-1.7\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    added = upload_add(owner=owner, name="plan.org", data=pdf)
    assert added.document is None
    assert added.error == "named .org but the bytes are a PDF"


def test_html_named_org_is_still_a_web_page(owner):
    page = b"<!doctype html><html><head><title>Hi</title></head><body><p>x</p></body></html>"
    added = upload_add(owner=owner, name="page.org", data=page)
    assert added.document is not None and added.document.kind == "web"


def test_the_add_page_accepts_every_format_the_table_lists(owner):
    client = Client()
    client.force_login(owner)
    html = client.get("/library/add/").content.decode()
    accept = accepted_types()
    assert f'accept="{accept}"' in html
    tokens = accept.split(",")
    for extension in (".org", ".md", ".pdf", ".docx", ".xlsx", ".csv", ".png"):
        assert extension in tokens
    assert "image/*" in tokens


def test_every_format_has_a_reader_and_a_kind():
    kinds = {value for value, _ in Document.Kind.choices}
    for entry in FORMATS:
        module, _, function = entry.reader.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), entry.kind
        assert entry.kind in kinds
