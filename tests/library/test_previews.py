"""PDF page previews: a pixel budget whatever the page's size, rendered in a
sandbox child, cached on disk by content hash and page, and a page that
could not be rendered is not tried again for every viewer.

The view is async (its lookups run in another thread), so these tests commit."""

from __future__ import annotations

import struct

import pytest

from apps.library.ingest.storage import original_path
from apps.library.models import Document
from apps.library.previews import cache_folder
from apps.library.services.adding import upload_add
from apps.library.services.documents import document_ingest, document_remove
from tests.support.fixtures import signed_in
from tests.support.hostile import huge_page_pdf, text_pdf

pytestmark = pytest.mark.django_db(transaction=True)


def added(owner, name: str, data: bytes) -> Document:
    document = upload_add(owner=owner, name=name, data=data).document
    return document_ingest(document=document)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_a_huge_page_is_drawn_within_the_pixel_budget_and_cached(owner):
    poster = added(owner, "poster.pdf", huge_page_pdf(14400))
    client = signed_in(owner)
    response = client.get(f"/library/doc/{poster.pk}/page/1.png")
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    width, height = png_size(response.content)
    assert max(width, height) <= 2000 and width * height <= 4_000_000
    assert width > 1900  # the budget is used, not a thumbnail
    (cached,) = cache_folder(poster.content_hash).glob("p1-*.png")
    # Served from the cache from now on: the file on disk is what comes back.
    cached.write_bytes(cached.read_bytes() + b"cached")
    again = client.get(f"/library/doc/{poster.pk}/page/1.png").content
    assert again.endswith(b"cached")


def test_an_ordinary_page_keeps_its_usual_size(owner):
    leaflet = added(owner, "leaflet.pdf", text_pdf(2, "Leaflet"))
    response = signed_in(owner).get(f"/library/doc/{leaflet.pk}/page/2.png")
    assert png_size(response.content) == (773, 1094)  # A4 at 1.3


def test_pages_that_do_not_exist_are_404(owner):
    leaflet = added(owner, "leaflet.pdf", text_pdf(2, "Leaflet"))
    client = signed_in(owner)
    assert client.get(f"/library/doc/{leaflet.pk}/page/3.png").status_code == 404
    assert client.get(f"/library/doc/{leaflet.pk}/page/13.png").status_code == 404
    assert client.get(f"/library/doc/{leaflet.pk}/page/0.png").status_code == 404


def test_a_page_that_cannot_be_drawn_is_not_drawn_again_for_the_next_viewer(owner):
    leaflet = added(owner, "leaflet.pdf", text_pdf(1, "Leaflet"))
    path = original_path(leaflet)
    good = path.read_bytes()
    path.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 100)  # damaged after indexing
    client = signed_in(owner)
    assert client.get(f"/library/doc/{leaflet.pk}/page/1.png").status_code == 404
    path.write_bytes(good)
    # Same bytes as indexed, same cache key: the failed render is remembered.
    assert client.get(f"/library/doc/{leaflet.pk}/page/1.png").status_code == 404


def test_others_cannot_see_a_private_documents_pages(owner, member, outsider):
    leaflet = added(owner, "leaflet.pdf", text_pdf(1, "Leaflet"))
    for person in (member, outsider):
        assert signed_in(person).get(f"/library/doc/{leaflet.pk}/page/1.png").status_code == 404
    assert not cache_folder(leaflet.content_hash).exists()  # nothing was rendered for them


def test_removing_the_document_forgets_its_cached_pages(owner):
    leaflet = added(owner, "leaflet.pdf", text_pdf(1, "Leaflet"))
    signed_in(owner).get(f"/library/doc/{leaflet.pk}/page/1.png")
    assert cache_folder(leaflet.content_hash).exists()
    document_remove(user=owner, document=leaflet)
    assert not cache_folder(leaflet.content_hash).exists()
