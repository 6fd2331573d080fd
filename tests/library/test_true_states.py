"""States that are true: a document that failed is neither latest nor waiting."""

from __future__ import annotations

from django.test import Client

from apps.library.models import Document
from apps.library.services.adding import upload_add


def test_a_failed_document_is_neither_latest_nor_waiting(owner):
    added = upload_add(owner=owner, name="scan.md", data=b"# Scan\n\nText.\n")
    Document.objects.filter(pk=added.document.pk).update(
        status=Document.Status.FAILED, error="the file is damaged"
    )
    client = Client()
    client.force_login(owner)
    html = client.get(f"/library/doc/{added.document.pk}/").content.decode()
    assert "the file is damaged" in html
    assert "latest version" not in html and 'data-testid="version-badge"' not in html
    assert "once the document is indexed" not in html
    assert "the file could not be read" in html
