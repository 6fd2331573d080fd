"""End to end: the library through a real browser, a real daphne and a real
Huey consumer on the test database.

The web process here is not in Huey's immediate mode: an upload or a "Sync
now" click enqueues into the SQLite queue, and the consumer beside it does
the work (parsing, embedding with the real model), exactly as in production.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest

from apps.core.models import JobRun
from apps.library.ingest.sync import source_sync
from apps.library.models import Document, DocumentFile, Source
from apps.library.services.sources import source_register
from tests.e2e.conftest import screenshot
from tests.support.browser import sign_in
from tests.support.processes import daphne_server, huey_consumer, wait_until

pytestmark = pytest.mark.e2e

WORKER_TIMEOUT = 60  # seconds: the worker parses and embeds with the real model

HIGHLIGHTED = "quokka migration peaked"
COMMENT = "compare with the plateau survey"

SECRET = "Marker zebracorn-4417 lives in the private note about the quince orchard."
SHARED = "The household shopping plan mentions oat milk and the quince orchard."


class Operator:
    """Registers folders the way the CLI operator does (every permission)."""

    def has_perm(self, perm: str) -> bool:
        return True


@dataclass
class Stack:
    url: str
    worker: object  # the consumer's Popen


@pytest.fixture
def vaults_root(tmp_path, settings) -> Path:
    root = tmp_path / "vaults"
    root.mkdir()
    settings.VAULTS_ROOT = root
    return root


@pytest.fixture
def live(transactional_db, vaults_root):
    """daphne (enqueuing into the real queue) and a Huey consumer beside it."""
    env = {"JARVIS_VAULTS_ROOT": str(vaults_root)}
    with (
        huey_consumer(**env) as worker,
        daphne_server(JARVIS_TEST_HUEY_IMMEDIATE="0", **env) as url,
    ):
        # The worker syncs every folder as it starts; let that finish first, so
        # a test's own sync of a folder it registers never races it.
        wait_until(
            lambda: JobRun.objects.filter(job="sources_sync", outcome="ok").exists(),
            timeout=WORKER_TIMEOUT,
            process=worker,
        )
        yield Stack(url=url, worker=worker)


def search_library(page, base_url: str, query: str) -> None:
    """Type into the library's search box and wait for the live answer."""
    page.goto(f"{base_url}/library/")
    page.fill("#q", query)
    page.wait_for_selector("#results [data-testid=search-summary], #results .empty")


def register_vault(owner, vaults_root: Path, files: dict[str, str], **options) -> Source:
    folder = vaults_root / owner.username
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    source = source_register(
        actor=Operator(), owner=owner, name=f"{owner.username} notes", path=str(folder), **options
    )
    report = source_sync(source=source)
    assert report.failed == []
    return source


def doc(source: Source, path: str) -> Document:
    return DocumentFile.objects.get(source=source, path=path).document


def pdf_with_a_commented_highlight() -> bytes:
    pdf = pymupdf.open()
    first = pdf.new_page()
    first.insert_text(
        (72, 100),
        "Field notes, spring\nThe wombat burrows were mapped along the creek.",
        fontsize=11,
    )
    second = pdf.new_page()
    second.insert_text(
        (72, 100),
        f"Field notes, autumn\nThe {HIGHLIGHTED} in late autumn across the plateau.",
        fontsize=11,
    )
    annot = second.add_highlight_annot(second.search_for(HIGHLIGHTED, quads=True))
    annot.set_info(content=COMMENT)
    annot.update()
    return pdf.tobytes()


def test_an_uploaded_pdf_is_indexed_by_the_worker_and_its_highlight_is_found(
    page, live, owner, tmp_path
):
    upload = tmp_path / "field-notes.pdf"
    upload.write_bytes(pdf_with_a_commented_highlight())

    sign_in(page, live.url, "olivia")
    page.goto(f"{live.url}/library/add/")
    page.set_input_files("input[name=files]", str(upload))  # choosing is all it takes

    # The status flips live (htmx polling) once the consumer has indexed it.
    status = page.locator("#add-results [data-testid=doc-status]")
    status.and_(page.locator("[data-status=ready], [data-status=failed]")).wait_for(
        timeout=WORKER_TIMEOUT * 1000
    )
    assert status.get_attribute("data-status") == "ready", status.inner_text()
    ingests = JobRun.objects.filter(job="library_ingest")
    assert set(ingests.values_list("outcome", flat=True)) == {"ok"}

    search_library(page, live.url, HIGHLIGHTED)
    passages = page.locator("[data-testid=passage]")
    highlight = passages.filter(
        has_text="highlight · p.2"
    )  # the [HIGHLIGHT p.2] marker, as a badge
    assert highlight.count() == 1, passages.all_inner_texts()
    text = highlight.locator(".passage__text").inner_text()
    assert HIGHLIGHTED in text
    assert COMMENT in text
    assert highlight.locator(".badge--accent").inner_text() == "highlight · p.2"
    screenshot(page, "library-search")


