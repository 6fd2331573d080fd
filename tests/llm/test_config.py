"""Building a model call's config from a catalogue entry."""

from __future__ import annotations

import pytest

from apps.instance.services import connection_create, model_add
from apps.llm import provider_config_for
from apps.llm.openai import request_body

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("base_url", "private"),
    [
        ("https://openrouter.ai/api/v1", True),
        ("https://eu.openrouter.ai/api/v1", True),
        ("https://openrouter.ai.example.com/v1", False),
        ("http://127.0.0.1:11434/v1", False),
    ],
)
def test_requests_to_openrouter_forbid_training_and_fallbacks(base_url, private):
    connection = connection_create(name="c", kind="openai", base_url=base_url, api_key="k")
    entry = model_add(connection=connection, model_id="some/model")
    config = provider_config_for(entry)
    body = request_body(config, system="s", turns=[], tools=[])
    if private:
        assert body["provider"] == {"data_collection": "deny", "allow_fallbacks": False}
    else:
        assert "provider" not in body


def test_the_key_and_the_model_come_from_the_entry():
    connection = connection_create(name="c", kind="anthropic", base_url="https://x", api_key="k1")
    entry = model_add(connection=connection, model_id="claude")
    config = provider_config_for(entry, timeout=5.0)
    assert (config.kind, config.api_key, config.model, config.timeout) == (
        "anthropic",
        "k1",
        "claude",
        5.0,
    )
