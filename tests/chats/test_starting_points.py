"""Starting points on the new-chat screen: prompts from the person's own
recent notes and open projects, then the admin's defaults; never a word of
anyone else's notes, even ones the household shares."""

from __future__ import annotations

import html

import pytest

from apps.chats.models import Chat, StartingPoint
from apps.chats.starting_points import starting_points_for
from apps.library.models import Document
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def offered(client) -> list[str]:
    page = client.get("/chat/").content.decode()
    return [
        html.unescape(part.split('"', 1)[0]) for part in page.split('data-starting-point="')[1:]
    ]


def test_the_new_chat_screen_offers_the_persons_own_notes_and_open_projects(
    household, owner, member
):
    texts = offered(signed_in(owner))
    own_titles = set(
        Document.objects.filter(source__owner=owner)
        .exclude(title="")
        .values_list("title", flat=True)
    )
    notes = [t for t in texts if t.startswith("Summarise")]
    assert len(notes) == 2
    assert all(t.removeprefix("Summarise “").removesuffix("”") in own_titles for t in notes)
    projects = [t for t in texts if t.startswith("What's the status of")]
    # Open projects only: the finished one (PixelNet, done) is not asked about.
    assert projects and all("PixelNet" not in t for t in projects)
    assert set(projects) <= {
        "What's the status of Shed rebuild?",
        "What's the status of Tax return?",
    }


def test_another_persons_shared_notes_are_never_named(household, owner, member):
    texts = offered(signed_in(member))
    # Max may read Olivia's household notes, but his screen names only his own.
    assert texts == ["Summarise “Gifts”"]
    others = Document.objects.filter(source__owner=owner).values_list("title", flat=True)
    assert not any(title and title in " ".join(texts) for title in others)


def test_the_admins_defaults_follow_in_their_order_and_only_when_enabled(owner):
    StartingPoint.objects.create(text="Plan this week's meals", order=2)
    StartingPoint.objects.create(text="What did we decide about the boiler?", order=1)
    StartingPoint.objects.create(text="An old idea", order=0, enabled=False)
    assert offered(signed_in(owner)) == [
        "What did we decide about the boiler?",
        "Plan this week's meals",
    ]


def test_a_prompt_is_offered_once(household, member):
    StartingPoint.objects.create(text="Summarise “Gifts”")
    assert [s.text for s in starting_points_for(member)] == ["Summarise “Gifts”"]


def test_a_chat_that_has_begun_shows_no_starting_points(owner):
    StartingPoint.objects.create(text="Plan this week's meals")
    chat = Chat.objects.create(owner=owner, title="Meals")
    page = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    assert "data-starting-point" not in page


def test_a_title_in_a_starting_point_is_escaped(owner, member, make_vault, make_source, embedder):
    from apps.library.ingest.sync import source_sync  # the library's own ingest, as in household

    notes = make_vault("olivia-notes")
    notes.write("odd.md", '# <img src=x onerror="alert(1)"> plans\n\nSomething.\n')
    source_sync(source=make_source(owner, notes, name="notes"), embedder=embedder)
    page = signed_in(owner).get("/chat/").content.decode()
    assert "<img src=x" not in page
    assert "Summarise “&lt;img src=x" in page


def test_admins_edit_the_defaults_in_admin(admin, owner):
    StartingPoint.objects.create(text="Plan this week's meals")
    assert signed_in(admin).get("/admin/chats/startingpoint/").status_code == 200
    response = signed_in(owner).get("/admin/chats/startingpoint/")
    assert response.status_code == 302  # a person who is not an admin is sent to sign in
