"""Connecting a model works the first time: the location follows the address
unless the admin chooses, and Check probes tool support with one tiny request
and makes the first model the default when the instance has none."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from apps.instance.forms import ConnectionForm, location_for_url
from apps.instance.models import ModelEntry
from apps.instance.selectors import instance_settings
from apps.instance.services import connection_create
from tests.fakes.llm import FakeOpenAI, Reply

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "location"),
    [
        ("http://127.0.0.1:11434/v1", "local"),
        ("http://localhost:8080/v1", "local"),
        ("http://192.168.1.20:11434/v1", "local"),
        ("http://10.0.0.5/v1", "local"),
        ("http://[::1]:8080/v1", "local"),
        ("http://nas.lan:8080/v1", "local"),
        ("http://gpu-box.local:11434/v1", "local"),
        ("https://openrouter.ai/api/v1", "cloud"),
        ("https://8.8.8.8/v1", "cloud"),
        ("https://api.anthropic.com", "cloud"),
    ],
)
def test_the_location_suggested_for_an_address(url, location):
    assert location_for_url(url) == location


def form(**data):
    return ConnectionForm(data={"name": "home", "kind": "openai", "enabled": "on", **data})


def test_a_loopback_connection_left_to_the_address_is_local():
    connection = form(base_url="http://127.0.0.1:11434/v1", location="")
    assert connection.is_valid(), connection.errors
    assert connection.save().location == "local"


def test_a_public_address_left_to_the_address_is_cloud():
    connection = form(base_url="https://openrouter.ai/api/v1", location="")
    assert connection.is_valid(), connection.errors
    assert connection.save().location == "cloud"


def test_the_admins_choice_stands():
    connection = form(base_url="http://127.0.0.1:11434/v1", location="cloud")
    assert connection.is_valid(), connection.errors
    assert connection.save().location == "cloud"


@pytest.fixture
def endpoint():
    with FakeOpenAI(models=["qwen2.5-coder-1.5b"]) as fake:
        yield fake


def test_check_probes_tools_and_sets_the_default(admin_client, endpoint):
    connection = connection_create(
        name="home", kind="openai", base_url=endpoint.base_url, location="local"
    )
    endpoint.queue(Reply(tool_calls=[("get_time", "{}")]))
    response = admin_client.post(
        f"/admin/instance/connection/{connection.pk}/check/",
        {"model": ["qwen2.5-coder-1.5b"]},
        follow=True,
    )
    entry = ModelEntry.objects.get(model_id="qwen2.5-coder-1.5b")
    assert entry.supports_tools
    [probe] = endpoint.chat_requests
    assert [t["function"]["name"] for t in probe.json["tools"]] == ["get_time"]
    assert instance_settings().default_model == entry
    page = response.content.decode()
    assert "tools ticked" in page and "is now the instance" in page


def test_a_model_that_ignores_the_probe_tool_stays_without_tools(admin_client, endpoint):
    connection = connection_create(
        name="home", kind="openai", base_url=endpoint.base_url, location="local"
    )
    endpoint.queue(Reply(text="It is noon."))
    admin_client.post(
        f"/admin/instance/connection/{connection.pk}/check/", {"model": ["qwen2.5-coder-1.5b"]}
    )
    entry = ModelEntry.objects.get(model_id="qwen2.5-coder-1.5b")
    assert not entry.supports_tools
    assert instance_settings().default_model == entry  # still the default: it gets the notes


def test_a_model_that_writes_the_probe_call_as_text_is_marked_search_only(admin_client, endpoint):
    connection = connection_create(
        name="home", kind="openai", base_url=endpoint.base_url, location="local"
    )
    endpoint.queue(Reply(text='```json\n{"name": "get_time", "arguments": {}}\n```'))
    admin_client.post(
        f"/admin/instance/connection/{connection.pk}/check/", {"model": ["qwen2.5-coder-1.5b"]}
    )
    entry = ModelEntry.objects.get(model_id="qwen2.5-coder-1.5b")
    assert entry.supports_tools and entry.search_only


def test_the_cli_probe_sets_tools_as_check_does(db, endpoint):
    """`manage.py llm models add --probe`: what a script (or the answer bench)
    gets is what an admin's Check would have set, from the same probe."""
    connection_create(name="home", kind="openai", base_url=endpoint.base_url, location="local")
    endpoint.queue(Reply(text='```json\n{"name": "get_time", "arguments": {}}\n```'))
    out = StringIO()
    call_command(
        "llm", "models", "add", "--connection", "home", "--model", "qwen2.5-coder-1.5b",
        "--probe", stdout=out,
    )  # fmt: skip
    entry = ModelEntry.objects.get(model_id="qwen2.5-coder-1.5b")
    assert entry.supports_tools and entry.search_only
    assert "search only" in out.getvalue()
    [probe] = endpoint.chat_requests
    assert [t["function"]["name"] for t in probe.json["tools"]] == ["get_time"]
