"""End to end: the Add page, notices and the PDF viewer in a real Chromium
against a real daphne (and, where a file must be indexed, a real Huey consumer).

- choosing files uploads each with its own progress bar, then its status
  follows the worker to "ready"; the Upload button the old page had (which
  posted an empty form after the files had gone) is not there to press;
- a file waiting for the worker says where it is in line and what the worker
  is reading; a bad file is refused beside its name without being sent;
- the owner gets a toast on whatever page they are on when the file is ready;
- the document page draws the PDF with PDF.js and a citation chip opens it at
  the cited page, with the file's highlight drawn there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest

from apps.chats.models import Chat, Message
from apps.core.heartbeat import beat
from apps.core.models import JobRun, Notice
from apps.library.models import Chunk, Document
from apps.library.services.adding import upload_add
from apps.library.services.documents import document_ingest
from tests.e2e.conftest import screenshot
from tests.support.browser import collect_errors, sign_in
from tests.support.processes import daphne_server, huey_consumer

pytestmark = pytest.mark.e2e

WORKER_TIMEOUT = 60  # seconds: the worker parses and embeds with the real model
PHONE = {"width": 390, "height": 844}


@dataclass
class Stack:
    url: str
    worker: object


@pytest.fixture
def live(transactional_db):
    """daphne enqueuing into the real queue, and a Huey consumer beside it."""
    with huey_consumer() as worker, daphne_server(JARVIS_TEST_HUEY_IMMEDIATE="0") as url:
        yield Stack(url=url, worker=worker)


@pytest.fixture
def no_worker(transactional_db):
    """daphne enqueuing into the real queue, and no consumer: files wait."""
    with daphne_server(JARVIS_TEST_HUEY_IMMEDIATE="0", JARVIS_UPLOAD_MAX_MB="1") as url:
        yield url


def note(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_choosing_files_uploads_each_with_progress_and_its_status_follows_the_worker(
    page, live, owner, tmp_path
):
    errors = collect_errors(page)
    posts: list[tuple[str, int]] = []
    page.on(
        "response",
        lambda r: r.request.method == "POST" and posts.append((r.url, r.status)),
    )
    sign_in(page, live.url, "olivia")
    page.goto(f"{live.url}/library/add/")
    # One way to upload: with the script running there is no Upload button left to press.
    assert not page.get_by_role("button", name="Upload").is_visible()
    page.evaluate(
        """() => { window.progressSeen = [];
        new MutationObserver(() => document.querySelectorAll('progress.upload-progress')
          .forEach((bar) => window.progressSeen.push(bar.value)))
          .observe(document.getElementById('add-results'),
                   { subtree: true, childList: true, attributes: true, characterData: true }); }"""
    )

    page.set_input_files(
        "input[name=files]",
        [
            note(tmp_path, "bread.md", "# Bread\n\nRye sourdough wants a warm kitchen.\n"),
            note(tmp_path, "soup.md", "# Soup\n\nLeek and potato, blended smooth.\n"),
        ],
    )
    rows = page.locator("#add-results [data-testid=add-result]")
    rows.nth(1).wait_for()
    for name in ("bread.md", "soup.md"):
        status = page.locator(f"#add-results [data-name='{name}'] [data-testid=doc-status]")
        status.and_(page.locator("[data-status=ready], [data-status=failed]")).wait_for(
            timeout=WORKER_TIMEOUT * 1000
        )
        assert status.get_attribute("data-status") == "ready", status.inner_text()
        assert "ready to search" in status.inner_text()
    # Each file had its own request and its own bar, which reached the end.
    uploads = [p for p in posts if p[0].endswith("/library/add/upload/")]
    assert uploads == [(f"{live.url}/library/add/upload/", 200)] * 2
    assert 100 in page.evaluate("window.progressSeen")
    screenshot(page, "add-page-done")
    page.set_viewport_size(PHONE)
    screenshot(page, "add-page-done-phone")
    assert errors == []


def test_a_waiting_file_says_where_it_is_in_line_and_a_bad_one_is_refused_beside_it(
    page, no_worker, owner, member, tmp_path
):
    errors = collect_errors(page)
    # The worker is alive (its heartbeat) and busy with a file of someone
    # else's: its name is not told.
    beat()
    theirs = upload_add(owner=member, name="max-medical.md", data=b"# Results\n\nprivate\n")
    JobRun.objects.create(job="library_ingest", detail={"args": [str(theirs.document.pk)]})
    Document.objects.filter(pk=theirs.document.pk).update(status=Document.Status.PARSING)

    sign_in(page, no_worker, "olivia")
    page.goto(f"{no_worker}/library/add/")
    page.set_input_files(
        "input[name=files]",
        [
            note(tmp_path, "first.md", "# First\n\nOne.\n"),
            note(tmp_path, "second.md", "# Second\n\nTwo.\n"),
            note(tmp_path, "empty.md", ""),
            note(tmp_path, "huge.txt", "x" * (1024 * 1024 + 10)),
            note(tmp_path, "tool.exe", "MZ not a document"),
            # No extension: the server types it by its bytes (a web page).
            note(tmp_path, "article", "<!doctype html><title>Jam</title><p>Damson jam.</p>"),
        ],
    )
    second = page.locator("#add-results [data-name='second.md'] [data-testid=queue-place]")
    second.wait_for()
    assert second.inner_text() == "2nd in line; the worker is reading someone else’s file.", (
        second.inner_text()
    )
    first = page.locator("#add-results [data-name='first.md'] [data-testid=queue-place]")
    assert first.inner_text().startswith("Next in line; ")
    assert "max-medical" not in page.content()

    def refusal(name: str) -> str:
        row = page.locator(f"#add-results [data-name='{name}']")
        assert row.get_attribute("role") == "alert"
        return row.inner_text()

    assert "it is empty" in refusal("empty.md")
    assert "larger than the 1 MB limit" in refusal("huge.txt")
    assert ".exe files are not something Jarvis can read" in refusal("tool.exe")
    page.locator("#add-results [data-name='article'] [data-testid=doc-status]").wait_for()
    assert set(Document.objects.filter(source__owner=owner).values_list("path", flat=True)) == {
        "first.md",
        "second.md",
        "article",
    }
    screenshot(page, "add-page-waiting")
    page.set_viewport_size(PHONE)
    screenshot(page, "add-page-waiting-phone")
    assert errors == []


def test_without_javascript_the_plain_form_uploads(browser, no_worker, owner, tmp_path):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    sign_in(page, no_worker, "olivia")
    page.goto(f"{no_worker}/library/add/")
    page.set_input_files("input[name=files]", note(tmp_path, "plain.md", "# Plain\n\nForm.\n"))
    page.get_by_role("button", name="Upload").click()
    row = page.locator("#add-results [data-name='plain.md'] [data-testid=doc-status]")
    assert row.get_attribute("data-status") == "pending"
    assert Document.objects.filter(path="plain.md", source__owner=owner).exists()
    context.close()


def test_the_owner_gets_a_toast_on_another_page_when_their_file_is_ready(
    page, live, owner, tmp_path
):
    errors = collect_errors(page)
    sign_in(page, live.url, "olivia")
    page.goto(f"{live.url}/library/add/")
    page.set_input_files("input[name=files]", note(tmp_path, "jam.md", "# Jam\n\nDamson.\n"))
    page.locator("#add-results [data-name='jam.md'] [data-testid=doc-status]").wait_for()
    page.goto(f"{live.url}/chat/")  # the toast finds them wherever they are

    toast = page.locator("[data-testid=toast]", has_text="jam.md is ready to search.")
    toast.wait_for(timeout=WORKER_TIMEOUT * 1000)
    toast.hover()  # holds it: a toast that is not a failure goes by itself after a few seconds
    assert (
        toast.get_by_role("link", name="Open it").get_attribute("href").startswith("/library/doc/")
    )
    screenshot(page, "toast")
    page.set_viewport_size(PHONE)
    screenshot(page, "toast-phone")

    toast.get_by_role("button").click()
    toast.wait_for(state="detached")
    assert Notice.objects.get(user=owner).dismissed_at is not None
    page.reload()
    page.locator("#live-status[data-state=live]").wait_for()
    page.wait_for_timeout(1500)
    assert page.locator("[data-testid=toast]").count() == 0
    assert errors == []


HIGHLIGHT = "quokka migration peaked"


def three_page_pdf() -> bytes:
    pdf = pymupdf.open()
    for number, text in enumerate(
        [
            "Field notes, spring. The wombat burrows were mapped along the creek.",
            "Field notes, summer. Nothing of note happened on the plateau.",
            f"Field notes, autumn. The {HIGHLIGHT} in late autumn across the plateau.",
        ],
        start=1,
    ):
        sheet = pdf.new_page()
        sheet.insert_text((72, 100), f"Page {number}. {text}", fontsize=11)
    autumn = pdf[2]
    autumn.add_highlight_annot(autumn.search_for(HIGHLIGHT, quads=True)).update()
    return pdf.tobytes()


def yellow_pixels(page) -> int:
    return page.evaluate(
        """() => { const c = document.querySelector('[data-testid=pdf-canvas]');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] > 200 && d[i+1] > 200 && d[i+2] < 120) n++;
        return n; }"""
    )


def test_a_citation_chip_opens_the_pdf_viewer_at_the_cited_page(
    page, live_server_url, owner, member
):
    errors = collect_errors(page)
    document = upload_add(owner=owner, name="field-notes.pdf", data=three_page_pdf()).document
    document = document_ingest(document=document)
    assert document.status == Document.Status.READY, document.error
    cited = Chunk.objects.filter(document=document, page=3, annotation="").first()
    assert cited is not None
    chat = Chat.objects.create(owner=owner, title="Quokkas")
    Message.objects.create(chat=chat, role=Message.Role.USER, text="When did the quokkas move?")
    Message.objects.create(
        chat=chat,
        role=Message.Role.ASSISTANT,
        text="Their migration peaked in late autumn [1].",
        citations=[
            {
                "n": 1,
                "document_id": document.pk,
                "chunk_id": cited.pk,
                "title": "field-notes.pdf",
                "path": "field-notes.pdf",
                "date": "",
                "is_latest": True,
                "superseded_by": "",
            }
        ],
    )

    sign_in(page, live_server_url, "olivia")
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    page.locator("a.cite[data-cite='1']").click()
    page.wait_for_url(f"**/library/doc/{document.pk}/#chunk-{cited.pk}")
    viewer = page.locator("[data-testid=pdf-viewer]")
    viewer.and_(page.locator("[data-state=ready]")).wait_for()

    assert viewer.get_attribute("data-page") == "3"
    assert page.locator("[data-testid=pdf-page-number]").input_value() == "3"
    assert page.locator("[data-testid=pdf-page-count]").inner_text() == "3"
    assert HIGHLIGHT in viewer.locator(".textLayer").inner_text()
    # The file's own highlight is drawn over the cited words (PyMuPDF's default yellow).
    assert yellow_pixels(page) > 500
    box = viewer.bounding_box()
    assert box is not None and box["y"] < 200, box  # scrolled to the viewer, not the text
    screenshot(page, "pdf-viewer-cited-page")

    # Previous goes to page 2, which has no highlight; the page number follows.
    page.get_by_role("button", name="Previous page").click()
    viewer.and_(page.locator("[data-page='2'][data-state=ready]")).wait_for()
    assert "Nothing of note" in viewer.locator(".textLayer").inner_text()
    assert yellow_pixels(page) == 0

    page.set_viewport_size(PHONE)
    page.goto(f"{live_server_url}/library/doc/{document.pk}/?page=1")
    viewer.and_(page.locator("[data-page='1'][data-state=ready]")).wait_for()
    screenshot(page, "pdf-viewer-phone")
    assert errors == []

    # For anyone else the page and the file the viewer loads do not exist.
    other = page.context.browser.new_context()
    stranger = other.new_page()
    sign_in(stranger, live_server_url, "max")
    for path in (f"/library/doc/{document.pk}/", f"/library/doc/{document.pk}/original/"):
        assert stranger.request.get(f"{live_server_url}{path}").status == 404
    other.close()
