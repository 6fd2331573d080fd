"""Who may see a PDF's page previews and who may reprocess a document, by
HTTP: each check is one line in a view, and these tests fail if it goes."""

from __future__ import annotations

import pymupdf
import pytest
from django.test import Client

from apps.library.ingest.sync import source_sync
from apps.library.models import Document, Source
from tests.support.fixtures import signed_in


def pdf_bytes(*pages: str) -> bytes:
    pdf = pymupdf.open()
    for text in pages:
        pdf.new_page().insert_text((72, 72), text)
    return pdf.tobytes()


@pytest.fixture
def pdfs(owner, vault, make_source, embedder):
    """The owner's vault, shared with the household: a shared PDF and one in
    the private folder."""
    vault.write_bytes("garden.pdf", pdf_bytes("Compost plan.", "Worms and soil."))
    vault.write_bytes("private/medical.pdf", pdf_bytes("Blood test results.", "Page two."))
    source = make_source(owner, vault, sharing=Source.Sharing.HOUSEHOLD)
    source_sync(source=source, embedder=embedder)
    return {
        "shared": Document.objects.get(path="garden.pdf"),
        "private": Document.objects.get(path="private/medical.pdf"),
    }


def preview(user, document: Document, page: int = 1):
    return signed_in(user).get(f"/library/doc/{document.pk}/page/{page}.png")


class TestPagePreviews:
    def test_the_owner_sees_every_page_preview(self, owner, pdfs):
        for document in pdfs.values():
            response = preview(owner, document, 2)
            assert response.status_code == 200
            assert response.content.startswith(b"\x89PNG")

    def test_a_household_member_sees_the_shared_pdf_but_not_the_private_one(self, member, pdfs):
        assert preview(member, pdfs["shared"]).status_code == 200
        for page in (1, 2):
            response = preview(member, pdfs["private"], page)
            assert response.status_code == 404
            assert not response.content.startswith(b"\x89PNG")

    def test_an_outsider_sees_no_preview_at_all(self, outsider, pdfs):
        for document in pdfs.values():
            assert preview(outsider, document).status_code == 404

    def test_an_owner_only_collection_keeps_its_previews_to_itself(
        self, owner, member, make_vault, make_source, embedder
    ):
        notes = make_vault("olivia-own")
        notes.write_bytes("tax.pdf", pdf_bytes("Tax return 2026."))
        source_sync(source=make_source(owner, notes, name="own"), embedder=embedder)
        document = Document.objects.get(path="tax.pdf")
        assert preview(owner, document).status_code == 200
        assert preview(member, document).status_code == 404

    def test_a_stranger_is_sent_to_sign_in(self, pdfs):
        response = Client().get(f"/library/doc/{pdfs['shared'].pk}/page/1.png")
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


class TestOwnersOnly:
    """A household member may read a shared document but not change it."""

    def test_a_member_cannot_reprocess_a_shared_document(self, member, pdfs):
        document = pdfs["shared"]
        before = Document.objects.values().get(pk=document.pk)
        response = signed_in(member).post(f"/library/doc/{document.pk}/reprocess/")
        assert response.status_code == 404
        assert Document.objects.values().get(pk=document.pk) == before  # still ready, untouched

    def test_the_owner_can(self, owner, pdfs):
        document = pdfs["shared"]
        response = signed_in(owner).post(f"/library/doc/{document.pk}/reprocess/")
        assert response.status_code == 302
        document.refresh_from_db()
        assert document.status == Document.Status.PENDING  # queued (runs when this commits)

    def test_a_member_cannot_remove_or_edit_a_shared_document(self, member, pdfs):
        document = pdfs["shared"]
        client = signed_in(member)
        assert client.get(f"/library/doc/{document.pk}/remove/").status_code == 404
        assert client.post(f"/library/doc/{document.pk}/remove/").status_code == 404
        client.post(f"/library/doc/{document.pk}/edit/", {"title": "Mine now"})
        document.refresh_from_db()
        assert document.title != "Mine now"
        assert Document.objects.filter(pk=document.pk).exists()


class TestPdfViewer:
    def test_a_pdf_page_carries_the_viewer_and_each_passage_its_page(self, member, pdfs):
        document = pdfs["shared"]
        html = signed_in(member).get(f"/library/doc/{document.pk}/").content.decode()
        assert 'data-testid="pdf-viewer"' in html
        assert f'data-url="/library/doc/{document.pk}/original/"' in html
        assert 'type="module" src="/static/js/pdf-viewer.js"' in html
        # A citation chip links to #chunk-<id>: the viewer opens at that element's page.
        for chunk in document.chunks.all():
            assert f'id="chunk-{chunk.pk}" data-page="{chunk.page}"' in html

    def test_the_file_the_viewer_loads_is_the_members_to_read_and_the_private_one_is_not(
        self, member, pdfs
    ):
        shared = signed_in(member).get(f"/library/doc/{pdfs['shared'].pk}/original/")
        assert shared.status_code == 200
        assert b"".join(shared.streaming_content).startswith(b"%PDF")
        for path in ("", "original/"):
            response = signed_in(member).get(f"/library/doc/{pdfs['private'].pk}/{path}")
            assert response.status_code == 404
