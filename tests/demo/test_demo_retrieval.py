"""The demo household `make run` creates, tried as a newcomer would (issue 10):
as alice, "boiler" puts the October 2026 note first and "Lisbon" puts v2
first, in `kb search`, in the library search box and in the passages a chat
receives."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from apps.accounts.models import User
from tests.support.fixtures import run_turn

CASES = [
    ("boiler", "home/boiler_service_2026-10.md", "home/boiler_service_2026-03.md"),
    ("Lisbon", "travel/lisbon_plan_v2.md", "travel/lisbon_plan_v1.md"),
]


@pytest.fixture
def demo(transactional_db, settings, tmp_path):
    # Transactional: the chat runner reads the demo from its own thread and connection.
    settings.VAULTS_ROOT = tmp_path / "vaults"
    call_command("seed_demo", stdout=StringIO())
    return User.objects.get(username="alice")


@pytest.mark.parametrize(("query", "latest", "older"), CASES)
def test_kb_search_puts_the_latest_version_first(demo, query, latest, older):
    out = StringIO()
    call_command("kb", "search", "--user", "alice", "--json", query, stdout=out)
    results = json.loads(out.getvalue())["results"]
    assert results[0]["path"] == latest and results[0]["is_latest"]
    for r in results:
        if r["path"] == older:
            assert not r["is_latest"] and r["superseded_by"].startswith(latest)


@pytest.mark.parametrize(("query", "latest", "older"), CASES)
def test_the_library_search_box_puts_the_latest_version_first(demo, client, query, latest, older):
    client.force_login(demo)
    html = client.get("/library/", {"q": query}, HTTP_HX_REQUEST="true").content.decode()
    assert latest in html
    if older in html:
        assert html.index(latest) < html.index(older)
    only = client.get("/library/", {"q": query, "latest": "1"}).content.decode()
    assert latest in only and older not in only


@pytest.mark.parametrize(("query", "latest", "older"), CASES)
def test_a_chat_without_a_model_receives_the_latest_version_first(demo, query, latest, older):
    _, answer = run_turn(demo, query)
    assert answer.citations[0]["path"] == latest
    assert answer.citations[0]["is_latest"]
    for citation in answer.citations:
        if citation["path"] == older:
            assert not citation["is_latest"] and latest in citation["superseded_by"]
