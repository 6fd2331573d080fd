"""LLM connections and the model catalogue: keys at rest, who may use which
model, defaults, labels, and the admin pages (keys write-only, the check action)."""

from __future__ import annotations

import logging
import re

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.db import connection as db

from apps.accounts.models import User
from apps.core import crypto
from apps.core.errors import AlreadyExists, Refused
from apps.instance import services
from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings
from apps.llm import ModelInfo
from apps.llm import services as llm_services
from apps.llm.selectors import default_model_for, model_for, models_for
from tests.instance.conftest import CLOUD_KEY


def grant_cloud(user: User) -> User:
    user.user_permissions.add(Permission.objects.get(codename="use_cloud_models"))
    return User.objects.get(pk=user.pk)  # has_perm caches; a fresh object re-reads


def labels(user: User) -> set[str]:
    return {m.label for m in models_for(user=user)}


# --- Keys at rest


def test_the_stored_column_never_holds_the_plain_key(cloud, caplog):
    raw = Connection.objects.filter(pk=cloud.pk).values_list("api_key_encrypted", flat=True).get()
    assert raw and CLOUD_KEY not in raw
    with db.cursor() as cursor:
        cursor.execute("SELECT api_key_encrypted FROM instance_connection")
        assert all(CLOUD_KEY not in row[0] for row in cursor.fetchall())
    fresh = Connection.objects.get(pk=cloud.pk)
    assert fresh.api_key == CLOUD_KEY
    assert fresh.masked_key == "sk-…9f2c"
    assert CLOUD_KEY not in caplog.text


def test_a_blank_key_clears_and_no_key_is_none(cloud, local):
    assert local.api_key is None and local.masked_key == ""
    services.connection_set_api_key(connection=cloud, api_key="  ")
    cloud.refresh_from_db()
    assert cloud.api_key_encrypted == "" and cloud.api_key is None


def test_a_key_from_a_lost_fernet_key_still_lists(cloud, settings):
    from cryptography.fernet import Fernet

    settings.FERNET_KEYS = [Fernet.generate_key().decode()]
    assert "cannot decrypt" in cloud.masked_key
    with pytest.raises(crypto.SecretUndecryptable):
        cloud.api_key  # noqa: B018


def test_reencrypt_moves_keys_to_the_new_first_key(cloud, settings):
    from cryptography.fernet import Fernet

    old = crypto.key_file().read_text().strip()
    new = Fernet.generate_key().decode()
    settings.FERNET_KEYS = [new, old]
    assert services.connections_reencrypt() == 1
    settings.FERNET_KEYS = [new]
    assert Connection.objects.get(pk=cloud.pk).api_key == CLOUD_KEY


# --- Connection rules


def test_location_defaults_to_cloud_and_unknown_is_cloud(cloud, local):
    assert Connection().location == "cloud"
    assert cloud.location == "cloud" and cloud.is_cloud
    assert not local.is_cloud
    assert Connection(location="").is_cloud and Connection(location="lan").is_cloud


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org/v1",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "localhost:11434",
        "http://",
        "https://user:sk-secret@api.example/v1",
        "http://host:99999/v1",
        "http://host/v1?key=1",
        "http://ho st/v1",
    ],
)
def test_base_url_must_be_http_or_https_with_a_host(db, url):
    with pytest.raises(ValidationError) as caught:
        services.connection_create(name="x", kind="openai", base_url=url)
    assert "base_url" in caught.value.message_dict
    assert not Connection.objects.exists()


def test_household_urls_are_accepted_and_the_trailing_slash_dropped(db):
    made = services.connection_create(
        name="box", kind="openai", base_url="http://gpu-box:11434/v1/", location="local"
    )
    assert made.base_url == "http://gpu-box:11434/v1"
    services.connection_create(name="v6", kind="anthropic", base_url="http://[fd00::2]:8080")


