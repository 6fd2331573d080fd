"""The Add page: one way to upload with and without JavaScript, where a waiting
file stands in the worker's queue, and what a failed file offers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from apps.core.heartbeat import beat
from apps.core.models import JobRun, Notice
from apps.library.models import Document, Source
from apps.library.services.adding import upload_add
from apps.library.tasks import ingest_task
from apps.library.worker_queue import ordinal
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db


def pending(owner, name: str, text: str = "") -> Document:
    added = upload_add(owner=owner, name=name, data=(text or f"# {name}\n\nSome words.\n").encode())
    assert added.document is not None, added.error
    return added.document


def reading(document: Document) -> JobRun:
    """The worker has started on `document` (as on_demand_job records it)."""
    Document.objects.filter(pk=document.pk).update(status=Document.Status.PARSING)
    return JobRun.objects.create(job="library_ingest", detail={"args": [str(document.pk)]})


def status_html(client: Client, document: Document) -> str:
    response = client.get(f"/library/doc/{document.pk}/status/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


class TestOneWayToUpload:
    def test_the_plain_form_without_javascript_gets_the_whole_page_back(self, owner):
        response = signed_in(owner).post(
            "/library/add/upload/",
            {"files": [SimpleUploadedFile("soup.md", b"# Soup\n\nLeek and potato.\n")]},
        )
        html = response.content.decode()
        assert response.status_code == 200
        assert "<h1>Add to the library</h1>" in html
        assert 'data-name="soup.md"' in html
        assert 'data-status="pending"' in html
        assert Document.objects.filter(path="soup.md", source__owner=owner).exists()

    def test_the_upload_script_gets_just_the_files_row(self, owner):
        response = signed_in(owner).post(
            "/library/add/upload/",
            {"files": [SimpleUploadedFile("soup.md", b"# Soup\n\nLeek and potato.\n")]},
            HTTP_HX_REQUEST="true",
        )
        html = response.content.decode().strip()
        assert html.startswith(
            '<li class="add-result" data-testid="add-result" data-name="soup.md"'
        )
        assert "<html" not in html

    def test_an_empty_post_says_to_choose_files_instead_of_failing_silently(self, owner):
        response = signed_in(owner).post("/library/add/upload/", {})
        assert response.status_code == 400
        assert "No file was chosen" in response.content.decode()

    def test_an_empty_file_is_refused_beside_its_name(self, owner):
        response = signed_in(owner).post(
            "/library/add/upload/",
            {"files": [SimpleUploadedFile("blank.txt", b"")]},
            HTTP_HX_REQUEST="true",
        )
        html = response.content.decode()
        assert 'data-name="blank.txt"' in html
        assert "was not added: empty file" in html
        assert not Document.objects.filter(path="blank.txt").exists()


class TestQueuePlace:
    @pytest.fixture(autouse=True)
    def worker_alive(self):
        beat()  # the worker's heartbeat: the header says it runs

    def test_a_waiting_file_says_where_it_is_in_line_and_what_the_worker_reads(self, owner):
        first = pending(owner, "report.md")
        pending(owner, "second.md")
        third = pending(owner, "third.md")
        reading(first)

        html = status_html(signed_in(owner), third)
        assert "2nd in line; the worker is reading “report.md”." in html

    def test_the_next_file_with_the_worker_idle_is_next_in_line(self, owner):
        document = pending(owner, "only.md")
        assert "Next in line; the worker will start on it in a moment." in status_html(
            signed_in(owner), document
        )

    def test_someone_elses_file_being_read_is_not_named(self, owner, member):
        theirs = pending(member, "medical-results.md")
        reading(theirs)
        mine = pending(owner, "mine.md")

        html = status_html(signed_in(owner), mine)
        assert "the worker is reading someone else’s file" in html
        assert "medical-results" not in html

    def test_other_work_is_named_by_its_title(self, owner):
        JobRun.objects.create(job="sources_sync")
        mine = pending(owner, "mine.md")
        assert "the worker is syncing your notes" in status_html(signed_in(owner), mine)

    def test_a_file_waiting_long_with_the_worker_idle_says_to_check_the_worker(self, owner):
        mine = pending(owner, "mine.md")
        Document.objects.filter(pk=mine.pk).update(updated_at=timezone.now() - timedelta(minutes=5))
        html = status_html(signed_in(owner), mine)
        assert "the worker has not started anything for a while" in html
        assert "check that the worker is running" in html

    def test_ordinals_read_as_english(self):
        assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 103)] == [
            "1st",
            "2nd",
            "3rd",
            "4th",
            "11th",
            "12th",
            "13th",
            "21st",
            "22nd",
            "103rd",
        ]


class TestFailedFile:
    def failed(self, owner) -> Document:
        document = pending(owner, "scan.md")
        Document.objects.filter(pk=document.pk).update(
            status=Document.Status.FAILED, error="the PDF is encrypted"
        )
        return document

    def test_it_says_why_and_offers_try_again_and_remove_to_its_owner(self, owner):
        document = self.failed(owner)
        html = status_html(signed_in(owner), document)
        assert "the PDF is encrypted" in html
        assert 'data-testid="retry"' in html
        assert f'href="/library/doc/{document.pk}/remove/"' in html

    def test_try_again_queues_it_and_answers_with_its_new_status(self, owner):
        document = self.failed(owner)
        response = signed_in(owner).post(
            f"/library/doc/{document.pk}/reprocess/", HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 200
        assert 'data-status="pending"' in response.content.decode()
        document.refresh_from_db()
        assert (document.status, document.error) == (Document.Status.PENDING, "")

    def test_nobody_else_can_try_it_again(self, owner, member):
        document = self.failed(owner)
        Source.objects.filter(pk=document.source_id).update(sharing=Source.Sharing.HOUSEHOLD)
        html = status_html(signed_in(member), document)
        assert 'data-testid="retry"' not in html
        response = signed_in(member).post(
            f"/library/doc/{document.pk}/reprocess/", HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 404
        document.refresh_from_db()
        assert document.status == Document.Status.FAILED


class TestNoticesWhenIndexed:
    def test_the_owner_hears_that_their_file_is_ready(self, owner, member):
        # Named as they added it, not by the heading inside it.
        document = pending(owner, "soup.md", "# Leek and potato\n\nBlend it smooth.\n")
        ingest_task(document.pk, user_id=owner.pk, notify=True)

        notice = Notice.objects.get()
        assert notice.user == owner
        assert notice.text == "soup.md is ready to search."
        assert notice.level == Notice.Level.OK
        assert notice.url == f"/library/doc/{document.pk}/"

    def test_the_owner_hears_why_a_file_could_not_be_read(self, owner):
        added = upload_add(owner=owner, name="broken.pdf", data=b"%PDF-1.4\n%broken\n" + b"x" * 64)
        ingest_task(added.document.pk, user_id=owner.pk, notify=True)

        notice = Notice.objects.get(user=owner)
        assert notice.level == Notice.Level.ERROR
        assert notice.text.startswith("Could not read broken.pdf: ")
        assert len(notice.text) > len("Could not read broken.pdf: ")

    def test_a_sync_or_collection_reprocess_sends_no_notice(self, owner):
        document = pending(owner, "soup.md")
        ingest_task(document.pk)
        assert not Notice.objects.exists()
