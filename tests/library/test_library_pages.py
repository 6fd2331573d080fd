"""The library in the browser: listing, search, document page, original file,
collections, records. Every page hides what the viewer may not read (404)."""

import pytest
from django.test import Client

from apps.library.index.tables import index_state
from apps.library.ingest.sync import source_sync
from apps.library.models import Document, Source
from tests.support.fixtures import signed_in


@pytest.fixture
def household(owner, vault, make_source, embedder):
    """The owner's vault, shared with the household, with versions, a record and a private note."""
    vault.write("plans/trip_jun2026.md", "# Trip\n\nWe go to Porto by train.\n")
    vault.write("plans/trip_oct2026.md", "# Trip\n\nWe go to Porto by plane now.\n")
    vault.write(
        "jobs/acme.md",
        "---\ntype: job_application\ncompany: Acme\nstatus: rejected\ntags: [remote]\n---\n"
        "# Acme\n\nApplied for the backend role.\n",
    )
    vault.write("private/diary.md", "# Diary\n\nThe zebracorn secret is kept here.\n")
    source = make_source(owner, vault, sharing=Source.Sharing.HOUSEHOLD)
    source_sync(source=source, embedder=embedder)
    return source


def parsed_elements(html: str) -> list[tuple[str, list]]:
    from html.parser import HTMLParser

    found = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Collector().feed(html)
    return found


def doc(path: str) -> Document:
    return Document.objects.get(path=path)


class TestLibraryPage:
    def test_the_owner_sees_every_document(self, owner, household):
        html = signed_in(owner).get("/library/").content.decode()
        for title in ("Trip", "Acme", "Diary"):
            assert title in html
        assert "older version" in html

    def test_a_household_member_sees_the_shared_notes_but_not_the_private_folder(
        self, member, household
    ):
        html = signed_in(member).get("/library/").content.decode()
        assert "Acme" in html
        assert "Diary" not in html

    def test_an_outsider_gets_the_empty_state(self, outsider, household):
        response = signed_in(outsider).get("/library/")
        assert b"Your library is empty" in response.content

    def test_filters_narrow_the_listing(self, owner, household):
        client = signed_in(owner)
        latest = client.get("/library/?latest=1").content.decode()
        assert "plans/trip_oct2026.md" in latest and "plans/trip_jun2026.md" not in latest
        record = client.get("/library/?category=job_application&tag=remote").content.decode()
        assert "jobs/acme.md" in record and "plans/" not in record
        nothing = client.get("/library/?tag=rem").content.decode()
        assert "Nothing matches these filters" in nothing  # tags are exact

    def test_search_shows_ranked_passages_with_highlighted_terms(self, owner, household):
        response = signed_in(owner).get("/library/?q=Porto+plane", HTTP_HX_REQUEST="true")
        html = response.content.decode()
        assert 'data-testid="passage"' in html
        assert "<mark>Porto</mark>" in html
        assert "<html" not in html  # htmx gets the partial only
        assert "same words" in html and "similar meaning" in html  # how each was found

    def test_a_nonsense_query_says_no_passages_match(self, owner, household):
        # The semantic leg always has nearest neighbours; none of them is a match.
        html = signed_in(owner).get("/library/?q=qwxzv", HTTP_HX_REQUEST="true").content.decode()
        assert "No passages match" in html
        assert 'data-testid="passage"' not in html

    def test_search_never_shows_another_persons_private_passages(self, member, household):
        html = signed_in(member).get("/library/?q=zebracorn+secret").content.decode()
        assert f"/library/doc/{doc('private/diary.md').pk}/" not in html
        assert "is kept here" not in html

    def test_pages_of_fifty(self, owner, vault, make_source, embedder):
        for n in range(55):
            vault.write(f"n/note-{n:02}.md", f"# Note {n}\n\nText {n}.\n")
        source_sync(source=make_source(owner, vault), embedder=embedder)
        client = signed_in(owner)
        first = client.get("/library/").content.decode()
        assert "Page 1 of 2" in first
        second = client.get("/library/?page=2").content.decode()
        assert "Page 2 of 2" in second

    def test_anonymous_visitors_sign_in_first(self, client, db):
        assert client.get("/library/").status_code == 302


