"""End to end: the model proposes a memory; the person edits it on the card and
clicks Keep in a real browser (htmx posting the card, CSRF header included)."""

from __future__ import annotations

import json

import pytest

from apps.accounts.models import Memory
from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import in_a_thread
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.e2e


def test_keep_stores_the_edited_memory_and_dont_keep_stores_nothing(
    page, live_server_url, owner, local_model, llm
):
    llm.queue(
        Reply(tool_calls=[("remember", json.dumps({"text": "I am vegetarian"}))]),
        Reply(text="Shall I remember that? Click Keep below."),
        Reply(tool_calls=[("remember", json.dumps({"text": "I hate Mondays"}))]),
        Reply(text="Noted, if you keep it."),
    )
    # Playwright's sync API runs an event loop in this thread; a turn needs its own.
    chat, _ = in_a_thread(run_turn, owner, "Remember that I am vegetarian.")
    in_a_thread(run_turn, owner, "Also remember I hate Mondays.", chat=chat)
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    first, second = page.locator("[data-testid=action-card]").all()
    first.locator("[data-testid=memory-text]").fill("I am vegetarian, no fish either")
    first.get_by_role("button", name="Keep", exact=True).click()
    page.wait_for_selector("text=Kept: Jarvis will remember")
    second.get_by_role("button", name="Don't keep").click()
    page.wait_for_selector("text=Not kept")
    screenshot(page, "memory-card")
    assert list(Memory.objects.values_list("owner", "text", "cloud_allowed")) == [
        (owner.pk, "I am vegetarian, no fish either", False)
    ]
    assert errors == []
