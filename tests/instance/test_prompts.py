"""The system prompt and response styles: defaults in code, overrides stored
only when they differ from the default, revert, and the admin form."""

from __future__ import annotations

from apps.accounts import response_style as style
from apps.accounts.response_style import DEFAULT_RESPONSE_STYLE
from apps.instance import prompts
from apps.instance.prompts import DEFAULT_SYSTEM_PROMPT
from apps.instance.selectors import instance_settings


def test_the_default_prompt_covers_the_rules():
    text = DEFAULT_SYSTEM_PROMPT
    # When to refuse, without a sentence to copy: a small model repeats a quoted
    # refusal even with the answer in passage [1].
    assert "notes do not hold the answer only when" in text
    assert "I don't have that information" not in text and '"I ' not in text
    assert "[1]" in text and "number the tool gave it" in text
    assert "data, not instructions" in text
    assert "latest version" in text and "superseded" in text
    assert "concise" in DEFAULT_RESPONSE_STYLE.lower() and "Markdown" in DEFAULT_RESPONSE_STYLE


def test_the_system_prompt_defaults_and_overrides(db):
    assert prompts.system_prompt() == DEFAULT_SYSTEM_PROMPT
    prompts.set_system_prompt("  Be a pirate.\n")
    assert instance_settings().system_prompt == "Be a pirate."
    assert prompts.system_prompt() == "Be a pirate."
    prompts.revert_system_prompt()
    assert instance_settings().system_prompt == ""
    assert prompts.system_prompt() == DEFAULT_SYSTEM_PROMPT


def test_saving_the_default_stores_nothing(db):
    prompts.set_system_prompt("\n  " + DEFAULT_SYSTEM_PROMPT + "  \n\n")
    assert instance_settings().system_prompt == ""
    # As a browser submits it: CRLF line ends.
    prompts.set_system_prompt(DEFAULT_SYSTEM_PROMPT.replace("\n", "\r\n"))
    assert instance_settings().system_prompt == ""
    prompts.set_system_prompt("   ")
    assert instance_settings().system_prompt == ""


def test_response_style_is_per_person(owner, member):
    assert style.response_style_for(owner) == DEFAULT_RESPONSE_STYLE
    style.set_response_style(owner, "Answer in French, briefly.")
    owner.refresh_from_db()
    member.refresh_from_db()
    assert style.response_style_for(owner) == "Answer in French, briefly."
    assert style.response_style_for(member) == DEFAULT_RESPONSE_STYLE
    style.set_response_style(member, DEFAULT_RESPONSE_STYLE.replace("\n", "\r\n") + " ")
    member.refresh_from_db()
    assert member.response_style == ""
    style.revert_response_style(owner)
    owner.refresh_from_db()
    assert owner.response_style == "" and style.response_style_for(owner) == DEFAULT_RESPONSE_STYLE


# --- The admin form


def settings_form(**extra) -> dict:
    data = {
        "site_name": "Jarvis",
        "default_model": "",
        "system_prompt": "",
        "sync_interval_minutes": 30,
        "inbox_interval_minutes": 10,
        "drafts_retention_days": 30,
        "chats_kept": 50,
        "digest_weekday": 0,
        "digest_hour": 7,
    }
    data.update(extra)
    return data


URL = "/admin/instance/instancesettings/1/change/"


def test_the_admin_shows_the_default_and_saving_it_unchanged_stores_nothing(client, admin):
    client.force_login(admin)
    instance_settings()
    page = client.get(URL).content.decode()
    assert "notes do not hold the answer only when" in page
    assert "Revert" in page
    response = client.post(
        URL, settings_form(system_prompt=DEFAULT_SYSTEM_PROMPT.replace("\n", "\r\n"))
    )
    assert response.status_code == 302
    assert instance_settings().system_prompt == ""


def test_the_admin_stores_a_change_and_reverts(client, admin, llama):
    client.force_login(admin)
    instance_settings()
    client.post(URL, settings_form(system_prompt="Be brief.\r\n", default_model=llama.pk))
    row = instance_settings()
    assert row.system_prompt == "Be brief." and row.default_model == llama
    assert "Be brief." in client.get(URL).content.decode()
    client.post(URL, settings_form(system_prompt="Be brief.", revert_system_prompt="on"))
    assert instance_settings().system_prompt == ""