class TestDocumentPage:
    def test_it_shows_metadata_text_and_the_version_timeline(self, owner, household):
        html = (
            signed_in(owner)
            .get(f"/library/doc/{doc('plans/trip_jun2026.md').pk}/")
            .content.decode()
        )
        assert "We go to Porto by train." in html
        assert 'data-testid="timeline"' in html
        assert "replaced by plans/trip_oct2026.md (2026-10-01)" in html
        assert "current" in html

    def test_a_private_document_is_a_404_for_the_household(self, member, outsider, household):
        diary = doc("private/diary.md")
        for person in (member, outsider):
            client = signed_in(person)
            assert client.get(f"/library/doc/{diary.pk}/").status_code == 404
            assert client.get(f"/library/doc/{diary.pk}/original/").status_code == 404

    def test_an_outsider_gets_404_for_a_household_document(self, outsider, household):
        acme = doc("jobs/acme.md")
        assert signed_in(outsider).get(f"/library/doc/{acme.pk}/").status_code == 404

    def test_the_original_is_an_attachment_never_rendered(self, member, household):
        acme = doc("jobs/acme.md")
        response = signed_in(member).get(f"/library/doc/{acme.pk}/original/")
        assert response.status_code == 200
        assert response["Content-Disposition"].startswith("attachment")
        assert response["X-Content-Type-Options"] == "nosniff"
        assert b"Applied for the backend role." in b"".join(response.streaming_content)

    def test_hostile_markdown_is_rendered_inert(self, owner, vault, make_source, embedder):
        vault.write(
            "evil.md",
            "# Evil\n\n<script>alert(1)</script> <img src=x onerror=alert(2)>\n\n"
            "[click](javascript:alert(3)) <iframe src=/admin/></iframe> "
            '<div hx-get="/accounts/logout/" hx-trigger="load">x</div>\n\n![pixel](https://tracker.example/p.png)\n',
        )
        source_sync(source=make_source(owner, vault), embedder=embedder)
        html = signed_in(owner).get(f"/library/doc/{doc('evil.md').pk}/").content.decode()
        body = html.split('id="text-h"', 1)[1].split("</section>", 1)[0]
        elements = parsed_elements(body)
        tags = {tag for tag, _ in elements}
        assert "script" not in tags and "iframe" not in tags
        assert not any(tag == "img" for tag, _ in elements)  # external images are not loaded
        for tag, attrs in elements:
            for name, value in attrs:
                assert not name.startswith("on"), (tag, name)
                assert not name.startswith("hx-"), (tag, name)
                assert not (value or "").strip().lower().startswith("javascript:"), (tag, value)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # shown as text, inert

    def test_pdf_highlights_are_grouped_by_page(self, owner, vault, make_source, embedder):
        import pymupdf

        pdf = pymupdf.open()
        for text in ("First page about compost.", "Second page about worms and soil."):
            pdf.new_page().insert_text((72, 72), text)
        second = pdf[1]
        quads = second.search_for("worms and soil", quads=True)
        annotation = second.add_highlight_annot(quads)
        annotation.set_info(content="check the wormery")
        annotation.update()
        vault.write_bytes("garden.pdf", pdf.tobytes())
        source_sync(source=make_source(owner, vault), embedder=embedder)
        client = signed_in(owner)
        html = client.get(f"/library/doc/{doc('garden.pdf').pk}/").content.decode()
        assert "Page 2" in html and "worms and soil" in html and "check the wormery" in html
        image = client.get(f"/library/doc/{doc('garden.pdf').pk}/page/2.png")
        assert image.status_code == 200
        assert image.content.startswith(b"\x89PNG")


