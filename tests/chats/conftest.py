"""Chat fixtures: a fake OpenAI-compatible server registered as a local or a
cloud connection, and a helper that runs one turn through the real runner."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from tests.fakes.llm import FakeOpenAI

# The library fixtures (vaults, sources, counting embedder).
from tests.library.conftest import (  # noqa: F401
    embedder,
    make_source,
    make_vault,
    vault,
    vaults_root,
)


@pytest.fixture
def llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def local_model(llm, transactional_db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="home", kind="openai", base_url=llm.base_url, location="local"
    )
    return model_add(connection=connection, model_id="local-7b", supports_tools=True, default=True)


@pytest.fixture
def cloud_model(llm, transactional_db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="cloud",
        kind="openai",
        base_url=llm.base_url,
        location="cloud",
        api_key="sk-cloud-secret-123456",
    )
    return model_add(connection=connection, model_id="big", supports_tools=True)


@pytest.fixture
def cloud_user(owner):
    group = Group.objects.create(name="cloud users")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.USE_CLOUD_MODELS))
    )
    owner.groups.add(group)
    return type(owner).objects.get(pk=owner.pk)


def run_turn(user, text: str, *, chat=None, model: str = "", mentions=None):
    """Send `text` and wait for the whole reply (the same code as the browser)."""
    from apps.chats import services
    from apps.chats.runner import reply_start

    chat, _, answer = services.turn_start(
        user=user, chat=chat, text=text, model_label=model, mentions=mentions
    )

    async def wait():
        await reply_start(answer.pk, chat.pk).task

    async_to_sync(wait)()
    answer.refresh_from_db()
    chat.refresh_from_db()
    return chat, answer
