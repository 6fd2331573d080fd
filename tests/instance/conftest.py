"""Fixtures for the LLM configuration tests: a local and a cloud connection
with a few catalogue entries."""

from __future__ import annotations

import pytest

from apps.instance import services

CLOUD_KEY = "sk-proj-s3cr3t-DO-NOT-LEAK-0123456789abcdef9f2c"


@pytest.fixture
def local(db):
    return services.connection_create(
        name="ollama", kind="openai", base_url="http://gpu-box:11434/v1", location="local"
    )


@pytest.fixture
def cloud(db):
    return services.connection_create(
        name="openrouter",
        kind="openai",
        base_url="https://openrouter.example/api/v1",
        api_key=CLOUD_KEY,
    )


@pytest.fixture
def llama(local):
    return services.model_add(connection=local, model_id="llama3.1:8b", supports_tools=True)


@pytest.fixture
def claude(cloud):
    return services.model_add(connection=cloud, model_id="anthropic/claude-sonnet")
