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


def _models():
    from apps.instance.services import connection_create, model_add

    home = connection_create(
        name="home", kind="openai", base_url="http://127.0.0.1:9/v1", location="local"
    )
    cloud = connection_create(
        name="cloud", kind="openai", base_url="https://api.example.com/v1", location="cloud"
    )
    return model_add(connection=home, model_id="llama"), model_add(connection=cloud, model_id="big")


def test_a_person_picks_their_default_model_among_those_they_may_use(client, owner):
    local, cloud = _models()
    client.force_login(owner)
    page = client.get("/settings/").content.decode()
    assert "llama · home (local)" in page
    assert "big · cloud" not in page  # no cloud permission: not offered

    client.post("/settings/assistant/", {"default_model": local.pk, "response_style": ""})
    owner.refresh_from_db()
    assert owner.default_model == local

    response = client.post("/settings/assistant/", {"default_model": cloud.pk})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    owner.refresh_from_db()
    assert owner.default_model == local


def test_response_style_equal_to_the_default_stores_nothing_and_revert_restores_it(client, owner):
    from apps.instance.prompts import DEFAULT_RESPONSE_STYLE, response_style_for

    client.force_login(owner)
    page = client.get("/settings/").content.decode()
    assert "lead with the answer" in page  # the default is shown, ready to edit
    assert "Revert the response style" not in page

    # The browser sends the unchanged default back with CRLF line ends.
    client.post(
        "/settings/assistant/",
        {"default_model": "", "response_style": DEFAULT_RESPONSE_STYLE.replace("\n", "\r\n")},
    )
    owner.refresh_from_db()
    assert owner.response_style == ""

    client.post("/settings/assistant/", {"default_model": "", "response_style": "Answer in haiku."})
    owner.refresh_from_db()
    assert response_style_for(owner) == "Answer in haiku."
    assert "Revert the response style" in client.get("/settings/").content.decode()

    client.post("/settings/assistant/revert-style/")
    owner.refresh_from_db()
    assert response_style_for(owner) == DEFAULT_RESPONSE_STYLE


def test_assistant_preferences_need_sign_in_and_csrf(client, owner):
    assert client.post("/settings/assistant/", {"response_style": "x"}).status_code == 302
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(owner)
    assert strict.post("/settings/assistant/", {"response_style": "x"}).status_code == 403
    owner.refresh_from_db()
    assert owner.response_style == ""
