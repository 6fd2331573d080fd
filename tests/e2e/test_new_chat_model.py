"""End to end: the new-chat page's model picker. A person allowed a local and
a cloud model sees both under the composer with their default preselected,
picks the cloud one, sends, and the reply comes from that model; the chat
keeps it."""

from __future__ import annotations

import pytest

from apps.chats.models import Chat
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


ANSWER = "The big model says hello."


def test_a_model_picked_on_the_new_chat_page_answers_and_stays(
    page, live_server_url, cloud_user, local_model, cloud_model, llm
):
    errors = collect_errors(page)
    sign_in(page, live_server_url, "olivia")
    picker = page.locator("[data-testid=new-chat-model]")
    assert picker.locator("option:checked").text_content() == "home:local-7b · local (default)"
    picker.select_option(label="cloud:big · cloud")
    llm.queue(Reply(text=ANSWER))
    page.fill("#composer-text", "Say hello")
    page.click("[data-testid=send]")
    page.wait_for_url("**/chat/*/")
    page.wait_for_function(
        "t => [...document.querySelectorAll('[data-testid=answer]')]"
        ".some(a => a.textContent.includes(t))",
        arg=ANSWER,
    )
    assert llm.chat_requests[-1].json["model"] == "big"
    assert Chat.objects.get().model_label == "cloud:big"
    # On the chat's own page the picker under the title shows the choice.
    assert page.locator("#chat-model option:checked").text_content().startswith("cloud:big")
    assert errors == []


def test_the_picker_fits_a_phone(page, live_server_url, cloud_user, local_model, cloud_model):
    page.set_viewport_size({"width": 390, "height": 800})
    sign_in(page, live_server_url, "olivia")
    picker = page.locator("[data-testid=new-chat-model]")
    assert picker.is_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    box = picker.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