def test_sync_now_adds_a_new_version_and_the_timeline_marks_the_old_one(
    page, live, owner, vaults_root
):
    source = register_vault(
        owner, vaults_root, {"plan_jun2026.md": "# Plan\n\nJune: learn the cello.\n"}
    )
    june = doc(source, "plan_jun2026.md")
    assert june.is_latest
    (vaults_root / owner.username / "plan_oct2026.md").write_text(
        "# Plan\n\nOctober: join the orchestra.\n", encoding="utf-8"
    )

    sign_in(page, live.url, "olivia")
    page.goto(f"{live.url}/library/collections/")
    page.locator(f"[data-testid=collection-{source.pk}]").get_by_role(
        "button", name="Sync now"
    ).click()
    page.wait_for_url(f"{live.url}/library/collections/")
    assert "Syncing in" in page.content()

    # Wait the way a person would: reload the library until the note is there.
    deadline = time.monotonic() + WORKER_TIMEOUT
    page.goto(f"{live.url}/library/")
    while "plan_oct2026.md" not in page.locator("#results").inner_text():
        assert time.monotonic() < deadline, "the October note never appeared"
        assert live.worker.poll() is None, "the consumer died"
        time.sleep(0.5)
        page.goto(f"{live.url}/library/")
    # The sync refreshes version families after writing the new note.
    runs = JobRun.objects.filter(job="library_reprocess").exclude(outcome="running")
    wait_until(runs.exists, timeout=WORKER_TIMEOUT, process=live.worker)
    run = runs.latest("started_at")
    assert run.outcome == "ok", run.error

    page.goto(f"{live.url}/library/doc/{june.pk}/")
    timeline = page.locator("[data-testid=timeline]")
    items = timeline.locator("li")
    assert items.count() == 2
    # Oldest first; each item names its own version in a link (or in bold on its own page).
    old, new = items.nth(0), items.nth(1)
    assert old.locator("strong").inner_text() == "plan_jun2026.md"
    assert old.get_by_text("(this page)").is_visible()
    assert new.locator("a").first.inner_text() == "plan_oct2026.md"
    assert (
        old.locator("[data-testid=superseded]")
        .inner_text()
        .startswith("replaced by plan_oct2026.md")
    )
    assert old.get_by_text("current", exact=True).count() == 0
    assert new.get_by_text("current", exact=True).is_visible()
    assert new.locator("[data-testid=superseded]").count() == 0
    assert page.get_by_text("older version", exact=True).is_visible()
    screenshot(page, "library-timeline")


def test_a_household_member_cannot_reach_a_private_folder_note(
    page, live, owner, member, vaults_root
):
    source = register_vault(
        owner,
        vaults_root,
        {"shopping.md": f"# Shopping\n\n{SHARED}\n", "private/diary.md": f"# Diary\n\n{SECRET}\n"},
        sharing=Source.Sharing.HOUSEHOLD,
    )
    diary, shopping = doc(source, "private/diary.md"), doc(source, "shopping.md")
    assert diary.status == shopping.status == Document.Status.READY

    sign_in(page, live.url, "max")

    response = page.goto(f"{live.url}/library/doc/{diary.pk}/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == "There is nothing here"
    assert "zebracorn" not in page.content()

    response = page.goto(f"{live.url}/library/doc/{shopping.pk}/")
    assert response.status == 200
    assert page.locator("[data-testid=doc-title]").inner_text() == "Shopping"
    assert "oat milk" in page.locator(".doc-main").inner_text()

    original = page.request.get(f"{live.url}/library/doc/{diary.pk}/original/")
    assert original.status == 404
    assert b"zebracorn" not in original.body()
    shared_original = page.request.get(f"{live.url}/library/doc/{shopping.pk}/original/")
    assert shared_original.status == 200
    assert b"oat milk" in shared_original.body()

    search_library(page, live.url, "zebracorn-4417 quince orchard")
    passages = page.locator("[data-testid=passage]").all_inner_texts()
    assert not [p for p in passages if "zebracorn" in p or "private/diary.md" in p]
    # The search did run over what the member may read: the shared note is there.
    assert any("oat milk" in p for p in passages), passages
    screenshot(page, "library-private-search")