def test_names_are_unique_case_insensitively_and_have_no_colon(local):
    with pytest.raises(AlreadyExists):
        services.connection_create(name="Ollama", kind="openai", base_url="http://h")
    with pytest.raises(ValidationError):
        services.connection_create(name="a:b", kind="openai", base_url="http://h")
    with pytest.raises(ValidationError):
        services.connection_create(name="x", kind="gemini", base_url="http://h")


def test_model_labels_and_the_unique_pair(llama, local, cloud):
    assert llama.label == "ollama:llama3.1:8b"
    assert llama.name == "llama3.1:8b" and not llama.is_cloud
    with pytest.raises(AlreadyExists):
        services.model_add(connection=local, model_id="llama3.1:8b")
    same_id_elsewhere = services.model_add(connection=cloud, model_id="llama3.1:8b")
    assert same_id_elsewhere.is_cloud


def test_model_add_with_default_sets_the_instance_default(local):
    entry = services.model_add(connection=local, model_id="qwen3", default=True)
    assert instance_settings().default_model == entry


def test_deleting_a_model_clears_defaults_that_point_at_it(owner, llama):
    services.default_model_set(model=llama)
    llm_services.user_default_model_set(user=owner, model=llama)
    llama.delete()
    owner.refresh_from_db()
    assert owner.default_model is None and instance_settings().default_model is None


# --- Who may use which model


def test_members_see_local_models_open_to_everyone(owner, llama, claude):
    assert labels(owner) == {"ollama:llama3.1:8b"}


def test_cloud_models_need_the_permission(owner, llama, claude):
    owner = grant_cloud(owner)
    assert labels(owner) == {"ollama:llama3.1:8b", "openrouter:anthropic/claude-sonnet"}


def test_cloud_permission_through_a_group(owner, claude):
    group = Group.objects.create(name="cloudy")
    group.permissions.add(Permission.objects.get(codename="use_cloud_models"))
    owner.groups.add(group)
    assert labels(User.objects.get(pk=owner.pk)) == {claude.label}


def test_groups_restrict_a_model(owner, member, outsider, local):
    adults = Group.objects.create(name="adults")
    member.groups.add(adults)
    big = services.model_add(connection=local, model_id="big", groups=[adults])
    services.model_add(connection=local, model_id="small")
    assert labels(member) == {"ollama:big", "ollama:small"}
    assert labels(owner) == {"ollama:small"}
    assert labels(outsider) == {"ollama:small"}
    # Two matching groups do not list the model twice.
    kids = Group.objects.create(name="kids")
    big.groups.add(kids)
    member.groups.add(kids)
    assert [m.label for m in models_for(user=member)].count("ollama:big") == 1


def test_superusers_see_everything(admin, owner, llama, claude):
    secret = services.model_add(
        connection=llama.connection, model_id="x", groups=[Group.objects.create(name="g")]
    )
    assert labels(admin) == {llama.label, claude.label, secret.label}


def test_disabled_models_connections_and_people_see_nothing(owner, llama, local):
    services.model_add(connection=local, model_id="off", enabled=False)
    assert labels(owner) == {llama.label}
    Connection.objects.filter(pk=local.pk).update(enabled=False)
    assert labels(owner) == set()
    Connection.objects.filter(pk=local.pk).update(enabled=True)
    owner.is_active = False
    assert labels(owner) == set()


def test_an_unknown_location_value_is_treated_as_cloud(owner, llama, local):
    Connection.objects.filter(pk=local.pk).update(location="somewhere")
    assert labels(owner) == set()


# --- Defaults


def test_default_model_for_falls_back(owner, llama, claude, local):
    assert default_model_for(user=owner) is None
    services.default_model_set(model=llama)
    assert default_model_for(user=owner) == llama
    qwen = services.model_add(connection=local, model_id="qwen3")
    llm_services.user_default_model_set(user=owner, model=qwen)
    assert default_model_for(user=owner) == qwen
    # Their own default is switched off: back to the instance default.
    ModelEntry.objects.filter(pk=qwen.pk).update(enabled=False)
    assert default_model_for(user=owner) == llama
    # The instance default is cloud and they may not use it: nothing.
    services.default_model_set(model=claude)
    assert default_model_for(user=owner) is None
    assert default_model_for(user=grant_cloud(owner)) == claude


