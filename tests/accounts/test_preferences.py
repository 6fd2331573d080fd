"""The preferences page: display name, theme and password."""

from apps.accounts.models import User
from tests.conftest import PASSWORD


def test_preferences_are_saved(client, owner):
    client.force_login(owner)
    response = client.post("/settings/", {"display_name": "Liv", "theme": "dark"})
    assert response.status_code == 302
    owner.refresh_from_db()
    assert (owner.display_name, owner.theme) == ("Liv", "dark")
    page = client.get("/settings/").content.decode()
    assert '<html lang="en" data-theme="dark">' in page
    assert "Liv" in page


def test_an_unknown_theme_is_refused(client, owner):
    client.force_login(owner)
    client.post("/settings/", {"display_name": "Liv", "theme": "neon"})
    owner.refresh_from_db()
    assert owner.theme == User.Theme.SYSTEM


def test_the_header_toggle_switches_theme_and_returns(client, owner):
    client.force_login(owner)
    response = client.post("/settings/theme/", {"theme": "dark", "next": "/jobs/"})
    assert response["Location"] == "/jobs/"
    owner.refresh_from_db()
    assert owner.theme == "dark"


def test_changing_the_password_keeps_this_session(client, owner):
    client.force_login(owner)
    response = client.post(
        "/settings/password/",
        {
            "old_password": PASSWORD,
            "new_password1": "an entirely new passphrase",
            "new_password2": "an entirely new passphrase",
        },
    )
    assert response.status_code == 302
    owner.refresh_from_db()
    assert owner.check_password("an entirely new passphrase")
    assert client.get("/settings/").status_code == 200


def test_a_wrong_old_password_changes_nothing(client, owner):
    client.force_login(owner)
    response = client.post(
        "/settings/password/",
        {
            "old_password": "nope",
            "new_password1": "a new passphrase!",
            "new_password2": "a new passphrase!",
        },
    )
    assert response.status_code == 400
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)


def test_passwords_are_stored_with_argon2(owner):
    assert owner.password.startswith("argon2$")


def test_production_hashes_with_argon2_first():
    import jarvis_site.settings as production

    assert production.PASSWORD_HASHERS[0].endswith("Argon2PasswordHasher")


def test_the_preferences_page_requires_sign_in(client, db):
    assert client.get("/settings/").status_code == 302
