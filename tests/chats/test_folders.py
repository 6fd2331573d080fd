"""Chat folders in the sidebar: a person creates, renames and deletes their
own folders, moves chats in and out, and a folder stays collapsed on the
server; nobody else can see or touch either."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.chats.models import Chat, Folder
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(owner):
    return Chat.objects.create(owner=owner, title="Bin days")


def test_a_folder_made_in_the_sidebar_is_listed_with_its_name(owner, chat):
    client = signed_in(owner)
    html = client.post("/chat/folders/", {"name": "  Home   admin "}, HTTP_HX_REQUEST="true")
    assert html.status_code == 200
    folder = Folder.objects.get(owner=owner)
    assert folder.name == "Home admin"
    assert 'data-testid="folder-name">Home admin<' in html.content.decode()
    # The page itself lists it too (and the chat can be moved into it).
    page = client.get("/chat/").content.decode()
    assert "Home admin" in page and f'<option value="{folder.pk}">Home admin</option>' in page


def test_a_folder_needs_a_name(owner):
    response = signed_in(owner).post("/chat/folders/", {"name": "   "}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert "give the folder a name" in response.content.decode()
    assert not Folder.objects.exists()


def test_without_javascript_a_new_folder_goes_back_to_the_page(owner, chat):
    client = signed_in(owner)
    response = client.post(
        "/chat/folders/", {"name": "Trips"}, HTTP_REFERER=f"http://testserver/chat/{chat.pk}/"
    )
    assert (
        response.status_code == 302 and response["Location"] == f"http://testserver/chat/{chat.pk}/"
    )
    # A referer on another site is not followed.
    response = client.post(
        "/chat/folders/", {"name": "Other"}, HTTP_REFERER="https://evil.example/"
    )
    assert response["Location"] == "/chat/"


def test_moving_a_chat_into_a_folder_and_back_out(owner, chat):
    folder = Folder.objects.create(owner=owner, name="House")
    client = signed_in(owner)
    html = client.post(
        f"/chat/{chat.pk}/folder/",
        {"folder": folder.pk, "current": chat.pk},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    chat.refresh_from_db()
    assert chat.folder == folder
    # The list comes back with the chat under its folder, still marked as the page's chat.
    folder_part = html.split(f'id="folder-{folder.pk}-chats"')[1].split("</ul>")[0]
    assert "Bin days" in folder_part and 'aria-current="page"' in folder_part
    client.post(f"/chat/{chat.pk}/folder/", {"folder": ""}, HTTP_HX_REQUEST="true")
    chat.refresh_from_db()
    assert chat.folder is None


def test_moving_does_not_reorder_the_chat_list(owner, chat):
    folder = Folder.objects.create(owner=owner, name="House")
    before = chat.updated_at
    signed_in(owner).post(f"/chat/{chat.pk}/folder/", {"folder": folder.pk})
    chat.refresh_from_db()
    assert chat.updated_at == before


def test_renaming_a_folder(owner):
    folder = Folder.objects.create(owner=owner, name="Hosue")
    html = signed_in(owner).post(
        f"/chat/folders/{folder.pk}/rename/", {"name": "House"}, HTTP_HX_REQUEST="true"
    )
    folder.refresh_from_db()
    assert folder.name == "House" and "House" in html.content.decode()


def test_deleting_a_folder_keeps_its_chats_outside_any_folder(owner, chat):
    folder = Folder.objects.create(owner=owner, name="House")
    chat.folder = folder
    chat.save()
    signed_in(owner).post(f"/chat/folders/{folder.pk}/delete/", HTTP_HX_REQUEST="true")
    assert not Folder.objects.exists()
    chat.refresh_from_db()
    assert chat.folder is None


def test_a_collapsed_folder_stays_collapsed_on_the_next_page(owner, chat):
    folder = Folder.objects.create(owner=owner, name="House")
    chat.folder = folder
    chat.save()
    client = signed_in(owner)
    answer = client.post(
        f"/chat/folders/{folder.pk}/collapse/", {"collapsed": "1"}, HTTP_X_REQUESTED_WITH="fetch"
    )
    assert answer.status_code == 204
    folder.refresh_from_db()
    assert folder.collapsed
    page = client.get("/chat/").content.decode()
    assert (
        f'id="folder-{folder.pk}-chats" class="chat-list chat-folder__chats" data-testid="folder-chats" hidden'
        in page
    )
    assert 'aria-expanded="false"' in page
    client.post(f"/chat/folders/{folder.pk}/collapse/", {"collapsed": "0"})
    folder.refresh_from_db()
    assert not folder.collapsed


@pytest.mark.parametrize(
    "path",
    ["rename/", "delete/", "collapse/"],
)
def test_another_persons_folder_is_not_found(owner, member, path):
    folder = Folder.objects.create(owner=owner, name="House")
    response = signed_in(member).post(f"/chat/folders/{folder.pk}/{path}", {"name": "Mine"})
    assert response.status_code == 404
    folder.refresh_from_db()
    assert folder.name == "House" and not folder.collapsed


def test_a_chat_cannot_go_into_someone_elses_folder(owner, member, chat):
    theirs = Folder.objects.create(owner=member, name="Max's")
    response = signed_in(owner).post(f"/chat/{chat.pk}/folder/", {"folder": theirs.pk})
    assert response.status_code == 404
    chat.refresh_from_db()
    assert chat.folder is None


def test_someone_elses_chat_cannot_be_moved(owner, outsider, chat):
    mine = Folder.objects.create(owner=outsider, name="Oscar's")
    response = signed_in(outsider).post(f"/chat/{chat.pk}/folder/", {"folder": mine.pk})
    assert response.status_code == 404
    chat.refresh_from_db()
    assert chat.folder is None


def test_a_folder_id_that_is_not_one_is_not_found(owner, chat):
    response = signed_in(owner).post(f"/chat/{chat.pk}/folder/", {"folder": "abc"})
    assert response.status_code == 404


def test_the_sidebar_never_shows_another_persons_folders(owner, member, chat):
    Folder.objects.create(owner=member, name="Max's secret folder")
    page = signed_in(owner).get("/chat/").content.decode()
    assert "Max's secret folder" not in page


def test_folder_changes_need_the_csrf_token(owner, chat):
    folder = Folder.objects.create(owner=owner, name="House")
    strict = signed_in(owner, enforce_csrf_checks=True)
    assert strict.post("/chat/folders/", {"name": "New"}).status_code == 403
    assert strict.post(f"/chat/{chat.pk}/folder/", {"folder": folder.pk}).status_code == 403
    assert strict.post(f"/chat/folders/{folder.pk}/delete/").status_code == 403
    assert Folder.objects.count() == 1


def test_a_signed_out_visitor_is_sent_to_sign_in(owner):
    folder = Folder.objects.create(owner=owner, name="House")
    response = Client().post(f"/chat/folders/{folder.pk}/delete/")
    assert response.status_code == 302 and "/login" in response["Location"]
    assert Folder.objects.exists()