def test_a_person_cannot_pick_a_default_they_may_not_use(owner, claude):
    with pytest.raises(Refused):
        llm_services.user_default_model_set(user=owner, model=claude)


# --- Resolving a label


def test_resolve_a_catalogue_model(owner, llama):
    assert model_for(user=owner, label=" ollama:llama3.1:8b ") == llama


def test_resolve_refuses_cloud_without_the_permission(owner, claude):
    with pytest.raises(Refused, match="you may not use cloud models"):
        model_for(user=owner, label=claude.label)
    assert model_for(user=grant_cloud(owner), label=claude.label) == claude


@pytest.mark.parametrize("label", ["", "ollama", "ollama:", ":llama3.1:8b", "ollama:nope", "x:y"])
def test_resolve_refuses_unknown_labels(owner, llama, label):
    with pytest.raises(Refused, match="no model labelled"):
        model_for(user=owner, label=label)


def test_resolve_refuses_models_turned_off_or_for_other_groups(owner, local, llama):
    services.model_add(connection=local, model_id="off", enabled=False)
    with pytest.raises(Refused, match="turned off"):
        model_for(user=owner, label="ollama:off")
    services.model_add(
        connection=local, model_id="big", groups=[Group.objects.create(name="adults")]
    )
    with pytest.raises(Refused, match="not available to you"):
        model_for(user=owner, label="ollama:big")


def test_admins_may_name_an_uncatalogued_model_of_an_enabled_connection(admin, owner, local):
    entry = model_for(user=admin, label="ollama:mistral-small:24b")
    assert entry.pk is None and entry.connection == local
    assert entry.model_id == "mistral-small:24b" and entry.label == "ollama:mistral-small:24b"
    assert not entry.supports_tools and not ModelEntry.objects.exists()
    with pytest.raises(Refused, match="no model labelled"):
        model_for(user=owner, label="ollama:mistral-small:24b")
    with pytest.raises(Refused, match="no model labelled"):
        model_for(user=admin, label="nowhere:mistral")
    Connection.objects.filter(pk=local.pk).update(enabled=False)
    with pytest.raises(Refused, match="no model labelled"):
        model_for(user=admin, label="ollama:mistral-small:24b")


def test_staff_without_the_cloud_permission_cannot_free_text_a_cloud_model(owner, cloud):
    owner.is_staff = True
    owner.save()
    with pytest.raises(Refused, match="you may not use cloud models"):
        model_for(user=owner, label="openrouter:some/model")
    assert model_for(user=grant_cloud(owner), label="openrouter:some/model").pk is None


# --- Admin pages


@pytest.fixture
def admin_client(client, admin):
    client.force_login(admin)
    return client


def change_url(connection: Connection) -> str:
    return f"/admin/instance/connection/{connection.pk}/change/"


def form_data(connection: Connection, **extra) -> dict:
    data = {
        "name": connection.name,
        "kind": connection.kind,
        "base_url": connection.base_url,
        "location": connection.location,
        "enabled": "on",
        "api_key": "",
        "models-TOTAL_FORMS": "0",
        "models-INITIAL_FORMS": "0",
        "models-MIN_NUM_FORMS": "0",
        "models-MAX_NUM_FORMS": "1000",
    }
    data.update(extra)
    return data


def test_the_change_form_never_contains_the_plain_key(admin_client, cloud):
    response = admin_client.get(change_url(cloud))
    assert response.status_code == 200
    html = response.content.decode()
    assert CLOUD_KEY not in html
    assert cloud.api_key_encrypted not in html
    assert "sk-…9f2c" in html
    assert re.search(r'<input type="password" name="api_key"[^>]*>', html)
    assert 'name="clear_api_key"' in html
    listing = admin_client.get("/admin/instance/connection/").content.decode()
    assert CLOUD_KEY not in listing and "sk-…9f2c" in listing


