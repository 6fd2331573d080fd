"""End to end: the composer's slash commands (static/js/composer.js) in real
Chromium against a real daphne and the fake OpenAI server.

"/" opens a command list the keyboard drives; a command runs only when its
word is exactly one (/search, /new, /model, /private); "//" sends a message
starting with one "/", and an unknown command is sent as written.
"""

from __future__ import annotations

import pytest

from apps.chats.models import Chat, Message, StartingPoint
from tests.e2e.conftest import screenshot
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


def real(errors: list[str]) -> list[str]:
    # A refused request is logged by the browser as a failed resource: that is the point.
    return [e for e in errors if "Failed to load resource" not in e]


@pytest.fixture
def chat(owner, local_model):
    return Chat.objects.create(owner=owner, title="Heating")


def open_chat(page, live_server_url, chat) -> None:
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")


def hint(page) -> str:
    line = page.locator("[data-testid=command-hint]")
    line.wait_for()
    return line.inner_text()


def test_slash_opens_a_command_list_the_keyboard_drives(page, live_server_url, chat):
    errors = collect_errors(page)
    open_chat(page, live_server_url, chat)
    box = page.locator("#composer-text")
    box.click()
    page.keyboard.type("/")
    listbox = page.get_by_role("listbox", name="Commands")
    listbox.wait_for()
    options = listbox.get_by_role("option")
    labels = [text.split()[0] for text in options.all_inner_texts()]
    assert labels == ["/search", "/new", "/model", "/private"]
    assert box.get_attribute("aria-controls") == "command-list"
    assert box.get_attribute("aria-activedescendant") == "command-option-0"
    assert options.nth(0).get_attribute("aria-selected") == "true"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert box.get_attribute("aria-activedescendant") == "command-option-2"
    assert options.nth(2).get_attribute("aria-selected") == "true"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # wraps round to the last
    assert box.get_attribute("aria-activedescendant") == "command-option-3"
    # Typing narrows the list; Enter picks, and picking is not sending.
    box.fill("")
    page.keyboard.type("/se")
    assert [t.split()[0] for t in options.all_inner_texts()] == ["/search"]
    page.keyboard.press("Enter")
    assert box.input_value() == "/search "
    assert listbox.is_hidden()
    assert Message.objects.count() == 0
    # Escape closes the list and leaves the text.
    box.fill("")
    page.keyboard.type("/n")
    listbox.wait_for()
    page.keyboard.press("Escape")
    assert listbox.is_hidden() and box.input_value() == "/n"
    assert box.get_attribute("aria-activedescendant") is None
    screenshot(page, "slash-commands")
    assert errors == []


def test_search_opens_the_library_search_for_the_words(page, live_server_url, chat):
    open_chat(page, live_server_url, chat)
    page.fill("#composer-text", "/search boiler service")
    page.press("#composer-text", "Enter")
    page.wait_for_url("**/library/?q=boiler%20service")
    assert page.locator("input[name=q]").first.input_value() == "boiler service"
    assert Message.objects.count() == 0


def test_search_without_words_says_what_it_needs(page, live_server_url, chat):
    open_chat(page, live_server_url, chat)
    page.fill("#composer-text", "/search")
    page.press("#composer-text", "Enter")
    assert "Type what to search for" in hint(page)
    assert Message.objects.count() == 0


def test_new_opens_a_new_chat_with_the_words_waiting(page, live_server_url, chat):
    open_chat(page, live_server_url, chat)
    page.fill("#composer-text", "/new what day is the bin collection")
    page.press("#composer-text", "Enter")
    page.wait_for_url(f"{live_server_url}/chat/")
    assert page.locator("#composer-text").input_value() == "what day is the bin collection"
    assert Message.objects.count() == 0
    assert Chat.objects.count() == 1  # nothing was created: a chat starts with its first message


def test_model_switches_this_chat_through_the_header_picker(
    page, live_server_url, cloud_user, local_model, cloud_model
):
    chat = Chat.objects.create(owner=cloud_user, title="Heating")
    open_chat(page, live_server_url, chat)
    page.fill("#composer-text", "/model cloud:big")
    page.press("#composer-text", "Enter")
    page.wait_for_function(
        "() => document.querySelector('#chat-model option:checked').value === 'cloud:big'"
    )
    for _ in range(50):
        chat.refresh_from_db()
        if chat.model_label == "cloud:big":
            break
        page.wait_for_timeout(100)
    assert chat.model_label == "cloud:big"
    assert page.locator("#composer-text").input_value() == ""
    # A name that is no model's says which there are.
    page.fill("#composer-text", "/model nonesuch")
    page.press("#composer-text", "Enter")
    said = hint(page)
    assert "No model called “nonesuch”" in said and "home:local-7b" in said


