"""A PDF inbox: a server folder the worker scans for new or changed PDFs.

Each PDF is generated with PyMuPDF; the scan runs as the worker runs it
(`inbox_scan`, recorded as a JobRun).
"""

from __future__ import annotations

import os
import time

import pymupdf
import pytest

from apps.core.models import JobRun
from apps.library.ingest.sync import source_sync
from apps.library.models import Document, Source
from apps.library.search import search
from apps.library.tasks import inbox_scan, sources_sync

pytestmark = pytest.mark.django_db

LONG_AGO = time.time() - 3600


def paper(
    title: str,
    *,
    body: str = "Soil nitrogen and crop yield.",
    author: str = "",
    highlight: str = "",
) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text(
        (72, 100), f"{title}\n\n{body}\n\ndoi:10.5555/{title.split()[0].lower()}.1", fontsize=11
    )
    if highlight:
        page.add_highlight_annot(page.search_for(highlight, quads=True)).update()
    doc.set_metadata({"title": title, "author": author})
    data = doc.tobytes()
    doc.close()
    return data


def drop(vault, name: str, data: bytes, *, mtime: float | None = LONG_AGO):
    path = vault.write_bytes(name, data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def inbox(owner, vault, make_source):
    return make_source(owner, vault, name="Papers inbox", kind=Source.Kind.INBOX, cloud="allowed")


def last_run(job: str) -> JobRun:
    return JobRun.objects.filter(job=job).latest("started_at")


def test_a_scan_ingests_finished_pdfs_and_logs_each_paper(inbox, vault, owner):
    drop(
        vault, "Nitrogen budgets.pdf", paper("Nitrogen budgets in small farms", author="Ana Souza")
    )
    drop(vault, "~$Nitrogen budgets.pdf", b"lock file")
    drop(vault, ".partial.pdf", b"%PDF-1.7 hidden")
    drop(vault, "download.pdf.part", b"%PDF-1.7 partial")
    drop(vault, "notes.md", b"# not a pdf")
    drop(vault, "copying.pdf", paper("Still copying"), mtime=None)  # modified just now
    inbox_scan()
    run = last_run("inbox_scan")
    assert run.outcome == JobRun.Outcome.OK
    assert (
        "read 1 new: “Nitrogen budgets in small farms” (Ana Souza, doi:10.5555/nitrogen.1)"
        in run.summary
    )
    assert "1 still being written" in run.summary
    assert list(Document.objects.values_list("title", flat=True)) == [
        "Nitrogen budgets in small farms"
    ]


def test_an_unchanged_inbox_costs_nothing(inbox, vault, embedder):
    drop(vault, "a.pdf", paper("Alpha study"))
    source_sync(source=inbox, embedder=embedder)
    again = source_sync(source=inbox, embedder=embedder)
    assert (again.chunks_embedded, again.rows_written, again.unchanged) == (0, 0, 1)


def test_new_highlights_replace_the_old_entry(inbox, vault, owner):
    drop(vault, "a.pdf", paper("Alpha study", body="Cover crops reduce erosion."))
    inbox_scan()
    first = Document.objects.get()
    drop(
        vault,
        "a.pdf",
        paper("Alpha study", body="Cover crops reduce erosion.", highlight="Cover crops"),
    )
    inbox_scan()
    (document,) = Document.objects.all()
    assert document.pk == first.pk
    hits = search(user=owner, query="cover crops erosion", limit=5).results
    assert any(hit.annotation == "highlight" for hit in hits)


def test_removing_a_file_from_the_inbox_keeps_its_library_entry(inbox, vault):
    path = drop(vault, "a.pdf", paper("Alpha study"))
    inbox_scan()
    path.unlink()
    inbox_scan()
    assert Document.objects.get().title == "Alpha study"
    assert last_run("inbox_scan").outcome == JobRun.Outcome.OK


def test_a_broken_pdf_is_recorded_and_the_scan_goes_on(inbox, vault):
    drop(vault, "broken.pdf", b"%PDF-1.7 this is not really a pdf")
    drop(vault, "good.pdf", paper("Good paper"))
    inbox_scan()
    broken = Document.objects.get(status=Document.Status.FAILED)
    assert broken.error
    assert Document.objects.get(status=Document.Status.READY).title == "Good paper"
    run = last_run("inbox_scan")
    assert (
        run.outcome == JobRun.Outcome.OK
        and "1 could not be read" in run.summary
        and "broken.pdf" in run.summary
    )


def test_a_missing_inbox_fails_its_job_with_the_reason_and_other_jobs_still_run(
    inbox, vault, owner, make_vault, make_source
):
    notes = make_vault("notes")
    notes.write("todo.md", "# Todo\n\nFix the gate.\n")
    make_source(owner, notes, name="Notes")
    os.rename(vault.root, vault.root.with_name("gone"))
    with pytest.raises(Exception, match="does not exist"):
        inbox_scan.call_local()
    run = last_run("inbox_scan")
    assert run.outcome == JobRun.Outcome.ERROR and "Papers inbox" in run.summary
    assert "does not exist" in run.summary
    sources_sync()
    assert last_run("sources_sync").outcome == JobRun.Outcome.OK
    assert Document.objects.filter(title="Todo").exists()
