"""End to end: at a phone's width (390x844) tables are stacked cards, so every
column is on screen, and the top navigation shows every item."""

from __future__ import annotations

import pytest

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


def test_on_a_phone_every_nav_item_is_on_screen(page, live_server_url, owner):
    page.set_viewport_size(PHONE)
    sign_in(page, live_server_url)
    for path in ("/chat/", "/library/", "/jobs/", "/settings/"):
        page.goto(f"{live_server_url}{path}")
        for link in page.locator(".nav a").all():
            box = link.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], path
        assert page.evaluate(OFF_SCREEN_JS, PHONE["width"]) == [], path
    screenshot(page, "phone-settings-nav")
