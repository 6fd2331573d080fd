"""One status vocabulary (apps.library.status), read by every template that
shows a document's state: the library table, the add page's rows, the document
page and the live banner say the same words and offer the same actions."""

from __future__ import annotations

import datetime as dt

import pytest
from django.template.loader import render_to_string

from apps.library.models import Document
from apps.library.services.adding import upload_add
from apps.library.status import STATES, state_of
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db


def added(owner, name: str, **fields) -> Document:
    result = upload_add(owner=owner, name=name, data=f"# {name}\n\nWords.\n".encode())
    assert result.document is not None, result.error
    if fields:
        Document.objects.filter(pk=result.document.pk).update(**fields)
    return Document.objects.get(pk=result.document.pk)


def row_status(document: Document) -> str:
    """The status cell of one row as the owner sees it (the add page's and the table's)."""
    return render_to_string("library/_doc_status.html", {"document": document, "can_control": True})


class TestTheVocabulary:
    def test_every_status_has_one_word_and_a_failed_one_is_neither_a_version_nor_waiting(self):
        assert {s: STATES[s].word for s in Document.Status.values} == {
            "pending": "waiting",
            "parsing": "reading",
            "ready": "ready to search",
            "failed": "failed",
        }
        failed = STATES["failed"]
        assert not failed.is_version and not failed.waiting and not failed.in_flight
        assert [s for s, state in STATES.items() if state.is_version] == ["ready"]

    def test_an_unknown_status_never_reads_as_ready(self):
        assert state_of(Document(status="archived")).word == "waiting"


class TestTheRowsSayIt:
    def test_a_waiting_row_offers_cancel_and_not_try_again(self, owner):
        html = row_status(added(owner, "jam.md"))
        assert ">waiting<" in html and 'data-testid="cancel"' in html
        assert 'data-testid="retry"' not in html and "Try again" not in html

    def test_a_failed_row_offers_try_again_and_not_cancel(self, owner):
        html = row_status(added(owner, "scan.md", status="failed", error="the file is damaged"))
        assert ">failed<" in html and "the file is damaged" in html
        assert 'data-testid="retry"' in html and 'data-testid="cancel"' not in html
        assert "waiting" not in html

    def test_a_ready_row_offers_neither(self, owner):
        html = row_status(added(owner, "soup.md", status="ready"))
        assert ">ready to search<" in html
        assert 'data-testid="retry"' not in html and 'data-testid="cancel"' not in html

    def test_the_notes_table_gives_a_failed_note_no_latest_badge(self, owner):
        added(owner, "scan.md", status="failed", error="the file is damaged")
        html = signed_in(owner).get("/library/?kind=notes").content.decode()
        assert "the file is damaged" in html
        assert ">latest<" not in html and ">older<" not in html

    def test_the_live_banner_says_waiting_not_the_stored_value(self, owner):
        added(owner, "jam.md")
        html = signed_in(owner).get("/library/").content.decode()
        banner = html.split('data-testid="live-banner"')[1].split("</div>")[0]
        assert "(waiting)" in banner and "(pending)" not in banner


class TestDatesReadTheSame:
    def test_a_file_time_date_is_undated_in_papers_as_in_every_other_table(self, owner):
        # heat-pumps.pdf: its only date is the file's modified time, never shown.
        added(
            owner, "heat-pumps.md", status="ready", kind="pdf",
            effective_date=dt.date(2026, 3, 1), date_source=Document.DateSource.MTIME,
        )  # fmt: skip
        everything = signed_in(owner).get("/library/").content.decode()
        papers = signed_in(owner).get("/library/?kind=papers").content.decode()
        assert "heat-pumps" in papers
        assert "2026" not in papers.split('data-testid="library-table"')[1]
        assert "undated" in papers and "undated" in everything

    def test_undated_documents_sort_below_dated_ones_newest_first(self, owner):
        added(owner, "undated.md", status="ready")
        added(
            owner, "weak.md", status="ready", effective_date=dt.date(2030, 1, 1),
            date_source=Document.DateSource.MTIME,
        )  # fmt: skip
        added(
            owner, "old.md", status="ready", effective_date=dt.date(2019, 5, 1),
            date_source=Document.DateSource.FILENAME,
        )  # fmt: skip
        added(
            owner, "new.md", status="ready", effective_date=dt.date(2024, 5, 1),
            date_source=Document.DateSource.FILENAME,
        )  # fmt: skip
        table = signed_in(owner).get("/library/").content.decode()
        order = sorted(
            ["undated.md", "weak.md", "old.md", "new.md"], key=lambda name: table.index(name)
        )
        assert order[:2] == ["new.md", "old.md"]
        assert set(order[2:]) == {"undated.md", "weak.md"}
