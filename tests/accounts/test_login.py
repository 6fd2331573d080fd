"""Signing in and out: one error for every bad attempt, throttling with a clear
message, a fresh session key on sign-in, sign-up off unless an admin allows it."""

from urllib.parse import unquote

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY

from apps.accounts.models import User
from apps.instance.selectors import instance_settings
from tests.conftest import PASSWORD

GENERIC = "That username and password do not match an account."


def sign_in(client, username, password=PASSWORD, ip="10.0.0.5"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def test_the_login_page_is_served(client, db):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b"Sign in to Jarvis" in response.content


def test_a_person_signs_in_and_lands_on_chat(client, owner):
    response = sign_in(client, "olivia")
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session[SESSION_KEY] == str(owner.pk)


def test_signing_in_rotates_the_session_key(client, owner):
    client.get("/accounts/login/")
    session = client.session
    session["probe"] = "before"
    session.save()
    before = session.session_key
    sign_in(client, "olivia")
    assert client.session.session_key != before


@pytest.mark.parametrize("username,password", [("olivia", "wrong password!"), ("nobody", PASSWORD)])
def test_wrong_password_and_unknown_user_get_the_same_error(client, owner, username, password):
    response = sign_in(client, username, password)
    assert response.status_code == 200
    assert GENERIC in response.content.decode()
    assert SESSION_KEY not in client.session


def test_a_disabled_account_gets_the_same_error(client, owner):
    owner.is_active = False
    owner.save()
    response = sign_in(client, "olivia")
    assert GENERIC in response.content.decode()


def test_repeated_failures_for_one_name_are_throttled_even_with_the_right_password(client, owner):
    for attempt in range(settings.LOGIN_FAILURES_PER_USERNAME):
        sign_in(client, "olivia", "nope", ip=f"10.0.1.{attempt}")
    response = sign_in(client, "olivia", ip="10.0.2.1")
    assert response.status_code == 429
    assert "Too many failed sign-in attempts" in response.content.decode()
    assert SESSION_KEY not in client.session


def test_repeated_failures_from_one_address_are_throttled(client, owner, member):
    for attempt in range(settings.LOGIN_FAILURES_PER_IP):
        sign_in(client, f"guess{attempt}", "nope", ip="10.9.9.9")
    response = sign_in(client, "max", ip="10.9.9.9")
    assert response.status_code == 429
    # Someone else, from elsewhere, is unaffected.
    assert sign_in(client, "olivia", ip="10.0.0.7").status_code == 302


def test_the_throttle_lifts_after_the_window(client, owner, settings):
    settings.LOGIN_THROTTLE_SECONDS = 1
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
        sign_in(client, "olivia", "nope")
    assert sign_in(client, "olivia").status_code == 429
    import time

    time.sleep(1.2)
    assert sign_in(client, "olivia").status_code == 302


def test_logout_is_post_only_and_ends_the_session(client, owner):
    client.force_login(owner)
    assert client.get("/accounts/logout/").status_code == 405
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert SESSION_KEY not in client.session
    assert client.get("/settings/").status_code == 302


def test_the_admin_login_goes_through_the_throttled_page(client, db):
    response = client.get("/admin/login/?next=/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_next_url_on_another_site_is_ignored(client, owner):
    response = client.post(
        "/accounts/login/",
        {"username": "olivia", "password": PASSWORD, "next": "https://evil.example/"},
    )
    assert response["Location"] == "/"


class TestSignup:
    def test_it_is_off_by_default(self, client, db):
        response = client.get("/accounts/signup/")
        assert response.status_code == 403
        assert b"Sign-up is turned off" in response.content
        response = client.post(
            "/accounts/signup/",
            {
                "username": "eve",
                "password1": "a long passphrase 1",
                "password2": "a long passphrase 1",
            },
        )
        assert response.status_code == 403
        assert not User.objects.filter(username="eve").exists()

    def test_an_admin_can_turn_it_on(self, client, db):
        settings_row = instance_settings()
        settings_row.signup_enabled = True
        settings_row.save()
        response = client.post(
            "/accounts/signup/",
            {
                "username": "eve",
                "display_name": "Eve",
                "password1": "a long passphrase 1",
                "password2": "a long passphrase 1",
            },
        )
        assert response.status_code == 302
        eve = User.objects.get(username="eve")
        assert eve.is_household_member
        assert eve.display_name == "Eve"

    def test_a_taken_name_is_refused(self, client, owner):
        settings_row = instance_settings()
        settings_row.signup_enabled = True
        settings_row.save()
        response = client.post(
            "/accounts/signup/",
            {
                "username": "OLIVIA",
                "password1": "a long passphrase 1",
                "password2": "a long passphrase 1",
            },
        )
        assert b"That username is taken." in response.content


class TestAdminPages:
    def test_a_member_opening_the_admin_is_told_it_is_for_administrators(self, client, member):
        client.force_login(member)
        response = client.get("/admin/", follow=True)
        assert response.status_code == 403
        assert "You need to be an administrator" in response.content.decode()
        # Two hops, not a loop between the admin's login and Jarvis's.
        assert [url for url, _ in response.redirect_chain] == ["/admin/login/?next=/admin/"]

    def test_a_deep_admin_link_ends_on_the_same_page(self, client, member):
        client.force_login(member)
        response = client.get("/admin/accounts/user/", follow=True)
        assert response.status_code == 403
        assert len(response.redirect_chain) == 1

    def test_a_member_who_signs_in_with_next_admin_ends_on_the_notice(self, client, member):
        response = client.post(
            "/accounts/login/?next=/admin/",
            {"username": "max", "password": PASSWORD, "next": "/admin/"},
            follow=True,
        )
        assert response.status_code == 403
        assert "You need to be an administrator" in response.content.decode()
        assert len(response.redirect_chain) == 2

    def test_an_admin_gets_the_admin(self, client, admin):
        client.force_login(admin)
        response = client.get("/admin/", follow=True)
        assert response.status_code == 200
        assert response.redirect_chain == []
        assert "Jarvis administration" in response.content.decode()

    def test_a_stranger_is_sent_to_sign_in_keeping_where_they_were_going(self, client, db):
        response = client.get("/admin/accounts/user/", follow=True)
        assert (
            unquote(response.redirect_chain[-1][0]) == "/accounts/login/?next=/admin/accounts/user/"
        )
        assert "Sign in to Jarvis" in response.content.decode()
