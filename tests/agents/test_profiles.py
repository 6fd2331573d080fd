"""SSH profiles: who may have and see them, secrets at rest, the host-key pin
and the connection check against a real sshd."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.http import Http404

from apps.agents import services
from apps.agents.errors import HostKeyChanged, InvalidKey
from apps.agents.models import SSHProfile
from apps.agents.selectors import own_profile_for, profile_for, profiles_for
from apps.core.errors import AlreadyExists, Refused


def make_profile(owner, server, **kwargs) -> SSHProfile:
    fields = {
        "owner": owner,
        "name": "box",
        "host": server.host,
        "port": server.port,
        "username": server.user,
        "key_text": server.client_key,
    }
    return services.profile_create(**{**fields, **kwargs})


# --- creating


def test_a_pasted_key_is_stored_encrypted_with_its_public_line(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    stored = SSHProfile.objects.get(pk=profile.pk)
    assert stored.auth == "key"
    assert stored.private_key.strip() == sshd.client_key.strip()
    assert "PRIVATE KEY" not in stored.private_key_encrypted
    assert stored.public_key.split()[:2] == sshd.client_key_public.split()[:2]
    assert stored.password is None and not stored.is_pinned


def test_a_generated_key_shows_its_public_half(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd, key_text=None, generate_key=True)
    assert profile.public_key.startswith("ssh-ed25519 ")
    assert profile.private_key.startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    assert profile.public_key not in profile.private_key_encrypted


def test_a_password_is_stored_encrypted(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd, key_text=None, password="s3cret pass")
    stored = SSHProfile.objects.get(pk=profile.pk)
    assert stored.auth == "password" and stored.password == "s3cret pass"
    assert "s3cret" not in stored.password_encrypted and stored.private_key is None


@pytest.mark.parametrize(
    "secrets",
    [{}, {"generate_key": True, "password": "pw"}, {"password": "pw", "key_text": "k"}],
)
def test_exactly_one_way_to_log_in(agent_owner, sshd, secrets):
    with pytest.raises(Refused, match="exactly one way"):
        make_profile(agent_owner, sshd, **{"key_text": None, **secrets})


def test_names_are_unique_per_owner_not_per_household(agent_owner, agent_member, sshd):
    make_profile(agent_owner, sshd)
    with pytest.raises(AlreadyExists):
        make_profile(agent_owner, sshd, name="BOX")
    assert make_profile(agent_member, sshd).name == "box"


def test_a_bad_key_or_host_is_refused(agent_owner, sshd):
    with pytest.raises(InvalidKey):
        make_profile(agent_owner, sshd, key_text="not a key")
    with pytest.raises(ValidationError):
        make_profile(agent_owner, sshd, host="-oProxyCommand=evil")
    with pytest.raises(ValidationError):
        make_profile(agent_owner, sshd, username="root; rm")
    with pytest.raises(ValidationError):
        make_profile(agent_owner, sshd, port=70000)
    assert not SSHProfile.objects.exists()


def test_without_the_permission_nothing_is_created(owner, sshd):
    with pytest.raises(Refused, match="agent chats"):
        make_profile(owner, sshd)


# --- who sees what


def test_profiles_of_are_own_and_shared_with_my_groups(agent_owner, agent_member, admin, sshd):
    mine = make_profile(agent_owner, sshd)
    theirs = make_profile(agent_member, sshd, name="theirs")
    assert list(profiles_for(user=agent_owner)) == [mine]
    family = Group.objects.create(name="family")
    agent_owner.groups.add(family)
    services.profile_share(profile=theirs, groups=[family], actor=admin)
    assert sorted(p.name for p in profiles_for(user=agent_owner)) == ["box", "theirs"]
    assert profile_for(user=agent_owner, pk=theirs.pk) == theirs
    with pytest.raises(Http404):  # shared to use, not to change
        own_profile_for(user=agent_owner, pk=theirs.pk)


def test_another_persons_profile_is_404(agent_owner, agent_member, sshd):
    theirs = make_profile(agent_member, sshd)
    with pytest.raises(Http404):
        profile_for(user=agent_owner, pk=theirs.pk)


def test_without_the_permission_even_my_own_profiles_are_gone(agent_owner, sshd):
    mine = make_profile(agent_owner, sshd)
    agent_owner.groups.clear()
    revoked = type(agent_owner).objects.get(pk=agent_owner.pk)
    assert list(profiles_for(user=revoked)) == []
    with pytest.raises(Http404):
        profile_for(user=revoked, pk=mine.pk)


def test_a_shared_group_member_without_the_permission_sees_nothing(
    agent_owner, member, admin, sshd
):
    profile = make_profile(agent_owner, sshd)
    family = Group.objects.create(name="family")
    member.groups.add(family)
    services.profile_share(profile=profile, groups=[family], actor=admin)
    assert list(profiles_for(user=member)) == []


def test_only_admins_share(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    with pytest.raises(Refused, match="admin"):
        services.profile_share(profile=profile, groups=[], actor=agent_owner)


# --- the pin


def test_moving_a_profile_forgets_its_host_key(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    services.profile_pin_host_key(profile=profile, key_line=sshd.host_key_line)
    services.profile_update(profile=profile, username=sshd.user, name="renamed")
    assert SSHProfile.objects.get(pk=profile.pk).host_key_fingerprint == sshd.host_fingerprint
    services.profile_update(profile=profile, port=sshd.port + 1)
    moved = SSHProfile.objects.get(pk=profile.pk)
    assert (moved.host_key, moved.host_key_fingerprint, moved.host_key_pinned_at) == ("", "", None)
    services.profile_pin_host_key(profile=moved, key_line=sshd.host_key_line)
    services.profile_update(profile=moved, host="localhost")
    assert not SSHProfile.objects.get(pk=profile.pk).is_pinned


def test_the_same_host_in_other_letters_keeps_the_pin(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd, host="Box.Example")
    services.profile_pin_host_key(profile=profile, key_line=sshd.host_key_line)
    services.profile_update(profile=profile, host="box.example", port=sshd.port)
    assert SSHProfile.objects.get(pk=profile.pk).is_pinned


# --- the check, against the real server


def test_the_first_check_shows_the_fingerprint_and_pins_nothing(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    result = services.profile_check(user=agent_owner, profile=profile)
    assert not result.ok and result.needs_acceptance
    assert result.fingerprint == sshd.host_fingerprint
    assert not SSHProfile.objects.get(pk=profile.pk).is_pinned


def test_accepting_pins_the_key_and_connects(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    result = services.profile_check(user=agent_owner, profile=profile, accept_host_key=True)
    assert result.ok and result.newly_pinned
    assert result.uname.startswith("Linux ")
    stored = SSHProfile.objects.get(pk=profile.pk)
    assert stored.host_key_fingerprint == sshd.host_fingerprint and stored.host_key_pinned_at
    again = services.profile_check(user=agent_owner, profile=stored)
    assert again.ok and not again.newly_pinned


def test_accepting_a_fingerprint_that_is_no_longer_shown_pins_nothing(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd)
    result = services.profile_check(
        user=agent_owner, profile=profile, accept_host_key=True, expected_fingerprint="SHA256:old"
    )
    assert not result.ok and "nothing was pinned" in result.message
    assert not SSHProfile.objects.get(pk=profile.pk).is_pinned


def test_a_changed_key_fails_the_check_and_is_not_replaced(agent_owner, fresh_sshd):
    profile = make_profile(agent_owner, fresh_sshd)
    services.profile_check(user=agent_owner, profile=profile, accept_host_key=True)
    old = fresh_sshd.host_fingerprint
    fresh_sshd.restart(new_host_key=True)
    result = services.profile_check(user=agent_owner, profile=profile, accept_host_key=True)
    assert not result.ok and isinstance(result.error, HostKeyChanged)
    assert result.message.startswith(f"host key changed: expected {old}, got ")
    assert SSHProfile.objects.get(pk=profile.pk).host_key_fingerprint == old


def test_password_profiles_check_too(agent_owner, sshd):
    profile = make_profile(agent_owner, sshd, key_text=None, password=sshd.password)
    assert services.profile_check(user=agent_owner, profile=profile, accept_host_key=True).ok


def test_only_the_owner_accepts_a_shared_profiles_key(agent_owner, agent_member, admin, sshd):
    profile = make_profile(agent_owner, sshd)
    family = Group.objects.create(name="family")
    agent_member.groups.add(family)
    services.profile_share(profile=profile, groups=[family], actor=admin)
    with pytest.raises(Refused, match="owner"):
        services.profile_check(user=agent_member, profile=profile, accept_host_key=True)
    services.profile_check(user=agent_owner, profile=profile, accept_host_key=True)
    assert services.profile_check(user=agent_member, profile=profile).ok


def test_checking_someone_elses_profile_is_refused(agent_owner, agent_member, sshd):
    theirs = make_profile(agent_member, sshd)
    with pytest.raises(Refused):
        services.profile_check(user=agent_owner, profile=theirs)


# --- secrets stay secret


def test_no_secret_in_logs_errors_or_reprs(agent_owner, sshd, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="asyncssh")  # quiet in settings; not here
    password = "pw-" + "Zq9" * 8
    by_password = make_profile(
        agent_owner, sshd, name="pw", key_text=None, password=password, port=sshd.port
    )
    by_key = make_profile(
        agent_owner, sshd, name="stranger", key_text=sshd.client_key, username="nobody"
    )
    results = []
    for profile in (by_password, by_key):
        services.profile_pin_host_key(profile=profile, key_line=sshd.host_key_line)
        results.append(services.profile_check(user=agent_owner, profile=profile))
    assert not any(r.ok for r in results)  # both refused: wrong password, unknown user
    key_body = "".join(sshd.client_key.splitlines()[1:-1])
    texts = [caplog.text, *(r.message for r in results), *(repr(r) for r in results)]
    texts += [repr(by_password), repr(by_key), str(by_password)]
    texts += [repr(services.profile_target(by_key)), repr(services.profile_target(by_password))]
    for text in texts:
        assert password not in text
        assert key_body[:40] not in text and key_body[-40:] not in text
    assert "refused" in results[0].message


# --- Django admin: see and share, nothing else


def test_admin_pages_show_no_secret_and_share_with_groups(client, admin, agent_owner, sshd):
    by_key = make_profile(agent_owner, sshd)
    by_password = make_profile(
        agent_owner, sshd, name="pw", key_text=None, password="admin-must-not-see-this"
    )
    family = Group.objects.create(name="family")
    client.force_login(admin)
    key_body = "".join(sshd.client_key.splitlines()[1:-1])
    for profile in (by_key, by_password):
        page = client.get(f"/admin/agents/sshprofile/{profile.pk}/change/")
        assert page.status_code == 200
        html = page.content.decode()
        assert key_body[:40] not in html and "admin-must-not-see-this" not in html
        for token in (profile.private_key_encrypted, profile.password_encrypted):
            assert not token or token[:40] not in html
        assert 'name="host"' not in html  # read-only: a host changed here would keep its pin
    listing = client.get("/admin/agents/sshprofile/").content.decode()
    assert "box" in listing and key_body[:40] not in listing
    response = client.post(
        f"/admin/agents/sshprofile/{by_key.pk}/change/", {"shared_groups": [family.pk]}
    )
    assert response.status_code == 302
    assert list(by_key.shared_groups.all()) == [family]
    assert client.get("/admin/agents/sshprofile/add/").status_code == 403