def test_saving_with_a_blank_key_keeps_it_and_a_new_key_replaces_it(admin_client, cloud):
    response = admin_client.post(change_url(cloud), form_data(cloud, base_url="https://b.example"))
    assert response.status_code == 302
    cloud.refresh_from_db()
    assert cloud.api_key == CLOUD_KEY and cloud.base_url == "https://b.example"
    admin_client.post(change_url(cloud), form_data(cloud, api_key="sk-new-key-000000000000abcd"))
    cloud.refresh_from_db()
    assert cloud.api_key == "sk-new-key-000000000000abcd"
    admin_client.post(change_url(cloud), form_data(cloud, clear_api_key="on"))
    cloud.refresh_from_db()
    assert cloud.api_key is None


def test_new_key_and_clear_together_is_an_error(admin_client, cloud):
    response = admin_client.post(
        change_url(cloud), form_data(cloud, api_key="sk-other", clear_api_key="on")
    )
    assert response.status_code == 200
    assert "not both" in response.content.decode()
    assert "sk-other" not in response.content.decode()
    cloud.refresh_from_db()
    assert cloud.api_key == CLOUD_KEY


def test_adding_through_admin_defaults_to_cloud_and_encrypts(admin_client):
    page = admin_client.get("/admin/instance/connection/add/").content.decode()
    # The location follows the address unless the admin chooses; a public
    # address is cloud (below), and the page says what each location means.
    assert re.search(r'<option value="" selected>From the address', page)
    assert "A public address counts as cloud" in page and "never go there" in page
    data = form_data(
        Connection(name="anth", kind="anthropic", base_url="https://api.anthropic.com")
    )
    data.update(location="", api_key="sk-ant-api03-abcdefghijklmnopqrstuvwxyz")
    response = admin_client.post("/admin/instance/connection/add/", data)
    assert response.status_code == 302
    made = Connection.objects.get(name="anth")
    assert made.is_cloud and made.api_key == "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"
    assert "sk-ant-api03" not in made.api_key_encrypted


def test_a_bad_url_is_refused_in_admin(admin_client):
    data = form_data(Connection(name="bad", kind="openai", base_url="ftp://files.example"))
    response = admin_client.post("/admin/instance/connection/add/", data)
    assert response.status_code == 200 and not Connection.objects.exists()


def test_members_cannot_reach_the_admin(client, owner, cloud):
    client.force_login(owner)
    response = client.get(change_url(cloud))
    assert response.status_code == 302 and "/login" in response["Location"]


