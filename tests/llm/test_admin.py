"""The connections admin: Check lists the endpoint's models with tick boxes
(capabilities filled where the endpoint states them); the instance default is
a tick box on the model's form and on the connection's inline."""

from __future__ import annotations

import re

import pytest

from apps.instance.models import ModelEntry
from apps.instance.selectors import instance_settings
from apps.instance.services import connection_create, model_add
from tests.fakes.llm import FakeOpenAI

pytestmark = pytest.mark.django_db

ROUTER_STYLE = [
    {
        "id": "vision/tooly",
        "context_length": 131072,
        "supported_parameters": ["tools", "temperature"],
        "architecture": {"input_modalities": ["text", "image"]},
    },
    {"id": "plain/small", "context_length": 8192, "supported_parameters": ["temperature"]},
    "bare-id",
]


@pytest.fixture
def endpoint():
    with FakeOpenAI(models=ROUTER_STYLE) as fake:
        yield fake


def test_check_lists_the_models_and_adds_the_ticked_ones_with_what_the_endpoint_says(
    admin_client, endpoint
):
    connection = connection_create(
        name="router", kind="openai", base_url=endpoint.base_url, location="local"
    )
    model_add(connection=connection, model_id="bare-id")
    change = admin_client.get(f"/admin/instance/connection/{connection.pk}/change/")
    check_url = f"/admin/instance/connection/{connection.pk}/check/"
    assert check_url in change.content.decode()

    page = admin_client.get(check_url).content.decode()
    assert "vision/tooly" in page and "plain/small" in page and "131072" in page
    assert 'value="bare-id"' not in page and "in the catalogue" in page

    response = admin_client.post(check_url, {"model": ["vision/tooly", "plain/small"]})
    assert response.status_code == 302
    added = {m.model_id: m for m in ModelEntry.objects.filter(connection=connection)}
    tooly, small = added["vision/tooly"], added["plain/small"]
    assert (tooly.context_length, tooly.supports_tools, tooly.supports_vision) == (
        131072,
        True,
        True,
    )
    assert (small.context_length, small.supports_tools, small.supports_vision) == (
        8192,
        False,
        False,
    )


def test_a_failed_check_says_why(admin_client):
    connection = connection_create(
        name="gone", kind="openai", base_url="http://127.0.0.1:9/v1", location="local"
    )
    page = admin_client.get(f"/admin/instance/connection/{connection.pk}/check/").content
    assert b"The check failed" in page and b"could not reach" in page


def test_a_member_cannot_open_the_check(client, member, endpoint):
    connection = connection_create(name="router", kind="openai", base_url=endpoint.base_url)
    client.force_login(member)
    response = client.get(f"/admin/instance/connection/{connection.pk}/check/")
    assert response.status_code in (302, 403)
    assert not endpoint.requests


def test_the_model_form_makes_and_unmakes_the_instance_default(admin_client):
    connection = connection_create(name="home", kind="openai", base_url="http://x/v1")
    entry = model_add(connection=connection, model_id="llama")
    url = f"/admin/instance/modelentry/{entry.pk}/change/"
    form = {
        "connection": connection.pk,
        "model_id": "llama",
        "display_name": "",
        "context_length": 0,
        "enabled": "on",
        "instance_default": "on",
    }
    assert admin_client.post(url, form).status_code == 302
    assert instance_settings().default_model == entry
    box = re.search(
        r'<input[^>]*name="instance_default"[^>]*>', admin_client.get(url).content.decode()
    )
    assert box and "checked" in box.group(0)
    form.pop("instance_default")
    admin_client.post(url, form)
    assert instance_settings().default_model is None
