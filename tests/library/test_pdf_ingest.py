"""PDFs through the whole pipeline: a vault sync (or `kb add`), then search.

Every PDF is generated here with PyMuPDF, so each test shows the page text and
the annotations a person made on it.
"""

from __future__ import annotations

import os
import random

import pymupdf
import pytest
from django.db import connection

from apps.library.ingest.sync import source_sync
from apps.library.models import Document, DocumentFile, Source
from apps.library.search import search
from apps.library.services.adding import file_add

pytestmark = pytest.mark.django_db

HIGHLIGHTED = "nitrogen deficiency"
COMMENT = "order fertiliser from the co-op"
STICKY = "Ask Bob about the heater warranty"


def text_page(doc: pymupdf.Document, lines: list[str]) -> pymupdf.Page:
    page = doc.new_page()
    page.insert_text((72, 100), "\n".join(lines), fontsize=11)
    return page


def image_only_page(doc: pymupdf.Document) -> pymupdf.Page:
    """A page like a scan: an image and no text layer."""
    page = doc.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 32, 32), 0)
    pixmap.clear_with(180)
    page.insert_image(pymupdf.Rect(50, 50, 550, 750), pixmap=pixmap)
    return page


def annotated_report() -> bytes:
    """Two pages; a commented highlight on page 2 and a sticky note on page 1."""
    doc = pymupdf.open()
    first = text_page(
        doc,
        ["Quarterly garden report", "The greenhouse heater failed twice in January."],
    )
    first.add_text_annot((400, 100), STICKY)
    second = text_page(
        doc,
        [
            "Soil tests show nitrogen deficiency in the raised beds.",
            "Apply composted manure before spring sowing.",
        ],
    )
    highlight = second.add_highlight_annot(second.search_for(HIGHLIGHTED, quads=True))
    highlight.set_info(content=COMMENT)
    highlight.update()
    return doc.tobytes()


def plain_pdf(lines: list[str]) -> bytes:
    doc = pymupdf.open()
    text_page(doc, lines)
    return doc.tobytes()


def failed_reason(report, path: str) -> str:
    [reason] = [f["reason"] for f in report.failed if f["path"] == path]
    return reason


# --- annotations are searchable -------------------------------------------------


def test_highlight_with_comment_on_page_two_is_found_by_search(owner, vault, make_source, embedder):
    vault.write_bytes("reports/garden-report.pdf", annotated_report())
    source = make_source(owner, vault)

    report = source_sync(source=source, embedder=embedder)

    assert report.failed == []
    document = Document.objects.get(source=source, path="reports/garden-report.pdf")
    assert document.status == Document.Status.READY
    assert document.kind == Document.Kind.PDF
    results = search(user=owner, query=HIGHLIGHTED, embedder=embedder).results
    highlights = [r for r in results if r.text.startswith("[HIGHLIGHT p.2]")]
    assert len(highlights) == 1
    [hit] = highlights
    assert hit.annotation == "highlight"
    assert hit.page == 2
    assert HIGHLIGHTED in hit.text
    assert COMMENT in hit.text
    assert hit.document_id == document.pk
    assert hit.path == "reports/garden-report.pdf"


def test_sticky_note_is_found_by_search_as_a_note(owner, vault, make_source, embedder):
    vault.write_bytes("garden-report.pdf", annotated_report())
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)

    results = search(user=owner, query="heater warranty Bob", embedder=embedder).results

    notes = [r for r in results if r.annotation == "note"]
    assert [r.text for r in notes] == [f"[NOTE p.1] {STICKY}"]
    assert notes[0].page == 1


def test_body_text_of_every_page_is_indexed_with_its_page(owner, vault, make_source, embedder):
    vault.write_bytes("garden-report.pdf", annotated_report())
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)

    document = Document.objects.get(source=source)
    body = list(document.chunks.filter(annotation="").values_list("page", "text"))

    assert [page for page, _ in body] == [1, 2]
    assert "greenhouse heater" in body[0][1]
    assert "composted manure" in body[1][1]


def test_scanned_pdf_with_only_annotations_is_ready_with_a_warning(
    owner, vault, make_source, embedder
):
    doc = pymupdf.open()
    page = image_only_page(doc)
    page.add_text_annot((100, 100), "receipt for the new boiler")
    commented = page.add_highlight_annot(pymupdf.Rect(300, 600, 400, 620))
    commented.set_info(content="warranty runs five years")
    commented.update()
    vault.write_bytes("scans/boiler.pdf", doc.tobytes())
    source = make_source(owner, vault)

    report = source_sync(source=source, embedder=embedder)

    assert report.failed == []
    document = Document.objects.get(source=source, path="scans/boiler.pdf")
    assert document.status == Document.Status.READY
    assert any("no text was recognised" in warning for warning in document.warnings)
    texts = sorted(document.chunks.values_list("text", flat=True))
    assert texts == [
        "[HIGHLIGHT p.1] — note: warranty runs five years",
        "[NOTE p.1] receipt for the new boiler",
    ]
    results = search(user=owner, query="boiler receipt", embedder=embedder).results
    assert any(r.text == "[NOTE p.1] receipt for the new boiler" for r in results)


# --- PDFs that cannot be read ------------------------------------------------------


