"""The model's questions in a real browser (Chromium, daphne, the fake LLM over
real HTTP): the card arrives while the reply waits, is answered with the
keyboard alone and the reply goes on with both answers; a reload shows it
again and answering then works; Stop closes it; at 390 px it fits."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import screenshot
from tests.e2e.test_axe import violations
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
LONG_QUESTION = (
    "Which of these weekends suits everyone in the household for the trip to the "
    "grandparents, given the school holidays and the football tournament?"
)
QUESTIONS = {
    "questions": [
        {"question": "Which city is the trip to?"},
        {"question": "Train or car?", "choices": ["Train", "Car"]},
    ]
}


# The card and what is in it (questions, choices, the box, the button): where
# each starts and ends across, and how wide the page scrolls.
FIT_JS = """() => {
  const card = document.querySelector('[data-testid=ask-card]');
  card.scrollIntoView({block: 'start'});
  const parts = [card, ...card.querySelectorAll('fieldset, legend, label, textarea, button')];
  return {
    page: document.documentElement.scrollWidth,
    parts: parts.map(e => { const b = e.getBoundingClientRect(); return [b.left, b.right]; }),
  };
}"""


def send(page, base_url: str, text: str) -> None:
    page.goto(f"{base_url}/chat/")
    page.fill("#composer-text", text)
    page.click("[data-testid=send]")


def tool_answers(llm) -> list:
    (message,) = [m for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]
    return json.loads(message["content"])["answers"]


def test_the_card_is_answered_by_keyboard_and_the_reply_goes_on(
    page, live_server_url, owner, local_model, llm
):
    llm.queue(
        Reply(text="Two questions first.", tool_calls=[("ask_user", json.dumps(QUESTIONS))]),
        Reply(text="Berlin by train it is."),
    )
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    send(page, live_server_url, "Plan my trip")
    card = page.locator("[data-testid=ask-card]")
    card.wait_for(timeout=15_000)
    assert card.get_by_role("textbox", name="Which city is the trip to?").is_visible()
    assert card.get_by_role("group", name="Train or car?").is_visible()
    page.locator("[data-testid=stop]").wait_for()  # the reply waits, still in flight

    card.get_by_role("textbox", name="Which city is the trip to?").focus()
    page.keyboard.type("Berlin")
    page.keyboard.press("Tab")  # into the radio group: its first option
    page.keyboard.press("Space")  # Train
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.testid") == "ask-send"
    page.keyboard.press("Enter")

    page.get_by_test_id("answer").get_by_text("Berlin by train it is.").wait_for(timeout=15_000)
    page.locator("[data-testid=ask-answered]").wait_for()
    assert "Berlin" in page.locator("[data-testid=ask-answered]").inner_text()
    page.locator("[data-testid=send]").wait_for()
    assert tool_answers(llm) == [
        {"question": "Which city is the trip to?", "answer": "Berlin"},
        {"question": "Train or car?", "answer": "Train"},
    ]
    screenshot(page, "ask-user-answered")
    assert errors == []


def test_a_reload_shows_the_waiting_card_and_answering_then_works(
    page, live_server_url, owner, local_model, llm
):
    llm.queue(
        Reply(tool_calls=[("ask_user", json.dumps(QUESTIONS))]),
        Reply(text="Paris by car, then."),
    )
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    send(page, live_server_url, "Plan my trip")
    page.locator("[data-testid=ask-card] form").wait_for(timeout=15_000)
    page.reload()
    card = page.locator("[data-testid=ask-card]")
    assert "Waiting for your answers" in page.locator("[data-testid=reply]").inner_text()
    card.get_by_role("textbox", name="Which city is the trip to?").fill("Paris")
    card.get_by_role("radio", name="Car").check()
    card.get_by_role("button", name="Send answers").click()
    page.get_by_test_id("answer").get_by_text("Paris by car, then.").wait_for(timeout=15_000)
    assert [a["answer"] for a in tool_answers(llm)] == ["Paris", "Car"]
    assert errors == []


def test_stop_closes_the_card_at_once(page, live_server_url, owner, local_model, llm):
    llm.queue(Reply(tool_calls=[("ask_user", json.dumps(QUESTIONS))]))
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    send(page, live_server_url, "Plan my trip")
    page.locator("[data-testid=ask-card] form").wait_for(timeout=15_000)
    page.locator("[data-testid=stop]").click()
    # Without a reload: the card reads stopped and Stop is Send again.
    page.get_by_text("stopped, not answered").wait_for(timeout=10_000)
    page.locator("[data-testid=send]").wait_for()
    assert page.locator("[data-testid=ask-card] form").count() == 0
    assert len(llm.chat_requests) == 1
    assert errors == []


def test_at_phone_width_the_card_fits_and_every_control_is_named(
    page, live_server_url, owner, local_model, llm
):
    questions = {
        "questions": [
            {
                "question": LONG_QUESTION,
                "choices": [f"The weekend of the {d}th" for d in range(1, 6)],
            },
            {"question": "Anything else we should know before booking the tickets?"},
        ]
    }
    llm.queue(Reply(tool_calls=[("ask_user", json.dumps(questions))]))
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url)
    send(page, live_server_url, "Plan the visit")
    card = page.locator("[data-testid=ask-card]")
    card.locator("form").wait_for(timeout=15_000)
    # Measured in one go: a frame may re-render the card between two reads.
    fit = page.evaluate(FIT_JS)
    assert fit["page"] <= PHONE["width"], fit
    assert fit["parts"] and all(
        left >= 0 and right <= PHONE["width"] for left, right in fit["parts"]
    ), fit
    # axe-core: every box and radio has its name, the card's text its contrast.
    assert violations(page, live_server_url) == []
    screenshot(page, "ask-user-390")