def test_model_on_the_new_chat_page_sets_its_picker(
    page, live_server_url, cloud_user, local_model, cloud_model, llm
):
    sign_in(page, live_server_url)
    page.fill("#composer-text", "/model big")
    page.press("#composer-text", "Enter")
    assert "The new chat will use cloud:big" in hint(page)
    picker = page.locator("[data-testid=new-chat-model]")
    assert picker.input_value() == "cloud:big"
    llm.queue(Reply(text="Hello from the big one."))
    page.fill("#composer-text", "Say hello")
    page.press("#composer-text", "Enter")
    page.wait_for_url("**/chat/*/")
    assert Chat.objects.get().model_label == "cloud:big"


def test_private_makes_the_chat_private(page, live_server_url, chat):
    errors = collect_errors(page)
    open_chat(page, live_server_url, chat)
    assert page.locator("[data-testid=private-badge]").count() == 0
    page.fill("#composer-text", "/private")
    page.press("#composer-text", "Enter")
    page.locator("[data-testid=private-badge]").wait_for()
    assert "private now" in hint(page)
    chat.refresh_from_db()
    assert chat.private
    assert Message.objects.count() == 0
    assert real(errors) == []


def test_private_on_a_cloud_model_is_refused_with_what_to_do(
    page, live_server_url, cloud_user, local_model, cloud_model
):
    chat = Chat.objects.create(owner=cloud_user, title="Heating", model_label="cloud:big")
    open_chat(page, live_server_url, chat)
    page.fill("#composer-text", "/private")
    page.press("#composer-text", "Enter")
    alert = page.locator("#composer-error [data-testid=refusal]")
    alert.wait_for()
    assert "switch it to a local model first" in alert.inner_text()
    chat.refresh_from_db()
    assert not chat.private
    assert page.locator("#composer-text").input_value() == "/private"


def test_a_double_slash_sends_one_slash_and_an_unknown_command_is_sent_as_written(
    page, live_server_url, chat, llm
):
    open_chat(page, live_server_url, chat)
    llm.queue(Reply(text="That is a command, not a question."))
    page.fill("#composer-text", "//new is how you start a chat")
    page.press("#composer-text", "Enter")
    page.locator("[data-testid=answer]", has_text="That is a command").wait_for()
    assert Message.objects.filter(role="user").get().text == "/new is how you start a chat"
    llm.queue(Reply(text="No such command here."))
    page.fill("#composer-text", "/foo bar")
    page.press("#composer-text", "Enter")
    page.locator("[data-testid=answer]", has_text="No such command").wait_for()
    sent = list(Message.objects.filter(role="user").order_by("id").values_list("text", flat=True))
    assert sent == ["/new is how you start a chat", "/foo bar"]
    # A command's word must be exact: "/news" is not "/new".
    llm.queue(Reply(text="News, then."))
    page.fill("#composer-text", "/news today")
    page.press("#composer-text", "Enter")
    page.locator("[data-testid=answer]", has_text="News, then").wait_for()
    assert Message.objects.filter(role="user").order_by("-id").first().text == "/news today"
    assert page.url.endswith(f"/chat/{chat.pk}/")


def test_the_command_list_fits_a_phone(page, live_server_url, chat):
    page.set_viewport_size({"width": 390, "height": 800})
    open_chat(page, live_server_url, chat)
    page.click("#composer-text")
    page.keyboard.type("/")
    listbox = page.get_by_role("listbox", name="Commands")
    listbox.wait_for()
    box = listbox.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_a_starting_point_fills_the_composer_and_does_not_send(page, live_server_url, owner):
    StartingPoint.objects.create(text="Plan this week's meals")
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    point = page.locator("[data-testid=starting-point]", has_text="Plan this week's meals")
    point.click()
    box = page.locator("#composer-text")
    assert box.input_value() == "Plan this week's meals"
    assert page.evaluate("() => document.activeElement.id") == "composer-text"
    assert page.url == f"{live_server_url}/chat/"
    assert Message.objects.count() == 0 and Chat.objects.count() == 0
    screenshot(page, "starting-points")
    assert errors == []


def test_private_on_the_new_chat_page_starts_a_private_chat(
    page, live_server_url, owner, local_model, llm
):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.fill("#composer-text", "/private")
    page.press("#composer-text", "Enter")
    page.locator("[data-testid=private-chip]").wait_for()
    assert "will be private" in hint(page)
    assert page.locator("#composer-text").input_value() == ""
    llm.queue(Reply(text="Your tax is due in January."))
    page.fill("#composer-text", "When is my tax due?")
    page.press("#composer-text", "Enter")
    page.wait_for_url("**/chat/*/")
    page.locator("[data-testid=private-badge]").wait_for()
    assert Chat.objects.get().private
    assert errors == []
