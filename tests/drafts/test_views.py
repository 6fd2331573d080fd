"""The drafts pages and the editor's endpoints, as the owner and as others."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from apps.drafts import sandbox, services
from apps.drafts.models import Draft

pytestmark = pytest.mark.django_db

LETTER = "".join(f"line {i}\n" for i in range(30))


def post_json(client, url: str, data: dict):
    return client.post(url, json.dumps(data), content_type="application/json")


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def letter(owner):
    return services.draft_create(owner=owner, title="Letter", filename="letter.md", content=LETTER)


def test_the_empty_list_says_what_to_do(owner_client):
    page = owner_client.get("/drafts/").content.decode()
    assert "No drafts yet" in page and "New draft" in page


def test_creating_a_draft_opens_it_and_lists_it(owner_client, owner):
    response = owner_client.post("/drafts/new/", {"title": "CV", "filename": "cv.tex"})
    draft = Draft.objects.get(owner=owner)
    assert response.status_code == 302 and response["Location"] == f"/drafts/{draft.pk}/"
    listing = owner_client.get("/drafts/").content.decode()
    assert "CV" in listing and "cv.tex" in listing


@pytest.mark.parametrize("name", ["../../etc/passwd", ".hidden.md", "a.exe", "-x.tex"])
def test_a_bad_first_file_name_is_refused_on_the_page(owner_client, name, drafts_root):
    response = owner_client.post("/drafts/new/", {"title": "x", "filename": name})
    assert response.status_code == 400
    assert "errorlist" in response.content.decode()
    assert not Draft.objects.exists()


def test_loading_and_saving_a_file(owner_client, letter):
    loaded = owner_client.get(f"/drafts/{letter.pk}/file/?name=letter.md").json()
    assert loaded["text"] == LETTER and loaded["proposals"] == []
    saved = post_json(
        owner_client,
        f"/drafts/{letter.pk}/file/save/",
        {"name": "letter.md", "text": "new\n", "hash": loaded["hash"]},
    )
    assert saved.status_code == 200 and saved.json()["hash"] == sandbox.file_hash("new\n")
    stale = post_json(
        owner_client,
        f"/drafts/{letter.pk}/file/save/",
        {"name": "letter.md", "text": "mine\n", "hash": loaded["hash"]},
    )
    assert stale.status_code == 409 and "changed since you opened it" in stale.json()["error"]
    assert sandbox.read_text(letter.owner_id, letter.key, "letter.md") == "new\n"


def test_history_lists_and_restores(owner_client, letter):
    loaded = owner_client.get(f"/drafts/{letter.pk}/file/?name=letter.md").json()
    post_json(
        owner_client,
        f"/drafts/{letter.pk}/file/save/",
        {"name": "letter.md", "text": "v2\n", "hash": loaded["hash"]},
    )
    (entry,) = owner_client.get(f"/drafts/{letter.pk}/history/?name=letter.md").json()["snapshots"]
    assert entry["reason"] == "before your save"
    restored = owner_client.post(f"/drafts/{letter.pk}/history/{entry['id']}/restore/").json()
    assert restored["text"] == LETTER
    assert sandbox.read_text(letter.owner_id, letter.key, "letter.md") == LETTER


def test_reviewing_and_applying_a_proposal(owner_client, letter):
    new = LETTER.replace("line 2\n", "line two\n").replace("line 25\n", "")
    proposal = services.proposal_create(draft=letter, filename="letter.md", new_text=new)
    loaded = owner_client.get(f"/drafts/{letter.pk}/file/?name=letter.md").json()
    assert [p["id"] for p in loaded["proposals"]] == [proposal.pk]
    shown = owner_client.get(f"/drafts/{letter.pk}/proposals/{proposal.pk}/").json()
    assert [h["kind"] for h in shown["hunks"]] == ["replace", "remove"]
    applied = post_json(
        owner_client, f"/drafts/{letter.pk}/proposals/{proposal.pk}/apply/", {"accepted": [1]}
    )
    assert applied.json()["status"] == "applied"
    assert applied.json()["text"] == LETTER.replace("line 25\n", "")
    again = post_json(
        owner_client, f"/drafts/{letter.pk}/proposals/{proposal.pk}/apply/", {"accepted": [0]}
    )
    assert again.status_code == 409


def test_a_proposal_against_a_changed_file_writes_nothing(owner_client, letter):
    proposal = services.proposal_create(draft=letter, filename="letter.md", new_text="other\n")
    sandbox.write_text(letter.owner_id, letter.key, "letter.md", "edited elsewhere\n")
    response = post_json(
        owner_client, f"/drafts/{letter.pk}/proposals/{proposal.pk}/apply/", {"accepted": [0]}
    )
    assert response.status_code == 409 and "nothing was written" in response.json()["error"]
    assert sandbox.read_text(letter.owner_id, letter.key, "letter.md") == "edited elsewhere\n"


@pytest.mark.parametrize("accepted", ["all", [99], [True], None])
def test_malformed_hunk_choices_are_refused(owner_client, letter, accepted):
    proposal = services.proposal_create(draft=letter, filename="letter.md", new_text="x\n")
    response = post_json(
        owner_client, f"/drafts/{letter.pk}/proposals/{proposal.pk}/apply/", {"accepted": accepted}
    )
    assert response.status_code == 400
    assert sandbox.read_text(letter.owner_id, letter.key, "letter.md") == LETTER


def test_a_stale_or_foreign_proposal_id_is_404(owner_client, letter, member):
    theirs = services.draft_create(owner=member, title="M", filename="m.md", content="a\n")
    foreign = services.proposal_create(draft=theirs, filename="m.md", new_text="b\n")
    assert owner_client.get(f"/drafts/{letter.pk}/proposals/{foreign.pk}/").status_code == 404
    assert owner_client.get(f"/drafts/{letter.pk}/proposals/9999/").status_code == 404
    response = post_json(
        owner_client, f"/drafts/{letter.pk}/proposals/{foreign.pk}/apply/", {"accepted": [0]}
    )
    assert response.status_code == 404
    assert sandbox.read_text(member.pk, theirs.key, "m.md") == "a\n"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/drafts/{pk}/"),
        ("get", "/drafts/{pk}/file/?name=letter.md"),
        ("post", "/drafts/{pk}/file/save/"),
        ("get", "/drafts/{pk}/history/?name=letter.md"),
        ("get", "/drafts/{pk}/preview/?name=letter.md"),
        ("post", "/drafts/{pk}/build/export/"),
        ("get", "/drafts/{pk}/build/export/0123abcd/"),
        ("get", "/drafts/{pk}/pdf/compile/?name=letter.md"),
        ("post", "/drafts/{pk}/files/"),
        ("post", "/drafts/{pk}/update/"),
        ("get", "/drafts/{pk}/delete/"),
        ("post", "/drafts/{pk}/delete/"),
    ],
)
def test_another_persons_draft_is_404_on_every_route(
    client, outsider, member, letter, method, path
):
    for person in (member, outsider):
        client.force_login(person)
        response = getattr(client, method)(path.format(pk=letter.pk))
        assert response.status_code == 404
    assert Draft.objects.filter(pk=letter.pk).exists()


def test_changes_need_the_csrf_token(owner, letter):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(owner)
    loaded = strict.get(f"/drafts/{letter.pk}/file/?name=letter.md").json()
    response = post_json(
        strict,
        f"/drafts/{letter.pk}/file/save/",
        {"name": "letter.md", "text": "x", "hash": loaded["hash"]},
    )
    assert response.status_code == 403
    assert strict.post(f"/drafts/{letter.pk}/delete/").status_code == 403
    assert sandbox.read_text(letter.owner_id, letter.key, "letter.md") == LETTER


def test_the_preview_is_a_locked_down_page(owner_client, owner):
    draft = services.draft_create(
        owner=owner, title="P", filename="p.md", content="# Title\n\n<script>alert(1)</script>\n"
    )
    response = owner_client.get(f"/drafts/{draft.pk}/preview/?name=p.md")
    csp = response["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert response["X-Frame-Options"] == "SAMEORIGIN"
    body = response.content.decode()
    assert "<h1" in body and "<script>alert" not in body


def test_deleting_asks_first_then_removes_the_folder(owner_client, letter, drafts_root, owner):
    page = owner_client.get(f"/drafts/{letter.pk}/delete/").content.decode()
    assert "cannot be undone" in page and "letter.md" in page
    owner_client.post(f"/drafts/{letter.pk}/delete/")
    assert not Draft.objects.exists()
    assert not (drafts_root / str(owner.pk) / letter.key).exists()


def test_keep_toggles_and_adding_files_checks_names(owner_client, letter):
    owner_client.post(f"/drafts/{letter.pk}/update/", {"keep": "1"})
    letter.refresh_from_db()
    assert letter.keep
    owner_client.post(f"/drafts/{letter.pk}/files/", {"filename": "refs.bib"})
    owner_client.post(f"/drafts/{letter.pk}/files/", {"filename": "../x.bib"})
    assert sandbox.list_files(letter.owner_id, letter.key) == ["letter.md", "refs.bib"]


def test_the_return_address_after_an_update_stays_on_this_site(owner_client, letter):
    response = owner_client.post(
        f"/drafts/{letter.pk}/update/", {"keep": "1", "next": "https://evil.example/phish"}
    )
    assert response["Location"] == f"/drafts/{letter.pk}/"
    response = owner_client.post(f"/drafts/{letter.pk}/update/", {"keep": "0", "next": "/drafts/"})
    assert response["Location"] == "/drafts/"


def test_the_editors_chat_panel_starts_a_chat_linked_to_the_draft_and_tells_it_the_file(
    owner_client, letter, local_model, llm
):
    from tests.fakes.llm import Reply

    llm.queue(Reply(text="Looks good."))
    response = owner_client.post(
        f"/drafts/{letter.pk}/chat/send/",
        {"text": "Is the tone right?", "file": "letter.md", "next": f"/drafts/{letter.pk}/"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 204
    assert response["HX-Redirect"] == f"/drafts/{letter.pk}/"  # the page stays in the editor
    letter.refresh_from_db()
    question = letter.chat.messages.get(role="user")
    assert question.text == "Is the tone right?"  # the person's words, as they wrote them
    model_text = question.turns[0]["blocks"][0]["text"]
    assert f"draft {letter.pk}" in model_text and "letter.md" in model_text


def test_a_second_message_continues_the_drafts_chat(owner_client, owner, letter):
    from apps.chats.services import turn_start

    chat, _, answer = turn_start(user=owner, chat=None, text="first")
    answer.status = "done"
    answer.save()
    services.draft_attach_chat(draft=letter, chat=chat)
    response = owner_client.post(
        f"/drafts/{letter.pk}/chat/send/", {"text": "second"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and "second" in response.content.decode()
    assert chat.messages.filter(role="user").count() == 2


def test_nobody_else_can_send_into_a_drafts_chat(member, letter):
    client = Client()
    client.force_login(member)
    assert client.post(f"/drafts/{letter.pk}/chat/send/", {"text": "hi"}).status_code == 404
    letter.refresh_from_db()
    assert letter.chat is None
