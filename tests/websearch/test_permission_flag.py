"""The "use web search" right is one of the household flags on the group
admin page: ticked there, it gives the group's members the web_search tool;
unticked, the tool is gone from their next turn."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth.models import Group

from apps.accounts import permissions
from apps.accounts.models import User
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def offered(llm) -> list[str]:
    return [t["function"]["name"] for t in llm.chat_requests[-1].json.get("tools", [])]


def test_the_group_page_shows_web_search_as_a_flag(admin):
    page = signed_in(admin).get("/admin/auth/group/add/").content.decode()
    label, sentence = permissions.FLAG_TEXT[permissions.USE_WEB_SEARCH]
    assert 'name="flag_use_web_search"' in page and 'type="checkbox"' in page
    assert label == "Use web search" and label in page and sentence in html.unescape(page)
    # Not a second time among the experts' raw permissions.
    assert "Can use web search in chats" not in page


def test_ticking_it_gives_members_the_tool(admin, member, provider, local_model, llm):
    client = signed_in(admin)
    llm.queue(Reply(text="Hello."))
    run_turn(member, "Hello")
    assert "web_search" not in offered(llm)

    added = client.post("/admin/auth/group/add/", {"name": "web", "flag_use_web_search": "on"})
    assert added.status_code == 302
    group = Group.objects.get(name="web")
    member.groups.add(group)
    llm.queue(Reply(text="Hello again."))
    run_turn(User.objects.get(pk=member.pk), "Hello again")
    assert "web_search" in offered(llm)
    assert User.objects.get(pk=member.pk).has_perm(permissions.USE_WEB_SEARCH)

    # Unticked on the change page: the next turn offers it no more.
    changed = client.post(f"/admin/auth/group/{group.pk}/change/", {"name": "web"})
    assert changed.status_code == 302
    llm.queue(Reply(text="Hi."))
    run_turn(User.objects.get(pk=member.pk), "Hi")
    assert "web_search" not in offered(llm)