def test_model_admin_filters_by_connection(admin_client, llama, claude):
    page = admin_client.get(
        f"/admin/instance/modelentry/?connection__id__exact={llama.connection_id}"
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "ollama:llama3.1:8b" in html and "anthropic/claude-sonnet" not in html


def test_make_default_action(admin_client, llama):
    admin_client.post(
        "/admin/instance/modelentry/",
        {"action": "make_default", "_selected_action": [llama.pk]},
    )
    assert instance_settings().default_model == llama


# --- Instance settings stay one row


def test_instance_settings_admin_is_a_singleton(admin_client):
    response = admin_client.get("/admin/instance/instancesettings/")
    assert response.status_code == 302
    assert response["Location"].endswith("/admin/instance/instancesettings/1/change/")
    assert admin_client.get("/admin/instance/instancesettings/add/").status_code == 403


# --- Checking an endpoint


def test_check_connection_passes_the_connection_and_sorts_ids(monkeypatch, cloud):
    seen = []

    async def list_models(config):
        seen.append(config)
        return [ModelInfo("b-model"), ModelInfo("a-model"), ModelInfo("b-model")]

    monkeypatch.setattr("apps.llm.services.describe_models", list_models)
    result = llm_services.connection_check(connection=cloud)
    assert result.ok and result.models == ["a-model", "b-model"] and result.error == ""
    (config,) = seen
    assert (config.kind, config.base_url, config.api_key, config.model) == (
        "openai",
        "https://openrouter.example/api/v1",
        CLOUD_KEY,
        "",
    )


def test_a_failed_check_never_shows_the_key(monkeypatch, cloud, caplog):
    from apps.llm import ProviderError

    async def provider_error(config):
        raise ProviderError(f"401 from endpoint: bad key {config.api_key}")

    async def crash(config):
        raise RuntimeError(f"headers={{'Authorization': 'Bearer {config.api_key}'}}")

    for failing in (provider_error, crash):
        monkeypatch.setattr("apps.llm.services.describe_models", failing)
        with caplog.at_level(logging.INFO):
            result = llm_services.connection_check(connection=cloud)
        assert not result.ok and result.models == []
        assert CLOUD_KEY not in result.error and "[redacted]" in result.error
        assert CLOUD_KEY not in caplog.text


def test_the_admin_check_action_reports_models(monkeypatch, admin_client, cloud):
    async def list_models(config):
        return [ModelInfo(f"m{i:02}") for i in range(45)]

    monkeypatch.setattr("apps.llm.services.describe_models", list_models)
    response = admin_client.post(
        "/admin/instance/connection/",
        {"action": "check_connections", "_selected_action": [cloud.pk]},
        follow=True,
    )
    html = response.content.decode()
    assert "Check of openrouter: 45 models: m00, m01" in html and "and 5 more" in html
    assert CLOUD_KEY not in html


def test_the_admin_add_found_models_action(monkeypatch, admin_client, local, llama):
    async def list_models(config):
        return [ModelInfo(name) for name in ("llama3.1:8b", "qwen3:32b", "gemma3")]

    monkeypatch.setattr("apps.llm.services.describe_models", list_models)
    admin_client.post(
        "/admin/instance/connection/",
        {"action": "add_found_models", "_selected_action": [local.pk]},
    )
    assert sorted(local.models.values_list("model_id", flat=True)) == [
        "gemma3",
        "llama3.1:8b",
        "qwen3:32b",
    ]
    assert ModelEntry.objects.get(pk=llama.pk).supports_tools  # existing entry untouched


# --- The check action against a real (fake) OpenAI-compatible server


def test_the_admin_check_action_against_a_fake_server(admin_client):
    from tests.fakes.llm import FakeOpenAI

    with FakeOpenAI(models=["qwen3:8b", "llama3.1:8b"], api_key=CLOUD_KEY) as fake:
        made = services.connection_create(
            name="fake", kind="openai", base_url=fake.base_url, api_key=CLOUD_KEY
        )
        response = admin_client.post(
            "/admin/instance/connection/",
            {"action": "check_connections", "_selected_action": [made.pk]},
            follow=True,
        )
        html = response.content.decode()
        assert "Check of fake: 2 models: llama3.1:8b, qwen3:8b" in html
        assert fake.requests[-1].headers["authorization"] == f"Bearer {CLOUD_KEY}"

        wrong = "sk-wrong-key-0000000000000000beef"
        services.connection_set_api_key(connection=made, api_key=wrong)
        response = admin_client.post(
            "/admin/instance/connection/",
            {"action": "check_connections", "_selected_action": [made.pk]},
            follow=True,
        )
        html = response.content.decode()
        assert "Check of fake failed:" in html and "401" in html
        assert wrong not in html and CLOUD_KEY not in html


def test_check_connection_reports_an_endpoint_that_is_down(db):
    from tests.support.processes import free_port

    made = services.connection_create(
        name="down", kind="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", location="local"
    )
    result = llm_services.connection_check(connection=made)
    assert not result.ok and result.error and result.models == []


def test_an_admin_writes_a_note_for_a_model_in_its_admin_page(admin_client, llama):
    page = admin_client.get(f"/admin/instance/modelentry/{llama.pk}/change/").content.decode()
    assert "Note for this model" in page
    data = {
        "connection": llama.connection_id,
        "model_id": llama.model_id,
        "display_name": "",
        "context_length": 0,
        "enabled": "on",
        "supports_tools": "on",
        "prompt_note": "This model needs short prompts.",
    }
    admin_client.post(f"/admin/instance/modelentry/{llama.pk}/change/", data)
    llama.refresh_from_db()
    assert llama.prompt_note == "This model needs short prompts."
