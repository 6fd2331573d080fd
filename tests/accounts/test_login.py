"""Signing in and out: one error for every bad attempt, throttling with a clear
message, a fresh session key on sign-in, sign-up off unless an admin allows it."""

import time
from datetime import timedelta
from urllib.parse import unquote

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.test import Client
from django.utils import timezone

from apps.accounts.models import LoginFailure, User
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
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
        sign_in(client, "olivia", "nope", ip="10.0.1.1")
    response = sign_in(client, "olivia", ip="10.0.1.1")
    assert response.status_code == 429
    assert "Too many failed sign-in attempts for this name from your address" in (
        response.content.decode()
    )
    assert SESSION_KEY not in client.session


def test_the_refusal_says_when_to_try_again(client, owner, settings):
    settings.LOGIN_THROTTLE_SECONDS = 600
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
        sign_in(client, "olivia", "nope")
    first = LoginFailure.objects.order_by("at").first().at
    response = sign_in(client, "olivia")
    retry_at = timezone.localtime(first + timedelta(seconds=600)).strftime("%H:%M")
    assert f"Try again at {retry_at} (in about 10 minutes)." in response.content.decode()


def test_a_locked_name_is_not_checked_again_until_the_lock_lifts(client, owner):
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME + 5):
        sign_in(client, "olivia", "nope")
    # Refused attempts are not evaluated and not counted: the address is not
    # pushed towards its own limit by someone hammering one name.
    assert LoginFailure.objects.count() == settings.LOGIN_FAILURES_PER_USERNAME


def test_a_lock_on_one_name_does_not_block_another_person_at_the_same_address(
    client, owner, member
):
    # Behind one home router everyone shares an address.
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME + 3):
        sign_in(client, "olivia", "nope", ip="192.168.1.1")
    assert sign_in(client, "olivia", ip="192.168.1.1").status_code == 429
    assert sign_in(Client(), "max", ip="192.168.1.1").status_code == 302


def test_a_name_locked_on_one_address_still_signs_in_from_another(client, owner):
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
        sign_in(client, "olivia", "nope", ip="10.0.1.1")
    assert sign_in(client, "olivia", ip="10.0.1.2").status_code == 302


@pytest.mark.parametrize(
    "variant", ["Olivia", " olivia ", "OLIVIA", "\uff4f\uff4c\uff49\uff56\uff49\uff41"]
)
def test_spellings_of_one_name_share_its_count(client, owner, variant):
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME - 1):
        sign_in(client, "olivia", "nope")
    sign_in(client, variant, "nope")
    assert sign_in(client, "olivia").status_code == 429


def test_repeated_failures_from_one_address_are_throttled(client, owner, member):
    for attempt in range(settings.LOGIN_FAILURES_PER_IP):
        sign_in(client, f"guess{attempt}", "nope", ip="10.9.9.9")
    response = sign_in(client, "max", ip="10.9.9.9")
    assert response.status_code == 429
    assert "Too many failed sign-in attempts from your address" in response.content.decode()
    # Someone else, from elsewhere, is unaffected.
    assert sign_in(client, "olivia", ip="10.0.0.7").status_code == 302


def test_a_right_password_forgives_that_names_failures_from_that_address(client, owner):
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME - 1):
        sign_in(client, "olivia", "nope")
    assert sign_in(client, "olivia").status_code == 302
    assert not LoginFailure.objects.exists()


def test_the_throttle_lifts_after_the_window(client, owner, settings):
    settings.LOGIN_THROTTLE_SECONDS = 1
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
        sign_in(client, "olivia", "nope")
    assert sign_in(client, "olivia").status_code == 429
    time.sleep(1.2)
    assert sign_in(client, "olivia").status_code == 302


def test_admins_see_recent_failures_in_the_admin(client, owner, admin):
    sign_in(Client(), "olivia", "nope", ip="10.0.3.3")
    client.force_login(admin)
    page = client.get("/admin/accounts/loginfailure/").content.decode()
    assert "olivia" in page and "10.0.3.3" in page


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
