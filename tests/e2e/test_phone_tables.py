"""End to end: at a phone's width (390x844) tables are stacked cards, so every
column is on screen; the top navigation and the chat's Export/Pin/Delete fold
into menus (static/js/drawer.js) that open on screen and close with Escape."""

from __future__ import annotations

import pytest

from apps.chats.models import Chat
from apps.mcp.tokens import token_create
from tests.e2e.conftest import screenshot
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}

# Elements whose right edge lies past the viewport (and are not inside a
# scrolling box of their own, such as a code block).
OFF_SCREEN_JS = """
(width) => Array.from(document.querySelectorAll('main *, header *')).filter((el) => {
  const box = el.getBoundingClientRect();
  if (box.width === 0 || box.right <= width + 1) return false;
  for (let p = el.parentElement; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX;
    if (o === 'auto' || o === 'scroll' || o === 'hidden') return false;
  }
  return true;
}).map((el) => el.tagName + '.' + el.className + ': ' + (el.textContent || '').trim().slice(0, 40))
"""

# Whether the element is what a tap on its middle reaches (not clipped away by
# a scrolling ancestor, not under something else).
ON_TOP_JS = """(el) => { el.scrollIntoView({block: 'nearest'}); const r = el.getBoundingClientRect();
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !!top && (top === el || el.contains(top)); }"""


def test_on_a_phone_the_tokens_table_is_cards_with_revoke_on_screen(page, live_server_url, owner):
    errors = collect_errors(page)
    token_create(owner=owner, name="Cursor on my laptop")
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/mcp/")
    revoke = page.get_by_role("button", name="Revoke")
    box = revoke.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    cell = page.locator("[data-testid=token-row] td").nth(2)
    assert cell.get_attribute("data-label") == "Created"
    assert page.evaluate(OFF_SCREEN_JS, PHONE["width"]) == []
    screenshot(page, "phone-mcp-tokens")
    assert errors == []


def test_on_a_phone_the_top_nav_is_a_menu_with_every_item_on_screen(page, live_server_url, admin):
    # An admin has the most items (Admin among them).
    errors = collect_errors(page)
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url, "root")
    for path in ("/chat/", "/library/", "/jobs/", "/settings/"):
        page.goto(f"{live_server_url}{path}")
        toggle = page.locator("[data-testid=nav-toggle]")
        assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
        assert not page.locator("#main-nav").is_visible()  # folded: the header is one row
        assert page.evaluate(OFF_SCREEN_JS, PHONE["width"]) == [], path

        toggle.click()
        assert toggle.get_attribute("aria-expanded") == "true"
        links = page.locator("#main-nav a").all()
        assert len(links) >= 4
        for link in links:
            assert link.is_visible(), path
            box = link.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], path
            assert page.evaluate(ON_TOP_JS, link.element_handle()), path
        assert page.get_by_role("link", name="Admin").is_visible()
        screenshot(page, f"phone-nav-open{path.replace('/', '-')}")
        assert page.evaluate(OFF_SCREEN_JS, PHONE["width"]) == [], path
        # Focus went into the menu; Escape closes it and gives focus back.
        assert page.evaluate("document.getElementById('main-nav').contains(document.activeElement)")
        page.keyboard.press("Escape")
        assert not page.locator("#main-nav").is_visible()
        assert page.evaluate("document.activeElement.dataset.testid") == "nav-toggle"

    # From the keyboard alone: Enter opens it, Tab walks the items, Enter follows one.
    page.locator("[data-testid=nav-toggle]").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent.trim()")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    assert page.locator("#main-nav a[aria-current=page]").text_content().strip() == focused
    assert errors == []


def test_on_a_laptop_the_nav_is_a_row_without_a_menu_button(page, live_server_url, owner):
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/library/")
    assert not page.locator("[data-testid=nav-toggle]").is_visible()
    for link in page.locator("#main-nav a").all():
        assert link.is_visible()


def test_on_a_phone_a_long_model_name_does_not_widen_the_chat(page, live_server_url, owner):
    # llama.cpp lists a model by its GGUF's path: the header's picker showed
    # it whole and the page was twice a phone's width.
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="home", kind="openai", base_url="http://127.0.0.1:9/v1", location="local"
    )
    model_add(
        connection=connection,
        model_id="/srv/models/qwen2.5-coder-1.5b-instruct-q4_k_m-with-a-long-file-name.gguf",
        default=True,
    )
    chat = Chat.objects.create(owner=owner, title="Boiler service")
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    assert "long-file-name" in page.locator("[data-testid=chat-model]").inner_text()
    assert page.evaluate(OFF_SCREEN_JS, PHONE["width"]) == []
    assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]


def test_on_a_phone_the_chats_export_pin_and_delete_sit_in_a_more_menu(
    page, live_server_url, owner
):
    errors = collect_errors(page)
    chat = Chat.objects.create(owner=owner, title="Boiler service")
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    more = page.locator("[data-testid=chat-overflow-toggle]")
    assert more.is_visible()
    assert not page.locator("[data-testid=export]").is_visible()
    assert page.evaluate(OFF_SCREEN_JS, PHONE["width"]) == []

    more.click()
    assert more.get_attribute("aria-expanded") == "true"
    for name in ("Export", "Pin", "Delete"):
        control = page.locator("#chat-overflow").get_by_text(name, exact=True)
        assert control.is_visible(), name
        box = control.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], name
        # Drawn where it is, not clipped by the header or covered by the page.
        assert page.evaluate(ON_TOP_JS, control.element_handle()), name
    assert page.evaluate(OFF_SCREEN_JS, PHONE["width"]) == []
    screenshot(page, "phone-chat-more")
    page.keyboard.press("Escape")
    assert not page.locator("[data-testid=export]").is_visible()

    # Pin works from the menu.
    more.click()
    page.locator("#chat-overflow").get_by_role("button", name="Pin").click()
    page.wait_for_load_state()
    chat.refresh_from_db()
    assert chat.pinned
    assert errors == []

    # On a laptop the three are in the header's row, no "More".
    page.set_viewport_size({"width": 1280, "height": 800})
    assert not more.is_visible()
    assert page.locator("[data-testid=export]").is_visible()
