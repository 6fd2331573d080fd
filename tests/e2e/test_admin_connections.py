"""End to end: an admin connects a model the first time and a member's chat
answers with it. Admin → Connections → Add with a loopback URL (location left
to the address: Local), Check, tick the model, add (the tool probe runs and
the model becomes the instance default), then a member's new chat is answered
by that model. Real browser, real daphne, the fake OpenAI-compatible server."""

from __future__ import annotations

import pytest

from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings
from apps.instance.services import connection_create
from tests.fakes.llm import FakeOpenAI, Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e

ANSWER = "Hello Max, your own model is answering."


@pytest.fixture
def endpoint():
    with FakeOpenAI(models=[{"id": "qwen3:8b", "meta": {"n_ctx_train": 40960}}]) as fake:
        yield fake


def test_an_admin_connects_a_model_and_a_members_chat_answers(
    page, browser, live_server_url, admin, member, endpoint
):
    errors = collect_errors(page)
    sign_in(page, live_server_url, "root")
    page.goto(f"{live_server_url}/admin/instance/connection/add/")
    page.fill("input[name=name]", "home")
    page.fill("input[name=base_url]", endpoint.base_url)
    # The location is left as the form offers it: from the address.
    page.click("input[name=_continue]")
    page.wait_for_url("**/change/")
    connection = Connection.objects.get(name="home")
    assert connection.location == Connection.Location.LOCAL

    page.click("text=Check: list the endpoint's models")
    page.wait_for_url("**/check/")
    row = page.locator('tr[data-model-row="qwen3:8b"]')
    assert "40960 tokens" in row.inner_text()
    # The tool probe's one tiny request is answered with a real tool call.
    endpoint.queue(Reply(tool_calls=[("get_time", "{}")]))
    row.locator('input[name="model"]').check()
    page.click("input[value='Add the ticked models']")
    page.wait_for_url("**/change/")
    messages = page.locator("ul.messagelist").text_content()
    assert "Added 1 model to home." in messages
    assert "The model qwen3:8b answered the tool probe with a tool call" in messages
    assert "The model home:qwen3:8b is now the instance's default model." in messages
    default = instance_settings().default_model
    assert default is not None and default.label == "home:qwen3:8b"
    assert default.supports_tools and default.context_length == 40960

    # A member, in their own browser session, starts a chat.
    endpoint.queue(Reply(text=ANSWER))
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        chat = context.new_page()
        chat.set_default_timeout(15_000)
        errors += collect_errors(chat)
        sign_in(chat, live_server_url, "max")
        assert "No language model is set up yet" not in chat.content()
        chat.fill("#composer-text", "Hello, who is answering?")
        chat.click("[data-testid=send]")
        chat.wait_for_url("**/chat/*/")
        chat.locator("[data-testid=answer]").last.wait_for()
        chat.wait_for_function(
            "t => [...document.querySelectorAll('[data-testid=answer]')]"
            ".some(a => a.textContent.includes(t))",
            arg=ANSWER,
        )
    finally:
        context.close()
    assert endpoint.chat_requests[-1].json["model"] == "qwen3:8b"
    assert errors == []


def test_a_500_model_check_filters_and_keeps_ticks_across_filters(page, live_server_url, admin):
    errors = collect_errors(page)
    with FakeOpenAI(models=[f"vendor/model-{n:03d}" for n in range(500)]) as fake:
        connection = connection_create(
            name="router", kind="openai", base_url=fake.base_url, location="cloud"
        )
        sign_in(page, live_server_url, "root")
        page.goto(f"{live_server_url}/admin/instance/connection/{connection.pk}/check/")
        shown = page.locator("[data-model-shown]")
        page.fill("[data-model-filter]", "model-48")
        page.wait_for_function(
            "() => document.querySelector('[data-model-shown]').textContent === '10 of 500 shown'"
        )
        assert page.locator('tr[data-model-row="vendor/model-007"]').is_hidden()
        page.locator('input[value="vendor/model-481"]').check()
        page.fill("[data-model-filter]", "vendor 007")  # words in any order
        assert shown.text_content() == "1 of 500 shown"
        page.locator('input[value="vendor/model-007"]').check()
        assert page.locator("[data-model-ticked]").text_content() == "2 ticked"
        page.fill("[data-model-filter]", "")
        assert shown.text_content() == "500 of 500 shown"
        page.click("input[value='Add the ticked models']")
        page.wait_for_url("**/change/")
    assert sorted(ModelEntry.objects.values_list("model_id", flat=True)) == [
        "vendor/model-007",
        "vendor/model-481",
    ]
    assert errors == []