class TestCollections:
    def test_sharing_changes_take_effect_without_re_embedding(
        self, owner, member, vault, make_source, embedder
    ):
        vault.write("recipe.md", "# Soup\n\nLentils and cumin.\n")
        source = make_source(owner, vault)
        source_sync(source=source, embedder=embedder)
        before = embedder.passages
        assert b"Soup" not in signed_in(member).get("/library/").content
        response = signed_in(owner).post(
            f"/library/collections/{source.pk}/",
            {
                f"c{source.pk}-sharing": "household",
                f"c{source.pk}-cloud": "allowed",
                f"c{source.pk}-private_dirs": "private",
            },
        )
        assert response.status_code == 302
        assert b"Soup" in signed_in(member).get("/library/").content
        assert embedder.passages == before

    def test_a_new_private_folder_hides_its_documents_at_once(self, owner, member, household):
        client = signed_in(owner)
        client.post(
            f"/library/collections/{household.pk}/",
            {
                f"c{household.pk}-sharing": "household",
                f"c{household.pk}-cloud": "local-only",
                f"c{household.pk}-private_dirs": "private, jobs",
            },
        )
        assert doc("jobs/acme.md").in_private_dir
        assert b"Acme" not in signed_in(member).get("/library/").content
        member_search = signed_in(member).get("/library/?q=backend+role+Acme").content.decode()
        assert "jobs/acme.md" not in member_search

    def test_nobody_else_can_change_a_collection(self, member, admin, household):
        for person in (member, admin):
            response = signed_in(person).post(
                f"/library/collections/{household.pk}/", {f"c{household.pk}-sharing": "owner"}
            )
            assert response.status_code == 404
        household.refresh_from_db()
        assert household.sharing == "household"

    def test_admins_register_folders_only_under_the_vaults_root(
        self, admin, owner, vaults_root, django_capture_on_commit_callbacks
    ):
        folder = vaults_root / "shared"
        folder.mkdir()
        (folder / "a.md").write_text("# A\n\nhello\n")
        client = signed_in(admin)
        bad = client.post(
            "/library/collections/register/",
            {
                "owner": owner.pk,
                "name": "x",
                "path": "/etc",
                "kind": "vault",
                "sharing": "owner",
                "cloud": "local-only",
            },
        )
        assert bad.status_code == 400 and b"outside the vaults root" in bad.content
        with django_capture_on_commit_callbacks(execute=True):
            good = client.post(
                "/library/collections/register/",
                {
                    "owner": owner.pk,
                    "name": "Shared",
                    "path": str(folder),
                    "kind": "vault",
                    "sharing": "household",
                    "cloud": "local-only",
                },
            )
        assert good.status_code == 302
        source = Source.objects.get(name="Shared")
        assert source.owner == owner
        assert (
            source.documents.filter(status="ready").count() == 1
        )  # synced by the (inline) worker job

    def test_members_without_the_permission_see_no_register_form_and_are_refused(
        self, member, vaults_root
    ):
        client = signed_in(member)
        assert b"Register a folder" not in client.get("/library/collections/").content
        response = client.post(
            "/library/collections/register/",
            {
                "name": "x",
                "path": str(vaults_root),
                "kind": "vault",
                "sharing": "owner",
                "cloud": "local-only",
            },
        )
        assert response.status_code == 400
        assert not Source.objects.filter(name="x").exists()


def test_records_list_by_category_with_filters(owner, household):
    client = signed_in(owner)
    html = client.get("/library/records/").content.decode()
    assert "job_application" in html and "Acme" in html and "rejected" in html
    filtered = client.get(
        "/library/records/?category=job_application&status=interviewing"
    ).content.decode()
    assert "No records match" in filtered


def test_state_changes_need_a_csrf_token(owner, household):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    acme = doc("jobs/acme.md")
    assert client.post(f"/library/doc/{acme.pk}/remove/").status_code == 403
    assert Document.objects.filter(pk=acme.pk).exists()
    assert index_state()  # the index is untouched too
