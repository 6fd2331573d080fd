"""Per-connection request options: an admin sets temperature, repeat penalty
or tool_choice once, and every request to that connection carries them."""

from __future__ import annotations

import pytest

from apps.instance.forms import ConnectionForm
from apps.instance.models import ModelEntry
from apps.instance.services import connection_create
from apps.llm import ToolSpec, provider_config_for
from apps.llm.config import SMALL_MODEL_TEMPERATURE
from apps.llm.openai import request_body

pytestmark = pytest.mark.django_db

TOOL = ToolSpec(name="search_notes", description="", parameters={"type": "object"})


def entry(**options) -> ModelEntry:
    connection = connection_create(
        name="home", kind="openai", base_url="http://127.0.0.1:8080/v1", location="local"
    )
    connection.request_options = options
    connection.save()
    return ModelEntry.objects.create(connection=connection, model_id="qwen")


def test_every_request_carries_the_connections_options():
    config = provider_config_for(entry(temperature=0.2, repeat_penalty=1.1, tool_choice="required"))
    body = request_body(config, system="s", turns=[], tools=[TOOL])
    assert (body["temperature"], body["repeat_penalty"], body["tool_choice"]) == (
        0.2,
        1.1,
        "required",
    )
    # A request without tools (the citation retry) must not carry tool_choice.
    assert "tool_choice" not in request_body(config, system="s", turns=[], tools=[])


def test_a_small_model_is_sent_a_low_temperature_unless_the_admin_set_one():
    model = entry()
    assert "temperature" not in request_body(
        provider_config_for(model), system="s", turns=[], tools=[]
    )
    model.search_only = True
    body = request_body(provider_config_for(model), system="s", turns=[], tools=[])
    assert body["temperature"] == SMALL_MODEL_TEMPERATURE
    model.connection.request_options = {"temperature": 0.7}
    assert provider_config_for(model).extra["temperature"] == 0.7


def test_openrouter_privacy_cannot_be_loosened_by_an_option():
    connection = connection_create(
        name="router", kind="openai", base_url="https://openrouter.ai/api/v1", location="cloud"
    )
    connection.request_options = {"temperature": 0.5}
    connection.save()
    model = ModelEntry.objects.create(connection=connection, model_id="m")
    extra = provider_config_for(model).extra
    assert extra["temperature"] == 0.5 and extra["provider"]["data_collection"] == "deny"


@pytest.mark.parametrize(
    ("options", "kind", "error"),
    [
        ('{"temperature": "hot"}', "openai", "must be a number"),
        ('{"provider": {"data_collection": "allow"}}', "openai", "not an option"),
        ('{"tool_choice": "always"}', "openai", "tool_choice must be one of"),
        ('{"repeat_penalty": 1.1}', "anthropic", "not an option"),
    ],
)
def test_the_form_refuses_options_jarvis_does_not_send(options, kind, error):
    form = ConnectionForm(
        data={
            "name": "home",
            "kind": kind,
            "base_url": "http://127.0.0.1:8080/v1",
            "location": "local",
            "enabled": "on",
            "request_options": options,
        }
    )
    assert not form.is_valid()
    assert error in str(form.errors["request_options"])


def test_the_form_stores_good_options():
    form = ConnectionForm(
        data={
            "name": "home",
            "kind": "openai",
            "base_url": "http://127.0.0.1:8080/v1",
            "location": "",
            "enabled": "on",
            "request_options": '{"temperature": 0.1, "repeat_penalty": 1.15}',
        }
    )
    assert form.is_valid(), form.errors
    assert form.save().request_options == {"temperature": 0.1, "repeat_penalty": 1.15}
