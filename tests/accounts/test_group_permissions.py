"""The group admin page: the four Jarvis flags as checkboxes with a sentence
each; saving gives the group exactly the ticked flags, so its members gain or
lose them, and leaves the expert list of other permissions as chosen."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.accounts.models import User
from apps.accounts.services import group_set_flags
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def _fresh(user: User) -> User:
    # has_perm caches per instance; a fresh row reads the group's current rights.
    return User.objects.get(pk=user.pk)


def _flag_fields(**ticked: bool) -> dict[str, str]:
    return {f"flag_{name}": "on" for name, on in ticked.items() if on}


@pytest.fixture
def signed_in_admin(client, admin):
    client.login(username="root", password=PASSWORD)
    return client


def test_the_group_page_shows_the_four_flags_with_a_sentence_each(signed_in_admin):
    page = signed_in_admin.get("/admin/auth/group/add/").content.decode()
    for flag in permissions.ALL_FLAGS:
        label, sentence = permissions.FLAG_TEXT[flag]
        assert f'name="flag_{permissions.codename(flag)}"' in page
        assert label in page
        assert sentence in html.unescape(page)
    # The expert list no longer repeats the flags among Django's permissions.
    assert "Can use agent chats" not in page


def test_saving_gives_the_group_exactly_the_ticked_flags(signed_in_admin, make_user):
    kid = make_user("kid")
    answer = signed_in_admin.post(
        "/admin/auth/group/add/",
        {"name": "kids", **_flag_fields(use_agent_chats=True, run_paper_digest=True)},
    )
    assert answer.status_code == 302
    group = Group.objects.get(name="kids")
    kid.groups.add(group)
    kid = _fresh(kid)
    assert kid.has_perm(permissions.USE_AGENT_CHATS)
    assert kid.has_perm(permissions.RUN_PAPER_DIGEST)
    assert not kid.has_perm(permissions.USE_CLOUD_MODELS)

    # Unticking one and ticking another on the change page swaps them.
    answer = signed_in_admin.post(
        f"/admin/auth/group/{group.pk}/change/",
        {"name": "kids", **_flag_fields(use_cloud_models=True, run_paper_digest=True)},
    )
    assert answer.status_code == 302
    kid = _fresh(kid)
    assert not kid.has_perm(permissions.USE_AGENT_CHATS)
    assert kid.has_perm(permissions.USE_CLOUD_MODELS)
    assert kid.has_perm(permissions.RUN_PAPER_DIGEST)
    codes = set(group.permissions.values_list("codename", flat=True))
    assert codes == {"use_cloud_models", "run_paper_digest"}


def test_the_checkboxes_show_what_the_group_holds(signed_in_admin):
    group = Group.objects.create(name="adults")
    group_set_flags(group=group, flags={permissions.MANAGE_FOLDER_SOURCES})
    page = signed_in_admin.get(f"/admin/auth/group/{group.pk}/change/").content.decode()
    checked = [line for line in page.split("<input") if "checked" in line.split(">")[0]]
    assert any('name="flag_manage_folder_sources"' in line for line in checked)
    assert not any('name="flag_use_cloud_models"' in line for line in checked)
    listing = signed_in_admin.get("/admin/auth/group/").content.decode()
    assert "Manage folder sources" in listing


def test_an_expert_permission_survives_saving_the_flags(signed_in_admin):
    group = Group.objects.create(name="editors")
    expert = Permission.objects.get(codename="view_user")
    group.permissions.add(expert)
    signed_in_admin.post(
        f"/admin/auth/group/{group.pk}/change/",
        {"name": "editors", "permissions": [expert.pk], **_flag_fields(use_agent_chats=True)},
    )
    codes = set(group.permissions.values_list("codename", flat=True))
    assert codes == {"view_user", "use_agent_chats"}


def test_setting_flags_refuses_a_name_that_is_not_a_flag():
    group = Group.objects.create(name="odd")
    with pytest.raises(ValueError):
        group_set_flags(group=group, flags={"auth.view_user"})