def test_unreadable_pdfs_fail_with_clear_reasons_while_the_rest_syncs(
    owner, vault, make_source, embedder
):
    scanned = pymupdf.open()
    image_only_page(scanned)
    encrypted = pymupdf.open()
    text_page(encrypted, ["top secret minutes"])
    whole = plain_pdf(["a perfectly good page", "that is cut short"])
    vault.write_bytes("scan.pdf", scanned.tobytes())
    vault.write_bytes(
        "locked.pdf",
        encrypted.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o"),
    )
    vault.write_bytes("cut.pdf", whole[:300])
    vault.write_bytes("noise.pdf", random.Random(7).randbytes(2048))
    vault.write_bytes("empty.pdf", b"")
    vault.write_bytes("fine.pdf", plain_pdf(["The roof was re-tiled in May."]))
    vault.write("note.md", "# Note\n\nThe chimney sweep comes in October.")
    source = make_source(owner, vault)

    report = source_sync(source=source, embedder=embedder)

    expected = {
        "scan.pdf": "no text was recognised on any page",
        "locked.pdf": "encrypted PDF (password required)",
        "cut.pdf": "not a readable PDF",
        "noise.pdf": "no PDF header",
        "empty.pdf": "empty",
    }
    assert report.seen == 7
    assert {f["path"] for f in report.failed} == set(expected)
    for path, phrase in expected.items():
        reason = failed_reason(report, path)
        assert phrase in reason, (path, reason)
        document = Document.objects.get(source=source, path=path)
        assert document.status == Document.Status.FAILED, path
        assert document.error == reason
        assert not document.chunks.exists(), path
    for path in ("fine.pdf", "note.md"):
        document = Document.objects.get(source=source, path=path)
        assert document.status == Document.Status.READY, path
        assert document.chunks.exists(), path
    results = search(user=owner, query="roof re-tiled", embedder=embedder).results
    assert any(r.path == "fine.pdf" for r in results)

    # Failed files are not retried (or rewritten) while they are unchanged.
    connection.ensure_connection()
    before = connection.connection.total_changes
    again = source_sync(source=source, embedder=embedder)
    assert (again.chunks_embedded, again.rows_written) == (0, 0)
    assert connection.connection.total_changes == before


def test_a_zero_byte_pdf_is_failed_as_a_pdf_even_beside_an_empty_note(
    owner, vault, make_source, embedder
):
    # Obsidian leaves empty "Untitled.md" notes about; a zero-byte PDF has the
    # same (empty) bytes but is still a PDF that failed, and must be reported.
    vault.write("Untitled.md", "")
    vault.write_bytes("scans/blank.pdf", b"")
    vault.write("note.md", "# Note\n\nThe chimney sweep comes in October.")
    source = make_source(owner, vault)

    report = source_sync(source=source, embedder=embedder)

    assert "scans/blank.pdf" in {f["path"] for f in report.failed}
    assert "empty" in failed_reason(report, "scans/blank.pdf")
    pdf = DocumentFile.objects.get(source=source, path="scans/blank.pdf").document
    assert pdf.status == Document.Status.FAILED
    assert pdf.kind == Document.Kind.PDF
    assert "empty" in pdf.error
    assert Document.objects.get(source=source, path="note.md").status == Document.Status.READY


def test_a_pdf_that_becomes_readable_again_is_indexed_on_the_next_sync(
    owner, vault, make_source, embedder
):
    path = vault.write_bytes("minutes.pdf", b"")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    document = Document.objects.get(source=source, path="minutes.pdf")
    assert document.status == Document.Status.FAILED

    path.write_bytes(plain_pdf(["Minutes of the allotment committee"]))
    os.utime(path, (1_800_000_000, 1_800_000_000))
    report = source_sync(source=source, embedder=embedder)

    assert report.failed == []
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    assert document.error == ""
    assert "allotment committee" in " ".join(document.chunks.values_list("text", flat=True))


# --- kb add ----------------------------------------------------------------------


def test_add_file_puts_a_pdf_in_the_owners_uploads_and_leaves_the_original_alone(
    owner, tmp_path, settings, embedder
):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    settings.VAULTS_ROOT = tmp_path / "vaults"  # kb add reads local files from there only
    original = tmp_path / "vaults" / "downloads" / "field-notes.pdf"
    original.parent.mkdir(parents=True)
    data = annotated_report()
    original.write_bytes(data)
    os.utime(original, (1_600_000_000, 1_600_000_000))
    stat_before = original.stat()

    document = file_add(owner=owner, path=original, embedder=embedder)

    assert document.status == Document.Status.READY
    assert document.kind == Document.Kind.PDF
    source = document.source
    assert source.owner == owner
    assert source.kind == Source.Kind.UPLOADS
    assert source.name == "Uploads"
    assert document.chunks.filter(annotation="highlight", page=2).exists()
    # A copy under UPLOADS_DIR; the original is only read.
    stored = [p for p in settings.UPLOADS_DIR.rglob("*") if p.is_file()]
    assert len(stored) == 1
    assert stored[0].read_bytes() == data
    assert stored[0].name == "field-notes.pdf"
    assert original.read_bytes() == data
    stat_after = original.stat()
    assert (stat_after.st_mtime_ns, stat_after.st_size) == (
        stat_before.st_mtime_ns,
        stat_before.st_size,
    )
    assert list(original.parent.iterdir()) == [original]
    assert document.source == source
    assert document.path == "field-notes.pdf"
    assert document.original.startswith("uploads/") and document.original.endswith(
        "field-notes.pdf"
    )
    results = search(user=owner, query=HIGHLIGHTED, embedder=embedder).results
    assert any(r.text.startswith("[HIGHLIGHT p.2]") and r.source == "Uploads" for r in results)
