"""End to end: the pages at a phone's width (390x844) and a laptop's (1280x800).

What a person notices: on a phone the conversation, not the chat list, fills
the screen, and the list and the library's filters open from a button; on a
laptop the chat's title row (Rename, Pin, Delete) stays in view below the
header while a reply streams and the window follows it, and the library's
filters show their whole labels; on a phone the drafts editor shows the text or
its preview, one at a time. Real daphne, the fake model server, Chromium.
"""

from __future__ import annotations

import re

import pytest

from apps.chats.models import Chat, Message
from apps.drafts.services import draft_create
from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from tests.e2e.conftest import screenshot
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}

BOX_JS = """sel => { const r = document.querySelector(sel).getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height}; }"""


def box(page, selector: str) -> dict:
    return page.evaluate(BOX_JS, selector)


def covered(page, selector: str) -> bool:
    """Whether something else is drawn over the middle of `selector`'s element."""
    return page.evaluate(
        """sel => { const el = document.querySelector(sel); const r = el.getBoundingClientRect();
          const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return !(top && (top === el || el.contains(top))); }""",
        selector,
    )


@pytest.fixture
def console_errors(page) -> list[str]:
    return collect_errors(page)


@pytest.fixture
def long_chat(owner) -> Chat:
    """Twelve other chats (a list taller than a phone) and one long conversation."""
    for n in range(12):
        Chat.objects.create(owner=owner, title=f"Garden question {n}")
    chat = Chat.objects.create(owner=owner, title="Boiler service")
    answer = "Tomasz serviced the boiler in March 2026 and Priya replaced the valve. " * 5
    for n in range(6):
        Message.objects.create(chat=chat, role="user", text=f"When was the boiler serviced? ({n})")
        Message.objects.create(chat=chat, role="assistant", text=answer)
    return chat


@pytest.fixture
def library(owner, vault, make_source, embedder) -> Source:
    for n in range(6):
        vault.write(f"home/note_{n}.md", f"# Note {n}\n\nThe boiler was serviced ({n}).\n")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    return source


def test_on_a_phone_the_conversation_fills_the_screen_and_the_chats_open_from_a_button(
    page, console_errors, live_server_url, long_chat
):
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{long_chat.pk}/")
    toggle = page.locator("[data-drawer-toggle][aria-controls=chat-sidebar]")
    toggle.wait_for()
    screenshot(page, "phone-chat")

    # The list is out of the way: from the top of the page, the conversation
    # starts on the first screen, and the composer is on screen too.
    assert not page.locator("#chat-sidebar").is_visible()
    page.evaluate("window.scrollTo(0, 0)")
    first_message = box(page, "[data-testid=messages] > *")
    assert first_message["top"] < PHONE["height"] / 2
    composer = box(page, "#composer-text")
    assert composer["top"] >= 0 and composer["bottom"] <= PHONE["height"]
    assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]

    # The button opens the list over the page, focus goes into it, Escape
    # closes it and gives focus back to the button.
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    sidebar = box(page, "#chat-sidebar")
    assert sidebar["left"] >= 0 and sidebar["right"] <= PHONE["width"]
    link = page.locator("#chat-sidebar a", has_text="Garden question 11")
    assert link.is_visible() and not covered(page, "#chat-sidebar .chat-list a")
    assert page.evaluate("document.getElementById('chat-sidebar').contains(document.activeElement)")
    screenshot(page, "phone-chat-list-open")
    page.keyboard.press("Escape")
    assert not page.locator("#chat-sidebar").is_visible()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.getAttribute('aria-controls')") == "chat-sidebar"

    # Opened again, a chat in the list is a tap away.
    toggle.click()
    link.click()
    page.wait_for_url(re.compile(r"/chat/\d+/$"))
    assert page.locator("input[name=title]").input_value() == "Garden question 11"
    assert console_errors == []


def test_on_a_laptop_the_title_row_stays_below_the_header_while_a_reply_streams(
    page, console_errors, live_server_url, long_chat, local_model, llm
):
    page.set_viewport_size(LAPTOP)
    text = " ".join(f"Step {n}: check the pressure gauge and note the reading." for n in range(40))
    llm.queue(Reply(text=text, chunk_chars=40, delay=0.02))
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{long_chat.pk}/")
    # No drawer or menu button on a laptop: the list, nav and actions are all there.
    assert not any(toggle.is_visible() for toggle in page.locator("[data-drawer-toggle]").all())
    assert page.locator("#chat-sidebar").is_visible()

    page.fill("#composer-text", "How do I bleed the radiators?")
    page.click("[data-testid=send]")
    page.locator("[data-testid=reply][data-status=done]").last.wait_for()
    page.wait_for_timeout(200)  # the last frame's scroll
    assert page.evaluate("window.scrollY") > 0  # the window followed the reply down

    header = box(page, ".site-header")
    head = box(page, ".chat-head")
    assert head["top"] >= header["bottom"] - 1  # below the header, not under it
    for control in ("Rename", "Pin", "Delete"):
        button = page.locator(".chat-head button", has_text=re.compile(f"^{control}$"))
        assert button.is_visible()
        button_box = button.bounding_box()
        assert button_box["y"] >= header["bottom"] - 1
    assert not covered(page, ".chat-title button")
    screenshot(page, "laptop-chat-after-reply")
    assert console_errors == []


