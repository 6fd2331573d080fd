"""What a household member reads on the Jobs page, a document's page and the
tab title: sentences, not code names; one 24-hour clock in the household's time
zone; counts that agree with their nouns; a private-folder note that says it
is private. Each test reads the page a person would open."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pymupdf
import pytest

from apps.core.models import JobRun
from apps.library.ingest.sync import source_sync
from apps.library.models import Document, Source
from apps.library.services.adding import upload_add
from apps.library.tasks import ingest_queue, sources_sync
from tests.support.fixtures import signed_in


def job_cells(html: str) -> list[str]:
    """The text of the Recent runs table's "What" cells, tags stripped."""
    cells = re.findall(r'<td data-testid="job-title"[^>]*>(.*?)</td>', html, re.S)
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in cells]


def add_and_read(owner, name: str, data: bytes, capture) -> None:
    """Add a file as the Add page does and let the worker read it (tasks run
    inline in tests)."""
    with capture(execute=True):
        added = upload_add(owner=owner, name=name, data=data)
        ingest_queue(added.document)


def encrypted_pdf() -> bytes:
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "The door code is 4711.")
    return document.tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="secret"
    )


def test_a_file_that_cannot_be_read_is_a_failed_run_named_after_the_file(
    owner, django_capture_on_commit_callbacks
):
    add_and_read(owner, "encrypted.pdf", encrypted_pdf(), django_capture_on_commit_callbacks)
    assert Document.objects.get(path="encrypted.pdf").status == Document.Status.FAILED
    run = JobRun.objects.get(job="library_ingest")
    assert run.outcome == JobRun.Outcome.ERROR  # never an "ok" badge for a failure
    html = signed_in(owner).get("/jobs/").content.decode()
    assert job_cells(html) == ["Reading encrypted.pdf"]
    assert 'badge--danger">failed<' in html and 'badge--ok"' not in html
    assert "Could not read" in run.summary


def test_a_readable_upload_is_a_finished_run_with_its_passages_counted(
    owner, django_capture_on_commit_callbacks
):
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "Rye starter: feed it daily.")
    add_and_read(owner, "rye.pdf", document.tobytes(), django_capture_on_commit_callbacks)
    run = JobRun.objects.get(job="library_ingest")
    assert run.outcome == JobRun.Outcome.OK
    assert run.summary == "Indexed “rye”: 1 passage."
    html = signed_in(owner).get("/jobs/").content.decode()
    assert job_cells(html) == ["Reading rye.pdf"] and 'badge--ok">done<' in html
    assert "library_ingest" not in re.sub(r'title="[^"]*"', "", html)


def test_scheduled_work_reads_as_a_sentence_for_an_admin(admin, vault, make_source):
    make_source(admin, vault)
    sources_sync()
    html = signed_in(admin).get("/jobs/").content.decode()
    assert job_cells(html) == ["Syncing your notes"]
    assert "<strong" in html and ">Syncing your notes</strong>" in html  # the schedule table
    assert "<code>sources_sync</code>" not in html


def test_times_are_on_a_24_hour_clock_in_the_households_time_zone(owner, settings):
    settings.TIME_ZONE = "Europe/Berlin"
    JobRun.objects.create(
        job="library_ingest",
        user=owner,
        started_at=datetime(2026, 12, 1, 13, 5, 42, tzinfo=UTC),
        finished_at=datetime(2026, 12, 1, 13, 5, 50, tzinfo=UTC),
        outcome=JobRun.Outcome.OK,
        detail={"subject": "report.pdf"},
    )
    html = signed_in(owner).get("/jobs/").content.decode()
    assert "2026-12-01 14:05" in html  # 13:05 UTC is 14:05 in Berlin
    assert "p.m." not in html and "2:05" not in html
    assert 'data-time-zone="Europe/Berlin"' in html  # what the drafts editor's clock reads


class TestDocumentPage:
    @pytest.fixture
    def shared_vault(self, owner, vault, make_source, embedder) -> Source:
        vault.write("home/boiler.md", "# Boiler\n\nServiced in March.\n")
        vault.write("private/diary.md", "# Diary\n\nThe zebracorn secret is kept here.\n")
        source = make_source(owner, vault, sharing=Source.Sharing.HOUSEHOLD)
        source_sync(source=source, embedder=embedder)
        return source

    def test_a_private_folder_note_says_it_is_private_to_its_owner(self, owner, shared_vault):
        diary = Document.objects.get(path="private/diary.md")
        html = signed_in(owner).get(f"/library/doc/{diary.pk}/").content.decode()
        sharing = re.search(r'<dd data-testid="sharing">(.*?)</dd>', html, re.S).group(1)
        assert sharing.startswith(f"Private to {owner.name}")
        assert "household" not in sharing.lower()

    def test_a_shared_note_says_who_shares_it_and_counts_its_passage(self, owner, shared_vault):
        boiler = Document.objects.get(path="home/boiler.md")
        html = signed_in(owner).get(f"/library/doc/{boiler.pk}/").content.decode()
        sharing = re.search(r'<dd data-testid="sharing">(.*?)</dd>', html, re.S).group(1)
        assert sharing.startswith("The household")
        assert "· 1 passage</dd>" in html
        assert "<title>Boiler · Library · Jarvis</title>" in html

    def test_an_undated_note_says_so_once(self, owner, shared_vault):
        boiler = Document.objects.get(path="home/boiler.md")
        html = signed_in(owner).get(f"/library/doc/{boiler.pk}/").content.decode()
        assert "file modified time" not in html
        assert "no date" in html


def test_each_page_has_its_own_title(owner):
    from apps.chats.models import Chat

    client = signed_in(owner)
    titles = {
        "/library/": "Library · Jarvis",
        "/jobs/": "Jobs · Jarvis",
        "/drafts/": "Drafts · Jarvis",
        "/chat/": "New chat · Jarvis",
    }
    for url, title in titles.items():
        assert f"<title>{title}</title>" in client.get(url).content.decode(), url
    chat = Chat.objects.create(owner=owner, title="Boiler service")
    html = client.get(f"/chat/{chat.pk}/").content.decode()
    assert "<title>Chat: Boiler service · Jarvis</title>" in html
