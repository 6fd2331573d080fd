"""Format caps and parse limits, as the person who uploaded the file sees them:
the document ends `failed` with a reason that names the number, the limit and
the setting, and nothing of it is indexed. Parsing runs in real sandbox
children (apps.library.ingest.isolated); the worker's task runs inline."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from apps.core.models import JobRun
from apps.library.ingest.isolated import ParseFailed, ParseItem, parse_one
from apps.library.ingest.parsing.limits import LimitExceeded, ParseLimits, check_input
from apps.library.models import Document
from apps.library.services.adding import upload_add
from apps.library.tasks import ingest_queue
from tests.support.hostile import epub_bomb, pdf_with_pages, small_epub, text_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def add(owner, django_capture_on_commit_callbacks):
    """Upload bytes as the owner and let the worker's task run; the document after."""

    def add_file(name: str, data: bytes) -> Document:
        added = upload_add(owner=owner, name=name, data=data)
        assert added.document is not None, added.error
        with django_capture_on_commit_callbacks(execute=True):
            ingest_queue(added.document)
        added.document.refresh_from_db()
        return added.document

    return add_file


def test_an_epub_that_unpacks_past_the_limit_fails_with_the_reason(add, settings):
    settings.MAX_UNPACKED_MB = 2
    document = add("novel.epub", epub_bomb(3))
    assert (document.status, document.error) == (
        "failed",
        "the EPUB unpacks to 3.0 MB, over the 2 MB limit (JARVIS_MAX_UNPACKED_MB)",
    )
    assert not document.chunks.exists()
    run = JobRun.objects.get(job="library_ingest")
    # A file that could not be read is a failed run, never an "ok" one.
    assert run.outcome == "error" and "Could not read" in run.summary
    assert "the EPUB unpacks" in run.summary


def test_an_ordinary_epub_within_the_limits_is_indexed(add, settings):
    settings.MAX_UNPACKED_MB = 2
    document = add("small.epub", small_epub("Quinces need a long, warm autumn."))
    assert document.status == "ready", document.error
    assert "Quinces need a long" in document.chunks.first().text


def test_an_archive_packed_far_smaller_than_it_unpacks_is_refused(add, settings):
    settings.MAX_ZIP_RATIO = 50
    document = add("dense.epub", epub_bomb(2))  # repetitive XHTML packs about 300:1
    assert document.status == "failed"
    assert document.error.startswith("the EPUB unpacks to ")
    assert document.error.endswith(
        "times its packed size, over the limit of 50 (JARVIS_MAX_ZIP_RATIO)"
    )


def test_an_archive_with_too_many_entries_is_refused(add, settings):
    settings.MAX_ZIP_ENTRIES = 20
    chapters = {f"OEBPS/c{n}.xhtml": b"<html><body><p>x</p></body></html>" for n in range(30)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        for name, data in chapters.items():
            archive.writestr(name, data)
    document = add("many.epub", buffer.getvalue())
    assert (document.status, document.error) == (
        "failed",
        "the EPUB holds 31 files, over the 20-file limit (JARVIS_MAX_ZIP_ENTRIES)",
    )


def test_an_archive_whose_directory_understates_an_entry_is_refused():
    """A bomb can declare a small size in the ZIP directory; unpacking checks it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("big.xhtml", b"a" * 200_000, compress_type=zipfile.ZIP_DEFLATED)
    data = bytearray(buffer.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        local = archive.getinfo("big.xhtml").header_offset
    data[local + 22 : local + 26] = struct.pack("<I", 1000)  # local header: uncompressed size
    central = data.find(b"PK\x01\x02")
    while data[central + 46 : central + 55] != b"big.xhtml":
        central = data.find(b"PK\x01\x02", central + 1)
    data[central + 24 : central + 28] = struct.pack("<I", 1000)  # and the directory's
    with pytest.raises(
        LimitExceeded, match=r"big\.xhtml does not unpack to what the archive declares"
    ):
        check_input(bytes(data), kind="epub", limits=ParseLimits())


def test_a_pdf_with_more_pages_than_the_limit_fails_before_it_is_read(add, settings):
    settings.MAX_PDF_PAGES = 500
    document = add("report.pdf", pdf_with_pages(600))
    assert (document.status, document.error) == (
        "failed",
        "the PDF has 600 pages, over the 500-page limit (JARVIS_MAX_PDF_PAGES)",
    )


def test_a_document_that_makes_too_many_passages_fails(add, settings):
    settings.MAX_CHUNKS = 10
    document = add("survey.pdf", text_pdf(8, "Soil survey"))
    assert document.status == "failed"
    assert document.error.endswith("over the 10-passage limit (JARVIS_MAX_CHUNKS)")
    assert not document.chunks.exists()


def test_a_text_file_larger_than_the_text_limit_fails(add, settings):
    settings.MAX_TEXT_MB = 1
    document = add("dump.txt", b"lorem ipsum dolor sit amet\n" * 50_000)
    assert (document.status, document.error) == (
        "failed",
        "the file holds 1.3 MB of text, over the 1 MB limit (JARVIS_MAX_TEXT_MB)",
    )


def test_a_parse_past_the_time_limit_fails_with_the_setting_named(settings):
    """1,999 full pages are within the page cap and take seconds to read."""
    settings.PARSE_TIMEOUT_SECONDS = 1
    page = "\n".join(f"Line {i} of an almanac that goes on and on." for i in range(50))
    almanac = pdf_with_pages(1999, text=page)
    with pytest.raises(ParseFailed) as failure:
        parse_one(ParseItem(data=almanac, kind="pdf", filename="almanac.pdf"))
    assert str(failure.value) == (
        "parsing took longer than 1 s, the limit (JARVIS_PARSE_TIMEOUT_SECONDS)"
    )


def test_a_parse_past_the_memory_limit_fails_with_the_setting_named(settings):
    settings.PARSE_MEMORY_MB = 64
    settings.MAX_TEXT_MB = 500
    with pytest.raises(ParseFailed) as failure:
        parse_one(ParseItem(data=b"word " * 16_000_000, kind="text", filename="big.txt"))
    assert str(failure.value) == (
        "parsing needed more than 64 MB of memory, the limit (JARVIS_PARSE_MEMORY_MB)"
    )
