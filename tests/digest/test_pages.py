"""The Digests pages: the list, one digest, the settings, and the actions."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.accounts import permissions
from apps.digest.models import Digest
from apps.digest.selectors import digest_settings_for
from apps.library.models import Document
from tests.digest.conftest import grant

pytestmark = pytest.mark.django_db


def made_digest(user, **fields) -> Digest:
    """A finished digest with a handful of papers (no pipeline run)."""
    items = [
        {
            "n": 1, "origin": "arxiv", "source": "arXiv cs.LG", "title": "A Must-Read Paper",
            "authors": ["Ada"], "published": "2026-03-01",
            "link": "https://arxiv.org/abs/2602.10001", "arxiv_id": "2602.10001", "doi": "",
            "score": 9.5, "track": "cytometry", "summary": "It does **things**.",
            "why": "On topic.", "tier": "must", "library_mode": "", "document_id": None,
            "note": "",
        },
        {
            "n": 2, "origin": "biorxiv", "source": "bioRxiv bioinformatics",
            "title": "A <script>alert(1)</script> Preprint", "authors": ["Bob"],
            "published": "2026-02-28", "link": "https://doi.org/10.1101/2026.02.28.000004",
            "arxiv_id": "", "doi": "10.1101/2026.02.28.000004", "score": 6.0, "track": "x",
            "summary": "Skimmable.", "why": "", "tier": "skim", "library_mode": "",
            "document_id": None, "note": "",
        },
    ]  # fmt: skip
    values = {
        "owner": user,
        "trigger": Digest.Trigger.SCHEDULED,
        "status": Digest.Status.OK,
        "title": "Paper digest — 2026-03-02",
        "model_label": "home:scorer-7b",
        "items": items,
        "stats": {"fetched": 2, "deduplicated": 2, "scored": 2,
                  "tiers": {"must": 1, "worth": 0, "skim": 1}},
        "markdown": "# Paper digest",
        **fields,
    }  # fmt: skip
    return Digest.objects.create(**values)


@pytest.fixture
def client_for():
    def make(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return make


def test_the_owner_sees_their_digests_newest_first(client_for, reader):
    older = made_digest(reader, title="Paper digest — 2026-02-23")
    newer = made_digest(reader)
    failed = made_digest(reader, status=Digest.Status.FAILED, error="arXiv cs.LG: down")
    page = client_for(reader).get("/digests/")
    html = page.content.decode()
    assert page.status_code == 200
    assert html.index(f"digest-{failed.pk}") < html.index(f"digest-{newer.pk}")
    assert html.index(f"digest-{newer.pk}") < html.index(f"digest-{older.pk}")
    assert "arXiv cs.LG: down" in html and "tries again" in html
    assert 'data-nav="digests"' in html and 'aria-current="page" data-nav="digests"' in html


def test_a_digest_page_renders_through_the_markdown_path_and_offers_adding(client_for, reader):
    digest = made_digest(reader)
    html = client_for(reader).get(f"/digests/{digest.pk}/").content.decode()
    # The paper's Markdown block, rendered: a heading linking to the paper…
    assert '<h3><a href="https://arxiv.org/abs/2602.10001" rel="noopener noreferrer">' in html
    # …with what the model and the API said kept as text, never as markup.
    assert "It does **things**." in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count('data-testid="add-paper"') == 2
    assert f"/digests/{digest.pk}/papers/1/add/" in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_a_paper_in_the_library_links_to_its_entry(client_for, reader):
    from apps.library.services.adding import papers_source

    document = Document.objects.create(
        source=papers_source(reader), path="arXiv 2602.10001", title="A Must-Read Paper",
        kind="paper", arxiv_id="2602.10001", content_hash="1" * 64, status="ready",
    )  # fmt: skip
    digest = made_digest(reader)
    html = client_for(reader).get(f"/digests/{digest.pk}/").content.decode()
    assert f'href="/library/doc/{document.pk}/" data-testid="in-library"' in html
    assert html.count('data-testid="add-paper"') == 1


def test_adding_a_preprint_makes_a_summary_entry(client_for, reader):
    digest = made_digest(reader)
    response = client_for(reader).post(f"/digests/{digest.pk}/papers/2/add/")
    assert response.status_code == 302 and response["Location"].endswith("#paper-2")
    entry = Document.objects.get(source__owner=reader, doi="10.1101/2026.02.28.000004")
    assert entry.status == Document.Status.READY and entry.url.startswith("https://doi.org/")


def test_adding_an_arxiv_paper_goes_through_the_librarys_add_paper(
    client_for, reader, fake_arxiv, django_capture_on_commit_callbacks
):
    digest = made_digest(reader)
    with django_capture_on_commit_callbacks(execute=True):
        client_for(reader).post(f"/digests/{digest.pk}/papers/1/add/")
    paper = Document.objects.get(source__owner=reader, arxiv_id="2602.10001")
    assert paper.kind == "paper" and paper.status == Document.Status.READY
    assert len(fake_arxiv.pdf_requests) == 1


def test_an_outsider_gets_404_for_someone_elses_digest(client_for, reader, outsider, member):
    digest = made_digest(reader)
    for person in (outsider, member):
        client = client_for(person)
        assert client.get(f"/digests/{digest.pk}/").status_code == 404
        assert client.post(f"/digests/{digest.pk}/papers/2/add/").status_code == 404
        assert f"digest-{digest.pk}" not in client.get("/digests/").content.decode()
    assert not Document.objects.filter(source__owner__in=[outsider, member]).exists()


def test_pages_need_a_sign_in(reader):
    digest = made_digest(reader)
    for url in ("/digests/", "/digests/settings/", f"/digests/{digest.pk}/"):
        assert Client().get(url).status_code == 302


def test_state_changes_need_the_csrf_token(reader):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reader)
    digest = made_digest(reader)
    assert client.post("/digests/run/").status_code == 403
    assert client.post(f"/digests/{digest.pk}/papers/2/add/").status_code == 403
    assert client.post("/digests/settings/", {"arxiv": "cs.LG:5"}).status_code == 403


def test_empty_states_say_what_to_do_next(client_for, owner, digest_on, local_model):
    # No permission: whom to ask.
    html = client_for(owner).get("/digests/").content.decode()
    assert 'data-testid="digest-no-permission"' in html and "Admin" not in html.split("<main")[1]
    assert 'data-nav="digests"' not in html
    # Permission but nothing set up: a link to the settings.
    user = grant(owner, permissions.RUN_PAPER_DIGEST)
    html = client_for(user).get("/digests/").content.decode()
    assert 'data-testid="digest-unconfigured"' in html and "/digests/settings/" in html
    assert 'data-testid="digests-empty"' in html


def test_settings_explain_an_instance_switched_off(client_for, reader, digest_on, admin):
    digest_on.digest_enabled = False
    digest_on.save()
    html = client_for(reader).get("/digests/settings/").content.decode()
    assert 'data-testid="digest-off"' in html and "ask Admin" in html
    assert 'data-nav="digests"' not in html  # not usable: no nav link
    assert "<form" in html.split('data-testid="digest-off"')[1]  # settings still editable


def test_settings_are_saved(client_for, reader, local_model):
    response = client_for(reader).post(
        "/digests/settings/",
        {
            "enabled": "on",
            "arxiv": "cs.LG:40\r\ncs.CL:10",
            "biorxiv": "",
            "keywords": "cytometry:20",
            "research_context": "Flow cytometry.",
            "model": local_model.label,
            "folder": "weekly",
        },
    )
    assert response.status_code == 302
    conf = digest_settings_for(user=reader)
    assert conf.arxiv_categories == [["cs.LG", 40], ["cs.CL", 10]]
    assert conf.biorxiv_categories == [] and conf.folder == "weekly"
    form = client_for(reader).get("/digests/settings/").content.decode()
    assert "cs.LG:40\ncs.CL:10" in form


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"arxiv": "cs.LG:lots"}, "whole number"),
        ({"folder": "../../etc"}, "not allowed as a folder name"),
        ({"arxiv": "", "keywords": ""}, "at least one arXiv category"),
        ({"model": "nowhere:nothing"}, "no model labelled"),
    ],
)
def test_settings_validation_errors_are_shown(client_for, reader, data, message):
    before = digest_settings_for(user=reader).arxiv_categories
    response = client_for(reader).post(
        "/digests/settings/", {"enabled": "on", "arxiv": "cs.LG:5", **data}
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert digest_settings_for(user=reader).arxiv_categories == before


def test_a_cloud_model_is_refused_without_the_permission(client_for, reader, cloud_model):
    response = client_for(reader).post(
        "/digests/settings/", {"enabled": "on", "arxiv": "cs.LG:5", "model": "cloud:big"}
    )
    assert response.status_code == 400
    assert "you may not use cloud models" in response.content.decode()
    assert "cloud:big" not in client_for(reader).get("/digests/settings/").content.decode()
    # With the permission it is offered and accepted.
    allowed = grant(reader, permissions.USE_CLOUD_MODELS)
    page = client_for(allowed).get("/digests/settings/").content.decode()
    assert 'value="cloud:big"' in page
    response = client_for(allowed).post(
        "/digests/settings/", {"enabled": "on", "arxiv": "cs.LG:5", "model": "cloud:big"}
    )
    assert (
        response.status_code == 302 and digest_settings_for(user=allowed).model_label == "cloud:big"
    )


def test_settings_need_the_permission(client_for, owner, digest_on):
    response = client_for(owner).post("/digests/settings/", {"arxiv": "cs.LG:5"})
    assert response.status_code == 400
    assert digest_settings_for(user=owner) is None
    assert 'data-testid="digest-no-permission"' in response.content.decode()


def test_run_now_queues_a_digest(
    client_for, reader, fake_arxiv, fake_biorxiv, llm, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(reader).post("/digests/run/")
    assert response.status_code == 302
    digest = Digest.objects.get(owner=reader)
    assert digest.trigger == Digest.Trigger.MANUAL and digest.status in ("ok", "failed")


def test_run_now_refuses_when_the_digest_cannot_run(client_for, owner, digest_on):
    response = client_for(owner).post("/digests/run/", follow=True)
    assert "cannot run yet" in response.content.decode()
    assert not Digest.objects.exists()
