"""Settings → SSH profiles in the browser's terms (Django's test client): who
sees the pages, the host-key accept flow against a real sshd, a changed key,
and secrets that never come back into a page or a log."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import Group

from apps.agents import services
from apps.agents.models import SSHProfile

PASSWORD = "hunter2 but longer"


def make_profile(owner, server, **changes) -> SSHProfile:
    fields = {
        "owner": owner,
        "name": "box",
        "host": server.host,
        "port": server.port,
        "username": server.user,
        "key_text": server.client_key,
    }
    return services.profile_create(**{**fields, **changes})


def signed_in(client, person):
    client.force_login(person)
    return client


def html(response) -> str:
    return response.content.decode()


# --- who sees what


def test_without_the_permission_there_is_no_menu_entry_and_every_page_is_403(
    client, owner, agent_member, sshd
):
    theirs = make_profile(agent_member, sshd)
    signed_in(client, owner)
    assert "SSH profiles" not in html(client.get("/settings/"))
    for url in ["/settings/ssh/", "/settings/ssh/add/", f"/settings/ssh/{theirs.pk}/"]:
        assert client.get(url).status_code == 403, url
    for action in ["check", "accept", "forget", "delete"]:
        url = f"/settings/ssh/{theirs.pk}/{action}/"
        assert client.post(url, {"fingerprint": "x"}).status_code == 403, url
    response = client.post("/settings/ssh/add/", {"name": "x", "host": "h", "port": 22})
    assert response.status_code == 403
    assert not SSHProfile.objects.filter(owner=owner).exists()


def test_with_the_permission_the_menu_leads_to_the_list(client, agent_owner, sshd):
    make_profile(agent_owner, sshd, name="workstation")
    signed_in(client, agent_owner)
    assert 'href="/settings/ssh/"' in html(client.get("/settings/"))
    page = html(client.get("/settings/ssh/"))
    assert "workstation" in page and "not accepted yet" in page


def test_another_persons_profile_is_404_everywhere(client, agent_owner, agent_member, sshd):
    theirs = make_profile(agent_member, sshd)
    signed_in(client, agent_owner)
    assert client.get(f"/settings/ssh/{theirs.pk}/").status_code == 404
    assert client.post(f"/settings/ssh/{theirs.pk}/", {"name": "mine"}).status_code == 404
    for action in ["check", "accept", "forget", "delete"]:
        response = client.post(f"/settings/ssh/{theirs.pk}/{action}/", {"fingerprint": "x"})
        assert response.status_code == 404, action
    assert "box" not in html(client.get("/settings/ssh/"))
    theirs.refresh_from_db()
    assert theirs.name == "box" and not theirs.is_pinned


def test_a_shared_profile_can_be_checked_but_not_changed(
    client, agent_owner, agent_member, admin, sshd
):
    profile = make_profile(agent_owner, sshd)
    group = Group.objects.create(name="family")
    agent_member.groups.add(group)
    services.profile_share(profile=profile, groups=[group], actor=admin)
    signed_in(client, agent_member)
    assert "Shared with you" in html(client.get("/settings/ssh/"))
    page = html(client.post(f"/settings/ssh/{profile.pk}/check/"))
    assert sshd.host_fingerprint in page
    assert "Only the profile's owner" in page and 'data-testid="accept-key"' not in page
    response = client.post(
        f"/settings/ssh/{profile.pk}/accept/", {"fingerprint": sshd.host_fingerprint}
    )
    assert response.status_code == 404
    assert client.post(f"/settings/ssh/{profile.pk}/", {"name": "mine"}).status_code == 404
    profile.refresh_from_db()
    assert not profile.is_pinned and profile.name == "box"


# --- adding, with the secret never coming back


def form_data(server, **changes) -> dict:
    data = {
        "name": "box",
        "host": server.host,
        "port": server.port,
        "username": server.user,
        "auth": "key",
        "private_key": server.client_key,
        "password": "",
    }
    return {**data, **changes}


def test_adding_with_a_pasted_key_never_shows_it_again(client, agent_owner, sshd, caplog):
    caplog.set_level(logging.DEBUG)
    signed_in(client, agent_owner)
    response = client.post("/settings/ssh/add/", form_data(sshd), follow=True)
    page = html(response)
    profile = SSHProfile.objects.get(owner=agent_owner)
    assert response.redirect_chain[-1][0] == f"/settings/ssh/{profile.pk}/"
    assert profile.private_key.strip() == sshd.client_key.strip()
    assert sshd.client_key_public.split()[1] in page  # the public half is shown
    key_body = sshd.client_key.strip().splitlines()[1]
    for later in [
        page,
        html(client.get(f"/settings/ssh/{profile.pk}/")),
        html(client.get("/settings/ssh/")),
    ]:
        assert "PRIVATE KEY" not in later and key_body not in later
    assert key_body not in caplog.text


def test_a_refused_form_asks_for_the_secret_again_instead_of_echoing_it(client, agent_owner, sshd):
    make_profile(agent_owner, sshd, name="box")
    signed_in(client, agent_owner)
    key_body = sshd.client_key.strip().splitlines()[1]
    response = client.post("/settings/ssh/add/", form_data(sshd))  # the name is taken
    assert response.status_code == 400
    assert "already have an SSH profile named" in html(response)
    assert key_body not in html(response) and "PRIVATE KEY" not in html(response)
    response = client.post(
        "/settings/ssh/add/",
        form_data(sshd, auth="password", private_key="", password=PASSWORD, host="-bad"),
    )
    assert response.status_code == 400 and PASSWORD not in html(response)


def test_a_generated_key_shows_its_public_line_to_copy(client, agent_owner, sshd):
    signed_in(client, agent_owner)
    response = client.post(
        "/settings/ssh/add/", form_data(sshd, auth="generate", private_key=""), follow=True
    )
    profile = SSHProfile.objects.get(owner=agent_owner)
    page = html(response)
    assert profile.public_key.startswith("ssh-ed25519 ") and profile.public_key in page
    assert "authorized_keys" in page
    assert "PRIVATE KEY" not in page


def test_a_password_profile_never_shows_its_password(client, agent_owner, sshd, caplog):
    caplog.set_level(logging.DEBUG)
    signed_in(client, agent_owner)
    response = client.post(
        "/settings/ssh/add/",
        form_data(sshd, auth="password", private_key="", password=PASSWORD),
        follow=True,
    )
    profile = SSHProfile.objects.get(owner=agent_owner)
    assert profile.password == PASSWORD
    assert PASSWORD not in html(response) and PASSWORD not in caplog.text
    assert PASSWORD not in html(client.get(f"/settings/ssh/{profile.pk}/"))


def test_a_bad_key_is_refused_without_repeating_it(client, agent_owner, sshd):
    signed_in(client, agent_owner)
    response = client.post("/settings/ssh/add/", form_data(sshd, private_key="not-a-key-abc123"))
    assert response.status_code == 400
    assert "not a private key Jarvis can read" in html(response)
    assert "not-a-key-abc123" not in html(response)
    assert not SSHProfile.objects.exists()


# --- changing and deleting


def test_changing_the_port_forgets_the_pin_and_keeps_the_secret(client, agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    services.profile_pin_host_key(profile=profile, key_line=sshd.host_key_line)
    signed_in(client, agent_owner)
    data = form_data(sshd, auth="keep", private_key="", port=sshd.port + 1, name="moved")
    response = client.post(f"/settings/ssh/{profile.pk}/", data, follow=True)
    assert "host key was forgotten" in html(response)
    profile.refresh_from_db()
    assert (profile.name, profile.port, profile.is_pinned) == ("moved", sshd.port + 1, False)
    assert profile.private_key.strip() == sshd.client_key.strip()


def test_changing_only_the_name_keeps_the_pin(client, agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    services.profile_pin_host_key(profile=profile, key_line=sshd.host_key_line)
    signed_in(client, agent_owner)
    client.post(
        f"/settings/ssh/{profile.pk}/", form_data(sshd, auth="keep", private_key="", name="renamed")
    )
    profile.refresh_from_db()
    assert profile.name == "renamed" and profile.host_key_fingerprint == sshd.host_fingerprint


def test_deleting_asks_first(client, agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    signed_in(client, agent_owner)
    assert "Delete the SSH profile" in html(client.get(f"/settings/ssh/{profile.pk}/delete/"))
    assert SSHProfile.objects.filter(pk=profile.pk).exists()
    response = client.post(f"/settings/ssh/{profile.pk}/delete/")
    assert response.status_code == 302 and not SSHProfile.objects.filter(pk=profile.pk).exists()


# --- the host key: shown, accepted exactly, changed


def test_check_shows_the_fingerprint_and_accept_pins_exactly_that_key(client, agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    signed_in(client, agent_owner)
    page = html(client.post(f"/settings/ssh/{profile.pk}/check/"))
    assert 'data-state="unknown-key"' in page
    assert f'name="fingerprint" value="{sshd.host_fingerprint}"' in page
    profile.refresh_from_db()
    assert not profile.is_pinned  # showing is not accepting

    response = client.post(
        f"/settings/ssh/{profile.pk}/accept/", {"fingerprint": sshd.host_fingerprint}
    )
    # Post/redirect/get: the profile's page says it, and a reload accepts nothing twice.
    assert response.status_code == 302 and response.url == f"/settings/ssh/{profile.pk}/"
    page = html(client.get(response.url))
    assert "Accepted the host key" in page and "Connected" in page and "Linux" in page
    profile.refresh_from_db()
    assert profile.host_key_fingerprint == sshd.host_fingerprint


def test_accepting_a_key_the_server_no_longer_shows_pins_nothing(client, agent_owner, fresh_sshd):
    profile = make_profile(agent_owner, fresh_sshd)
    signed_in(client, agent_owner)
    shown = fresh_sshd.host_fingerprint
    assert shown in html(client.post(f"/settings/ssh/{profile.pk}/check/"))
    fresh_sshd.restart(new_host_key=True)  # swapped between showing and accepting
    page = html(client.post(f"/settings/ssh/{profile.pk}/accept/", {"fingerprint": shown}))
    assert 'data-testid="key-moved"' in page and fresh_sshd.host_fingerprint in page
    profile.refresh_from_db()
    assert not profile.is_pinned


def test_a_changed_host_key_is_shown_clearly_and_the_owner_can_forget_it(
    client, agent_owner, fresh_sshd
):
    profile = make_profile(agent_owner, fresh_sshd)
    services.profile_pin_host_key(profile=profile, key_line=fresh_sshd.host_key_line)
    old = fresh_sshd.host_fingerprint
    fresh_sshd.restart(new_host_key=True)
    signed_in(client, agent_owner)
    page = html(client.post(f"/settings/ssh/{profile.pk}/check/"))
    assert 'data-state="changed-key"' in page and "Host key changed" in page
    assert old in page and fresh_sshd.host_fingerprint in page
    assert 'data-testid="forget-key"' in page
    profile.refresh_from_db()
    assert profile.host_key_fingerprint == old  # never replaced by a check

    client.post(f"/settings/ssh/{profile.pk}/forget/")
    profile.refresh_from_db()
    assert not profile.is_pinned
    page = html(client.post(f"/settings/ssh/{profile.pk}/check/"))
    assert f'value="{fresh_sshd.host_fingerprint}"' in page


def test_an_unreachable_host_says_so(client, agent_owner, sshd):
    from tests.fakes.sshd import free_port

    profile = make_profile(agent_owner, sshd, port=free_port())
    signed_in(client, agent_owner)
    page = html(client.post(f"/settings/ssh/{profile.pk}/check/"))
    assert 'data-state="failed"' in page and "refused the connection" in page


@pytest.mark.parametrize("url", ["/settings/ssh/1/check/", "/settings/ssh/1/forget/"])
def test_actions_are_posts_only(client, agent_owner, url):
    signed_in(client, agent_owner)
    assert client.get(url).status_code == 405
