"""Adding to the library (uploads, web pages, arXiv papers), editing metadata,
removing, reprocessing — in the browser and through `kb`."""

import os
import shutil
from io import StringIO
from pathlib import Path

import pymupdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import transaction
from django.test import Client

from apps.library.index.tables import FTS_TABLE, emb_table, index_state, vec_table
from apps.library.ingest.sync import source_sync
from apps.library.models import Chunk, Document, Source
from apps.library.search import search
from apps.library.services.adding import upload_add
from apps.library.services.documents import document_remove
from tests.fakes.web import FakeWeb

ARTICLE = """<!doctype html><html><head><title>Composting at home</title>
<meta name="author" content="Rosa Green"></head><body>
<nav>Home · Shop · Login</nav>
<article><h1>Composting at home</h1>
<p>A compost heap needs greens and browns in roughly equal parts, turned every two weeks.
Greens are kitchen scraps and grass cuttings; browns are cardboard, dry leaves and straw.
Too many greens make a wet, smelly heap; too many browns make one that never warms up.</p>
<h2>Worms</h2><p>Tiger worms speed up a wormery; keep it out of frost and away from full sun,
feed them little and often, and drain the liquid from the sump every week or so.</p></article>
<footer>Cookie settings · Terms</footer></body></html>"""


class _RunningClient(Client):
    """A test client whose requests run the worker jobs they queue on commit
    (Huey runs tasks inline in tests), as the real worker would right after."""

    capture = None

    def request(self, **request):
        if self.capture is None:
            return super().request(**request)
        with self.capture(execute=True):
            return super().request(**request)


def signed_in(user) -> Client:
    client = _RunningClient()
    client.capture = _RunningClient.capture
    client.force_login(user)
    return client


def pdf_bytes(text: str = "A page about sourdough starters and rye flour.") -> bytes:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), text)
    return document.tobytes()


@pytest.fixture
def now(django_capture_on_commit_callbacks):
    """Requests made in this test run the worker jobs they queue."""
    _RunningClient.capture = django_capture_on_commit_callbacks
    yield
    _RunningClient.capture = None


@pytest.fixture
def web(settings):
    with FakeWeb() as server:
        settings.FETCH_ALLOW_HOSTS = [server.host_port]
        yield server


