"""End to end: what people expect of a chat app, through Chromium, a real
daphne and the fake model server. Regenerate a reply and page between the
versions; edit a sent message and page back to the old branch; copy an
answer's Markdown; export the chat; see token use and cost; a second tab
follows a regenerate made in the first.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import (
    new_chat_url,
    reply_state,
    send,
    wait_for_status,
)
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


REPLIES = "[data-testid=reply]"


@pytest.fixture
def console_errors(page) -> list[str]:
    return collect_errors(page)


def start_chat(page, base_url: str, question: str) -> None:
    sign_in(page, base_url)
    send(page, question)
    page.wait_for_url(new_chat_url(base_url))
    wait_for_status(page, "done")
    page.locator("[data-testid=send]").wait_for()


def test_regenerate_keeps_the_earlier_reply_and_pages_between_them(
    page, console_errors, live_server_url, owner, local_model, llm
):
    llm.queue(
        Reply(text="The first answer."),
        Reply(text="A second, better answer.", chunk_chars=4, delay=0.03),
    )
    start_chat(page, live_server_url, "Tell me something")
    assert reply_state(page)["text"] == "The first answer."

    page.locator(f"{REPLIES} [data-testid=regenerate]").click()
    page.locator(f"{REPLIES} [data-testid=pager-at]").wait_for()  # the new reply is on the page
    wait_for_status(page, "done")
    assert reply_state(page)["text"] == "A second, better answer."
    reply = page.locator(REPLIES).last
    assert reply.locator("[data-testid=pager-at]").inner_text() == "2 of 2"
    screenshot(page, "chat-regenerated")

    reply.locator("[data-testid=pager-previous]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=answer]').textContent.trim()"
        " === 'The first answer.'"
    )
    assert page.locator(f"{REPLIES} [data-testid=pager-at]").inner_text() == "1 of 2"
    page.locator(f"{REPLIES} [data-testid=pager-next]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=answer]').textContent.trim()"
        " === 'A second, better answer.'"
    )
    # The model was asked twice for the same question; the page shows one reply.
    assert len(llm.chat_requests) == 2 and page.locator(REPLIES).count() == 1
    page.reload()
    assert reply_state(page)["text"] == "A second, better answer."
    assert console_errors == []


def test_editing_a_message_continues_from_it_and_the_old_branch_is_a_page_back(
    page, console_errors, live_server_url, owner, local_model, llm
):
    llm.queue(Reply(text="Bread needs flour."), Reply(text="About an hour."))
    start_chat(page, live_server_url, "What does bread need?")
    send(page, "How long to bake it?")
    page.locator(REPLIES).nth(1).wait_for()
    wait_for_status(page, "done")

    llm.queue(Reply(text="Twenty minutes for rolls."))
    second_question = page.locator("[data-testid=user-message]").nth(1)
    second_question.locator("[data-testid=edit]").click()
    second_question.locator("textarea").fill("How long to bake rolls?")
    second_question.locator("[data-testid=edit-send]").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=answer]')].map(a => a.textContent.trim())"
        ".includes('Twenty minutes for rolls.')"
    )
    questions = page.locator("[data-testid=user-message] .msg__body")
    assert [questions.nth(i).inner_text() for i in range(2)] == [
        "What does bread need?",
        "How long to bake rolls?",
    ]
    edited = page.locator("[data-testid=user-message]").nth(1)
    assert edited.locator("[data-testid=pager-at]").inner_text() == "2 of 2"
    # The model saw the edited question after the first exchange, not the old one.
    sent = str(llm.chat_requests[-1].json["messages"])
    assert "How long to bake rolls?" in sent and "Bread needs flour." in sent
    assert "How long to bake it?" not in sent
    screenshot(page, "chat-edited")

    edited.locator("[data-testid=pager-previous]").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=answer]')].map(a => a.textContent.trim())"
        ".includes('About an hour.')"
    )
    assert questions.nth(1).inner_text() == "How long to bake it?"
    assert "Twenty minutes" not in page.locator("#messages").inner_text()
    assert console_errors == []


def test_copy_puts_the_answers_markdown_on_the_clipboard(
    browser, live_server_url, owner, local_model, llm
):
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, permissions=["clipboard-read", "clipboard-write"]
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors = collect_errors(page)
    try:
        llm.queue(Reply(text="Use **two** eggs:\n\n- flour\n- milk"))
        start_chat(page, live_server_url, "Pancakes?")
        button = page.locator(f"{REPLIES} [data-testid=copy]")
        button.click()
        page.wait_for_function(
            "() => document.querySelector('[data-testid=copy]').textContent === 'Copied'"
        )
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert copied == "Use **two** eggs:\n\n- flour\n- milk"
        assert errors == []
    finally:
        context.close()


def test_export_downloads_the_chat_as_markdown(
    page, console_errors, live_server_url, owner, local_model, llm, tmp_path
):
    llm.queue(Reply(text="Water the ferns on **Sundays**."))
    start_chat(page, live_server_url, "When do the ferns need water?")
    with page.expect_download() as download:
        page.locator("[data-testid=export]").click()
    saved = Path(tmp_path / "chat.md")
    download.value.save_as(saved)
    assert re.fullmatch(r"when-do-the-ferns-need-water-\d+\.md", download.value.suggested_filename)
    text = saved.read_text()
    assert text.startswith("# When do the ferns need water?")
    assert "## You\n\nWhen do the ferns need water?" in text
    assert "Water the ferns on **Sundays**." in text
    assert console_errors == []


def test_token_use_and_cost_show_under_the_reply_and_in_the_header(
    page, console_errors, live_server_url, owner, local_model, llm
):
    llm.queue(
        Reply(text="Forty-two.", usage=(1500, 12), cost=0.0031),
        Reply(text="Still forty-two.", usage=(1600, 14)),
    )
    start_chat(page, live_server_url, "The answer?")
    usage = page.locator(f"{REPLIES} [data-testid=usage]")
    assert usage.inner_text() == "1,500 tokens in · 12 out · $0.0031"
    assert page.locator("[data-testid=chat-usage]").inner_text() == (
        "1,500 tokens in · 12 out · $0.0031"
    )
    # The header's total follows a new reply without a reload.
    send(page, "Sure?")
    page.locator(REPLIES).nth(1).wait_for()
    wait_for_status(page, "done")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=chat-usage]').textContent"
        " === '3,100 tokens in · 26 out · $0.0031'"
    )
    assert page.locator(REPLIES).nth(1).locator("[data-testid=usage]").inner_text() == (
        "1,600 tokens in · 14 out"
    )
    screenshot(page, "chat-usage")
    assert console_errors == []


def test_a_second_tab_follows_a_regenerate_made_in_the_first(
    page, console_errors, live_server_url, owner, local_model, llm
):
    llm.queue(
        Reply(text="Version one."),
        Reply(text="Version two, written slowly.", chunk_chars=3, delay=0.05),
    )
    start_chat(page, live_server_url, "Say something")
    other = page.context.new_page()
    other_errors = collect_errors(other)
    other.goto(page.url)
    assert reply_state(other)["text"] == "Version one."

    page.locator(f"{REPLIES} [data-testid=regenerate]").click()
    # The other tab swaps in the new branch and follows the reply as it streams.
    other.wait_for_function(
        "() => { const a = document.querySelector('[data-testid=answer]');"
        " return a && a.textContent.trim() === 'Version two, written slowly.'; }"
    )
    assert other.locator(f"{REPLIES} [data-testid=pager-at]").inner_text() == "2 of 2"
    assert other.locator(REPLIES).count() == 1
    assert console_errors == [] and other_errors == []


def test_a_streaming_answer_shows_closed_paragraphs_rendered_and_ends_whole(
    page, console_errors, live_server_url, owner, local_model, llm
):
    answer = (
        "First, the **boiler** needs a service.\n\n"
        # Six different sentences: the same one six times is a loop the reply stops.
        + "".join(
            f"Then bleed every radiator in room {n}, and write down its reading of {n * 3} bar. "
            for n in range(1, 7)
        )
        + "\n\nFinally, *check* the pressure."
    )
    reasoning = "The person heats with a boiler and radiators; service, bleed, pressure."
    llm.queue(Reply(reasoning=reasoning, text=answer, chunk_chars=5, delay=0.04))  # about 5 s
    sign_in(page, live_server_url)
    send(page, "How do I look after the heating?")
    page.wait_for_url(new_chat_url(live_server_url))
    # The reasoning shows as it streams (its block was hidden while empty).
    page.locator(".msg__reasoning").wait_for(state="visible")
    page.locator(".msg__reasoning summary").click()
    page.wait_for_function(
        "r => document.querySelector('.msg__reasoning').textContent.includes(r)", arg=reasoning
    )
    # While the second paragraph is being written, the first is already rendered.
    page.wait_for_function(
        "() => { const o = document.querySelector('[data-testid=answer] .msg__open');"
        " return o && o.textContent.includes('bleed every radiator'); }"
    )
    assert page.locator("[data-testid=answer] strong").inner_text() == "boiler"
    streamed = page.locator("[data-testid=answer] .msg__open").inner_text()
    assert "**" not in streamed and answer.split("\n\n")[1].startswith(streamed.strip()[:40])
    wait_for_status(page, "done")
    # The final frame is the whole answer rendered: no plain-text block is left.
    assert page.locator("[data-testid=answer] .msg__open").count() == 0
    assert page.locator("[data-testid=answer] p").count() == 3
    assert page.locator("[data-testid=answer] em").inner_text() == "check"
    assert console_errors == []
