"""Settings → SSH profiles in a real browser against Debian's real sshd: the
menu entry, adding a profile with a pasted key, the first connection showing
the server's fingerprint, accepting exactly that key, and connecting."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.agents.models import SSHProfile
from tests.e2e.conftest import screenshot
from tests.fakes.sshd import FakeSSHD
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def sshd():
    with FakeSSHD() as server:
        yield server


def grant_agents(user) -> None:
    group = Group.objects.create(name="agents")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.USE_AGENT_CHATS))
    )
    user.groups.add(group)


def test_add_a_profile_see_the_fingerprint_accept_it_and_connect(
    page, live_server_url, owner, sshd
):
    grant_agents(owner)
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/")
    page.click("text=SSH profiles")
    page.click("[data-testid=add-profile]")
    page.fill("input[name=name]", "workstation")
    page.fill("input[name=host]", sshd.host)
    page.fill("input[name=port]", str(sshd.port))
    page.fill("input[name=username]", sshd.user)
    page.check("input[name=auth][value=key]")
    page.fill("textarea[name=private_key]", sshd.client_key)
    page.click("button:has-text('Add profile')")

    page.wait_for_selector("[data-testid=pin]")
    assert "not accepted yet" in page.inner_text("[data-testid=pin]")
    assert "PRIVATE KEY" not in page.content()
    page.click("[data-testid=check]")
    shown = page.inner_text("[data-testid=fingerprint]")
    assert shown == sshd.host_fingerprint  # what ssh-keygen -lf says of the server's key
    screenshot(page, "ssh-profile-fingerprint")
    page.click("[data-testid=accept-key]")
    page.wait_for_url(f"{live_server_url}/settings/ssh/{SSHProfile.objects.get(owner=owner).pk}/")
    assert "Linux" in page.inner_text(".messages")
    page.reload()  # a reload is a GET of the profile: no 405, nothing accepted twice
    assert "Host key" in page.content()
    assert sshd.host_fingerprint in page.inner_text("[data-testid=pin]")
    profile = SSHProfile.objects.get(owner=owner)
    assert profile.host_key_fingerprint == sshd.host_fingerprint
    assert errors == []


def test_without_the_permission_settings_has_no_ssh_profiles(page, live_server_url, owner):
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/")
    assert page.locator("nav.tabs >> text=SSH profiles").count() == 0
    response = page.goto(f"{live_server_url}/settings/ssh/")
    assert response.status == 403