class TestUpload:
    def test_several_files_go_in_and_each_bad_one_gets_its_own_message(self, owner, settings, now):
        settings.UPLOAD_MAX_MB = 1
        files = [
            SimpleUploadedFile("bread.pdf", pdf_bytes(), content_type="application/pdf"),
            SimpleUploadedFile("notes.md", b"# Starter\n\nFeed it daily.\n"),
            SimpleUploadedFile("big.txt", b"x" * (1024 * 1024 + 1)),
            SimpleUploadedFile("setup.pdf", b"MZ\x90\x00" + b"\x00" * 200),
            SimpleUploadedFile("anim.gif", b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff"),
        ]
        response = signed_in(owner).post("/library/add/upload/", {"files": files})
        html = response.content.decode()
        assert response.status_code == 200
        assert "larger than the 1 MB limit" in html
        assert 'setup.pdf</strong> <span data-testid="add-error">was not added: named .pdf' in html
        assert 'anim.gif</strong> <span data-testid="add-error">was not added:' in html
        assert "GIF" in html
        uploads = Document.objects.filter(source__kind="uploads")
        assert {d.path for d in uploads} == {"bread.pdf", "notes.md"}
        assert {d.status for d in uploads} == {"ready"}
        assert search(user=owner, query="sourdough starter rye").results

    def test_a_file_is_typed_by_its_bytes(self, owner, now):
        signed_in(owner).post(
            "/library/add/upload/",
            {"files": [SimpleUploadedFile("article", ARTICLE.encode())]},
        )
        document = Document.objects.get(path="article")
        assert document.kind == "web"
        assert document.title == "Composting at home"

    def test_the_same_file_twice_is_not_added_twice(self, owner, now):
        client = signed_in(owner)
        for _ in range(2):
            response = client.post(
                "/library/add/upload/", {"files": [SimpleUploadedFile("a.md", b"# A\n\nsame\n")]}
            )
        assert "already in your library" in response.content.decode()
        assert Document.objects.filter(source__kind="uploads").count() == 1

    def test_no_files_is_a_clear_error(self, owner):
        response = signed_in(owner).post("/library/add/upload/", {})
        assert response.status_code == 400
        assert b"No file was chosen: choose one or more files first, then Upload." in (
            response.content
        )

    def test_uploads_are_private_to_their_owner(self, owner, member, now):
        signed_in(owner).post(
            "/library/add/upload/",
            {"files": [SimpleUploadedFile("m.md", b"# Medical\n\nBlood test results.\n")]},
        )
        document = Document.objects.get(path="m.md")
        assert signed_in(member).get(f"/library/doc/{document.pk}/").status_code == 404
        assert signed_in(member).get(f"/library/doc/{document.pk}/status/").status_code == 404


class TestWebPages:
    def test_a_page_is_fetched_extracted_and_indexed(self, owner, web, now):
        web.page("/compost", ARTICLE)
        response = signed_in(owner).post("/library/add/url/", {"url": web.url("/compost")})
        assert response.status_code == 200
        page = Document.objects.get(kind="web")
        assert (page.status, page.title) == ("ready", "Composting at home")
        assert page.site.startswith("127.0.0.1")
        assert page.fetched_at is not None
        text = " ".join(page.chunks.values_list("text", flat=True))
        assert "greens and browns" in text and "Cookie settings" not in text

    def test_adding_the_same_url_offers_a_refresh_that_makes_a_new_version(self, owner, web, now):
        web.page("/compost", ARTICLE)
        client = signed_in(owner)
        client.post("/library/add/url/", {"url": web.url("/compost")})
        again = client.post("/library/add/url/", {"url": web.url("/compost")}).content.decode()
        assert "already in your library" in again and "Fetch it again" in again
        assert Document.objects.filter(kind="web").count() == 1
        web.page("/compost", ARTICLE.replace("two weeks", "three weeks"))
        client.post("/library/add/url/", {"url": web.url("/compost"), "refresh": "1"})
        versions = Document.objects.filter(kind="web").order_by("pk")
        assert versions.count() == 2
        assert versions[0].family == versions[1].family
        assert [v.is_latest for v in versions] == [False, True]

    @pytest.mark.parametrize(
        "url,reason",
        [
            ("http://127.0.0.1:9/", "not a public address"),
            ("http://user:secret@example.com/", "user name or password"),
            ("http://127.0.0.1\\@example.com/", "backslash"),
            ("ftp://example.com/file", "http"),
            ("javascript:alert(1)", "http"),
        ],
    )
    def test_refused_urls_store_nothing(self, owner, url, reason):
        response = signed_in(owner).post("/library/add/url/", {"url": url})
        assert response.status_code == 400
        assert reason.lower() in response.content.decode().lower()
        assert not Document.objects.exists()

    def test_a_page_that_is_not_html_is_refused(self, owner, web):
        web.route("/photo", body=b"\x89PNG", content_type="image/png")
        response = signed_in(owner).post("/library/add/url/", {"url": web.url("/photo")})
        assert response.status_code == 400
        assert b"image/png" in response.content
        assert not Document.objects.exists()


class TestPapers:
    def test_an_arxiv_paper_arrives_with_its_metadata_and_full_text(self, owner, fake_arxiv, now):
        response = signed_in(owner).post(
            "/library/add/url/", {"url": "https://arxiv.org/abs/2401.12345"}
        )
        assert response.status_code == 200
        paper = Document.objects.get(kind="paper")
        assert paper.status == "ready"
        assert paper.title.startswith("Sparse Attention for Very Long Household Documents")
        assert paper.arxiv_id == "2401.12345" and paper.source.kind == "papers"
        assert paper.date_source == "published"
        assert paper.chunks.exists()

    def test_a_duplicate_asks_and_confirming_replaces_it_in_one_go(self, owner, fake_arxiv, now):
        client = signed_in(owner)
        client.post("/library/add/url/", {"url": "2401.12345"})
        first = Document.objects.get(kind="paper")
        asked = client.post("/library/add/url/", {"url": "arXiv:2401.12345v2"}).content.decode()
        assert "already in your library" in asked and "Replace it" in asked
        client.post("/library/add/url/", {"url": "arXiv:2401.12345v2", "replace": "1"})
        papers = Document.objects.filter(kind="paper")
        assert papers.count() == 1 and papers[0].pk != first.pk
        assert not Chunk.objects.filter(document_id=first.pk).exists()

    def test_an_unknown_paper_is_a_clear_not_found(self, owner, fake_arxiv):
        response = signed_in(owner).post("/library/add/url/", {"url": "2401.99999"})
        assert response.status_code == 400
        assert b"arXiv has no paper 2401.99999" in response.content
        assert not Document.objects.exists()

    def test_kb_add_uses_the_same_code_and_exits_non_zero_with_the_reason(
        self, owner, fake_arxiv, web
    ):
        out = StringIO()
        call_command("kb", "add", "--owner", "olivia", "2312.04567", stdout=out)
        assert "Embedding Drift in Personal Archives" in out.getvalue()
        with pytest.raises(CommandError, match="already in the library"):
            call_command(
                "kb",
                "add",
                "--owner",
                "olivia",
                "https://arxiv.org/abs/2312.04567",
                stdout=StringIO(),
            )
        with pytest.raises(CommandError, match="not a public address"):
            call_command(
                "kb", "add", "--owner", "olivia", "http://10.0.0.1/secret", stdout=StringIO()
            )
        web.page("/a", ARTICLE)
        call_command("kb", "add", "--owner", "olivia", web.url("/a"), stdout=StringIO())
        assert Document.objects.get(kind="web").status == "ready"


class TestEditing:
    @pytest.fixture
    def page(self, owner, web, now):
        web.page("/compost", ARTICLE)
        signed_in(owner).post("/library/add/url/", {"url": web.url("/compost")})
        return Document.objects.get(kind="web")

    def test_metadata_edits_change_no_vectors(self, owner, page):
        before = list(Chunk.objects.filter(document=page).values_list("id", "text_hash"))
        response = signed_in(owner).post(
            f"/library/doc/{page.pk}/edit/",
            {"title": "Compost notes", "authors": "R. Green", "doi": "10.1234/compost"},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 200 and b"Nothing was re-embedded" in response.content
        page.refresh_from_db()
        assert (page.title, page.authors, page.doi) == (
            "Compost notes",
            "R. Green",
            "10.1234/compost",
        )
        assert list(Chunk.objects.filter(document=page).values_list("id", "text_hash")) == before

    def test_two_tabs_saving_in_turn_both_succeed_and_the_last_wins(self, owner, page):
        first, second = signed_in(owner), signed_in(owner)
        assert first.post(f"/library/doc/{page.pk}/edit/", {"title": "Tab one"}).status_code == 302
        assert second.post(f"/library/doc/{page.pk}/edit/", {"title": "Tab two"}).status_code == 302
        page.refresh_from_db()
        assert page.title == "Tab two"

    def test_an_empty_title_is_refused_without_a_500(self, owner, page):
        response = signed_in(owner).post(
            f"/library/doc/{page.pk}/edit/", {"title": "  "}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 400 and b"cannot be empty" in response.content

    def test_reprocessing_keeps_a_persons_corrections(self, owner, page, now):
        client = signed_in(owner)
        client.post(f"/library/doc/{page.pk}/edit/", {"title": "My title"})
        client.post(f"/library/doc/{page.pk}/reprocess/")
        page.refresh_from_db()
        assert (page.status, page.title) == ("ready", "My title")

    def test_notes_are_read_only(self, owner, vault, make_source, embedder):
        vault.write("n.md", "# Note\n\nbody\n")
        source_sync(source=make_source(owner, vault), embedder=embedder)
        note = Document.objects.get(path="n.md")
        signed_in(owner).post(f"/library/doc/{note.pk}/edit/", {"title": "Renamed"})
        note.refresh_from_db()
        assert note.title == "Note"

    def test_others_cannot_edit(self, member, page):
        assert (
            signed_in(member).post(f"/library/doc/{page.pk}/edit/", {"title": "x"}).status_code
            == 404
        )


class TestRemoving:
    @pytest.fixture
    def spy(self, monkeypatch):
        """Records every attempt to delete a file or folder."""
        calls = []

        def record(name, original):
            def wrapper(*args, **kwargs):
                calls.append((name, args))
                return original(*args, **kwargs)

            return wrapper

        monkeypatch.setattr(os, "remove", record("os.remove", os.remove))
        monkeypatch.setattr(os, "unlink", record("os.unlink", os.unlink))
        monkeypatch.setattr(os, "rmdir", record("os.rmdir", os.rmdir))
        monkeypatch.setattr(shutil, "rmtree", record("shutil.rmtree", shutil.rmtree))
        monkeypatch.setattr(Path, "unlink", record("Path.unlink", Path.unlink))
        monkeypatch.setattr(Path, "rmdir", record("Path.rmdir", Path.rmdir))
        return calls

    def test_removing_deletes_index_rows_in_one_go_and_never_a_file(
        self, owner, vault, make_source, embedder, spy
    ):
        path = vault.write("old.md", "# Old\n\nThe old boiler manual.\n")
        source = make_source(owner, vault)
        source_sync(source=source, embedder=embedder)
        document = Document.objects.get(path="old.md")
        chunk_ids = list(document.chunks.values_list("id", flat=True))
        client = signed_in(owner)
        confirm = client.get(f"/library/doc/{document.pk}/remove/").content.decode()
        assert "Files on disk are never touched" in confirm
        assert client.post(f"/library/doc/{document.pk}/remove/").status_code == 302
        assert not Document.objects.filter(pk=document.pk).exists()
        from django.db import connection

        state = index_state()
        with connection.cursor() as cursor:
            for table, column in (
                (FTS_TABLE, "rowid"),
                (emb_table(state.generation), "chunk_id"),
                (vec_table(state.generation), "chunk_id"),
            ):
                marks = ",".join("%s" for _ in chunk_ids)
                cursor.execute(
                    f"SELECT count(*) FROM {table} WHERE {column} IN ({marks})", chunk_ids
                )
                assert cursor.fetchone()[0] == 0, table
        assert path.read_text().startswith("# Old")
        assert spy == []
        # The next sync leaves it out; restoring brings it back.
        source_sync(source=source, embedder=embedder)
        assert not Document.objects.filter(path="old.md").exists()
        client.post(f"/library/collections/{source.pk}/restore/", {"path": "old.md"})
        source_sync(source=source, embedder=embedder)
        assert Document.objects.filter(path="old.md").exists()

    def test_removing_an_upload_deletes_the_stored_copy_once_committed_and_nothing_else(
        self, owner, settings, django_capture_on_commit_callbacks, spy
    ):
        client = signed_in(owner)
        client.post(
            "/library/add/upload/", {"files": [SimpleUploadedFile("r.md", b"# R\n\nrecipe\n")]}
        )
        document = Document.objects.get(path="r.md")
        stored = Path(settings.DATA_DIR) / document.original
        assert stored.is_file()
        with django_capture_on_commit_callbacks(execute=False) as waiting:
            client.post(f"/library/doc/{document.pk}/remove/")
        assert not Document.objects.exists()
        assert stored.is_file() and spy == []  # nothing is deleted before the commit
        for callback in waiting:
            callback()
        assert not stored.exists() and not stored.parent.exists()
        touched = [Path(args[0]) for _name, args in spy]
        assert touched and all(p.is_relative_to(settings.UPLOADS_DIR) for p in touched)

    def test_a_removal_that_is_rolled_back_keeps_the_stored_copy(self, owner, settings):
        document = upload_add(owner=owner, name="r.md", data=b"# R\n\nrecipe\n").document
        pk, stored = document.pk, Path(settings.DATA_DIR) / document.original
        with pytest.raises(RuntimeError), transaction.atomic():
            document_remove(user=owner, document=document)
            raise RuntimeError("the request failed after the removal")
        assert stored.is_file() and Document.objects.filter(pk=pk).exists()

    def test_a_copy_another_document_still_refers_to_is_kept(
        self, owner, settings, django_capture_on_commit_callbacks
    ):
        first = upload_add(owner=owner, name="r.md", data=b"# R\n\nrecipe\n").document
        second = Document.objects.create(
            source=first.source, path="again.md", kind="note", original=first.original
        )
        stored = Path(settings.DATA_DIR) / first.original
        with django_capture_on_commit_callbacks(execute=True):
            document_remove(user=owner, document=first)
        assert stored.is_file()
        with django_capture_on_commit_callbacks(execute=True):
            document_remove(user=owner, document=second)
        assert not stored.exists()

    def test_others_cannot_remove(self, owner, member, vault, make_source, embedder):
        vault.write("s.md", "# S\n\nshared\n")
        source_sync(
            source=make_source(owner, vault, sharing=Source.Sharing.HOUSEHOLD), embedder=embedder
        )
        document = Document.objects.get(path="s.md")
        assert signed_in(member).post(f"/library/doc/{document.pk}/remove/").status_code == 404
        assert Document.objects.filter(pk=document.pk).exists()


def test_reprocessing_a_collection_retries_failed_documents(
    owner, vault, make_source, embedder, now
):
    vault.write_bytes("broken.md", b"\x00\x01binary")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    assert Document.objects.get(path="broken.md").status == "failed"
    vault.write("broken.md", "# Fixed\n\nnow text\n")
    signed_in(owner).post(f"/library/collections/{source.pk}/reprocess/", {"mode": "failed"})
    assert Document.objects.get(path="broken.md").status == "ready"


class TestKbSchemaAndDoctor:
    def test_schema_lists_keys_and_values_so_typos_show(self, owner, vault, make_source, embedder):
        vault.write("a.md", "---\ntype: job_application\nstatus: rejected\n---\n# A\n\nx\n")
        vault.write("b.md", "---\ntype: job_application\nstauts: rejected\n---\n# B\n\ny\n")
        source_sync(source=make_source(owner, vault), embedder=embedder)
        keys = StringIO()
        call_command("kb", "schema", stdout=keys)
        assert "x_stauts" in keys.getvalue() and "category" in keys.getvalue()
        values = StringIO()
        call_command("kb", "schema", "category", stdout=values)
        assert values.getvalue().split() == ["2", "job_application"]

    @pytest.mark.django_db(transaction=True)
    def test_doctor_finds_orphans_and_stuck_documents_and_fixes_them(
        self, owner, vault, make_source, embedder
    ):
        from datetime import timedelta

        from django.db import connection
        from django.utils import timezone

        vault.write("a.md", "# A\n\nalpha\n")
        source_sync(source=make_source(owner, vault), embedder=embedder)
        healthy = StringIO()
        call_command("kb", "doctor", stdout=healthy)
        assert "the library is healthy" in healthy.getvalue()
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (999999, 'ghost')")
        Document.objects.filter(path="a.md").update(status="parsing")
        Document.objects.filter(path="a.md").update(updated_at=timezone.now() - timedelta(hours=2))
        report = StringIO()
        with pytest.raises(CommandError, match="problem"):
            call_command("kb", "doctor", stdout=report)
        assert "keyword rows belong to no passage" in report.getvalue()
        assert "pending or parsing" in report.getvalue()
        fixed = StringIO()
        call_command("kb", "doctor", "--fix", stdout=fixed)
        assert "fixed:" in fixed.getvalue()
        assert Document.objects.get(path="a.md").status == "ready"  # re-queued and run
        call_command("kb", "doctor", stdout=StringIO())  # healthy again: no error

    def test_doctor_reports_a_missing_folder(self, owner, vault, make_source, embedder):
        source = make_source(owner, vault)
        Source.objects.filter(pk=source.pk).update(root_path="/nonexistent/vault")
        report = StringIO()
        with pytest.raises(CommandError):
            call_command("kb", "doctor", stdout=report)
        assert "is missing: /nonexistent/vault" in report.getvalue()
