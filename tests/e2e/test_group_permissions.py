"""End to end: an admin gives a group a Jarvis permission on Admin → Groups by
ticking its checkbox (a sentence beside it says what it allows), and a member
of the group then has it. Real daphne, Chromium."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from apps.accounts import permissions
from apps.accounts.models import User
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


def test_an_admin_ticks_use_agent_chats_for_a_group_and_its_member_has_it(
    page, live_server_url, admin, member
):
    errors = collect_errors(page)
    group = Group.objects.create(name="adults")
    member.groups.add(group)
    sign_in(page, live_server_url, "root")
    page.goto(f"{live_server_url}/admin/auth/group/{group.pk}/change/")

    box = page.get_by_label("Use agent chats")
    assert not box.is_checked()
    assert page.get_by_text(permissions.FLAG_TEXT[permissions.USE_AGENT_CHATS][1]).is_visible()
    # Django's raw list is folded away, for experts only.
    expert = page.locator("details", has=page.locator("select[name=permissions]"))
    assert "Other Django permissions" in expert.locator("summary").inner_text()
    assert expert.get_attribute("open") is None
    assert not page.get_by_text("Can use agent chats").is_visible()

    box.check()
    page.click("input[name=_continue]")
    page.wait_for_url("**/change/")
    assert page.get_by_label("Use agent chats").is_checked()
    assert not page.get_by_label("Use cloud models").is_checked()
    assert User.objects.get(pk=member.pk).has_perm(permissions.USE_AGENT_CHATS)
    assert not User.objects.get(pk=member.pk).has_perm(permissions.USE_CLOUD_MODELS)

    page.goto(f"{live_server_url}/admin/auth/group/")
    assert "Use agent chats" in page.locator("#result_list").inner_text()
    assert errors == []
