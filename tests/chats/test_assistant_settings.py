"""Settings → Assistant: a person's default model and response style, and the
Settings menu that links it with the profile page."""

from django.test import Client

from apps.accounts.response_style import DEFAULT_RESPONSE_STYLE, response_style_for
from apps.instance.services import connection_create, model_add


def test_the_settings_menu_links_profile_and_assistant(client, owner):
    client.force_login(owner)
    for url in ("/settings/", "/settings/assistant/"):
        page = client.get(url).content.decode()
        assert 'href="/settings/"' in page and 'href="/settings/assistant/"' in page
        assert f'href="{url}" aria-current="page"' in page


def _models():
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
    page = client.get("/settings/assistant/").content.decode()
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
    client.force_login(owner)
    page = client.get("/settings/assistant/").content.decode()
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
    assert "Revert the response style" in client.get("/settings/assistant/").content.decode()

    client.post("/settings/assistant/revert-style/")
    owner.refresh_from_db()
    assert response_style_for(owner) == DEFAULT_RESPONSE_STYLE


def test_assistant_preferences_need_sign_in_and_csrf(client, owner):
    assert client.post("/settings/assistant/", {"response_style": "x"}).status_code == 302

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(owner)
    assert strict.post("/settings/assistant/", {"response_style": "x"}).status_code == 403
    owner.refresh_from_db()
    assert owner.response_style == ""
