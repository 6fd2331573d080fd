"""Web search fixtures: the fake provider (SearXNG's and Brave's APIs, and
the result pages, on one loopback server that the SSRF guard is told to
allow, as every fetch test does), a provider configured as an admin would,
and a person with the "use web search" permission."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group, Permission

from tests.fakes.searxng import FakeSearch
from tests.support.fixtures import signed_in  # noqa: F401 (this folder's tests import it from here)


@pytest.fixture
def web(settings):
    with FakeSearch() as fake:
        # The fake listens on loopback, which the guard refuses unless allowed.
        settings.FETCH_ALLOW_HOSTS = [fake.host_port]
        yield fake


@pytest.fixture
def provider(web, transactional_db):
    from apps.websearch.models import SearchProvider  # models load after Django is set up

    return SearchProvider.objects.create(
        name="Home SearXNG",
        kind="searxng",
        base_url=web.base_url,
        location="local",
        timeout_seconds=2,
        max_results=5,
        pages_to_read=3,
        max_page_kb=1024,
    )


def grant_web_search(user):
    group, _ = Group.objects.get_or_create(name="web searchers")
    group.permissions.add(Permission.objects.get(codename="use_web_search"))
    user.groups.add(group)
    return type(user).objects.get(pk=user.pk)


@pytest.fixture
def searcher(owner):
    return grant_web_search(owner)


def finish(answer):
    """Run a reply the send view wrote (the test client's loop ends with the request)."""
    from apps.chats.runner import reply_start  # the runner imports models: after setup

    async def wait():
        await reply_start(answer.pk, answer.chat_id).task

    async_to_sync(wait)()
    answer.refresh_from_db()
    return answer


@pytest.fixture
def started(monkeypatch) -> list[int]:
    """Replies the send view started, for the test to run (`finish`)."""
    ids: list[int] = []
    monkeypatch.setattr("apps.chats.views.reply_start", lambda pk, chat_id, **_: ids.append(pk))
    return ids