SELECT_CUT_JS = """() => [...document.querySelectorAll('.filters__row select')].filter(s => {
  // A copy laid out at its natural width: narrower than that, the label is cut.
  const copy = s.cloneNode(true);
  copy.style.cssText = 'position:absolute;visibility:hidden;width:auto;flex:none';
  s.parentNode.appendChild(copy);
  const natural = copy.getBoundingClientRect().width;
  copy.remove();
  return s.getBoundingClientRect().width + 0.5 < natural;
}).map(s => s.name)"""


def test_the_library_filters_show_whole_labels_and_fold_behind_a_button_on_a_phone(
    page, console_errors, live_server_url, library
):
    page.set_viewport_size(LAPTOP)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/library/")
    assert page.locator("select[name=collection]").is_visible()
    assert not page.locator("[data-drawer-toggle][aria-controls=library-filters]").is_visible()
    assert page.evaluate(SELECT_CUT_JS) == []
    screenshot(page, "laptop-library")

    page.set_viewport_size(PHONE)
    toggle = page.locator("[data-drawer-toggle][aria-controls=library-filters]")
    assert toggle.is_visible() and not page.locator("select[name=collection]").is_visible()
    assert page.locator("#q").is_visible()  # searching needs no extra tap
    assert page.locator("[data-testid=library-table]").is_visible()
    screenshot(page, "phone-library")
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.locator("select[name=collection]").is_visible()
    assert page.evaluate(SELECT_CUT_JS) == []
    # The filters still filter: a kind with nothing in it empties the list.
    page.select_option("select[name=kind]", "papers")
    page.locator("#results .empty").wait_for()
    assert toggle.get_attribute("aria-expanded") == "true"  # still open to change another
    screenshot(page, "phone-library-filters-open")
    page.keyboard.press("Escape")
    assert not page.locator("select[name=collection]").is_visible()
    assert console_errors == []


def test_no_page_is_wider_than_a_phone(page, console_errors, live_server_url, admin, long_chat):
    # An admin sees the most: the Jobs page's schedule, the Admin link.
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url, username="root")
    for path in (
        "/chat/",
        "/library/",
        "/library/collections/",
        "/drafts/",
        "/jobs/",
        "/settings/",
    ):
        page.goto(f"{live_server_url}{path}")
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= PHONE["width"], f"{path} is {width}px wide"
    screenshot(page, "phone-settings")
    assert console_errors == []


@pytest.fixture
def drafts_server(live_server_url, drafts_root):
    return live_server_url


def test_on_a_phone_the_drafts_editor_toggles_between_editing_and_the_preview(
    page, console_errors, drafts_server, owner
):
    draft = draft_create(
        owner=owner,
        title="Letter",
        filename="letter.md",
        content="# Letter to the insurer\n\nDear Sir.\n",
    )
    page.set_viewport_size(PHONE)
    sign_in(page, drafts_server)
    page.goto(f"{drafts_server}/drafts/{draft.pk}/")
    editor = page.locator("[data-testid=editor]")
    frame = page.locator("[data-testid=preview-frame]")
    toggle = page.locator("[data-side-toggle=preview]")
    # Opened on a phone: the editor, on the first screen, and no preview under it.
    editor.locator(".CodeMirror").wait_for()
    assert toggle.get_attribute("aria-pressed") == "false"
    assert not frame.is_visible()
    assert box(page, "[data-testid=editor]")["top"] < PHONE["height"]

    # Preview: the rendered text takes the editor's place, on the first screen.
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert not editor.is_visible()
    page.frame_locator("[data-testid=preview-frame]").locator("h1").wait_for()
    assert box(page, "[data-testid=preview-frame]")["top"] < PHONE["height"]
    assert (
        page.evaluate(
            "document.scrollingElement.scrollWidth - document.documentElement.clientWidth"
        )
        <= 0
    )
    screenshot(page, "phone-drafts-preview")

    # Pressed again: back to editing, the text still there.
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false"
    assert editor.is_visible() and not frame.is_visible()
    assert "Dear Sir." in editor.inner_text()
    assert console_errors == []
