"""End to end: Enter sends, the focus ring can be seen, each page has one h1
(real Chromium, real daphne, the fake model)."""

from __future__ import annotations

import pytest

from apps.chats.models import Message
from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import new_chat_url, wait_for_status
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


# WCAG's contrast ratio between the focused element's outline and what is
# behind it (the nearest ancestor with a background colour).
CONTRAST_JS = """
(selector) => {
  const el = document.querySelector(selector);
  const lum = (c) => {
    const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const style = getComputedStyle(el);
  let back = el.parentElement;
  while (back && /rgba\\(0, 0, 0, 0\\)|transparent/.test(getComputedStyle(back).backgroundColor)) {
    back = back.parentElement;
  }
  const behind = getComputedStyle(back || document.body).backgroundColor;
  const [a, b] = [lum(style.outlineColor), lum(behind)].sort((x, y) => y - x);
  return {ratio: (a + 0.05) / (b + 0.05), width: parseFloat(style.outlineWidth),
          outline: style.outlineStyle};
}
"""


def test_enter_sends_and_shift_enter_starts_a_line(page, live_server_url, owner, llm, local_model):
    errors = collect_errors(page)
    llm.queue(Reply(text="The pump is on the left."))
    sign_in(page, live_server_url)
    page.click("#composer-text")
    page.keyboard.type("Where is the pump?")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("And the valve?")
    assert page.input_value("#composer-text") == "Where is the pump?\nAnd the valve?"
    page.keyboard.press("Enter")
    page.wait_for_url(new_chat_url(live_server_url))
    wait_for_status(page, "done")
    assert Message.objects.get(role="user").text == "Where is the pump?\nAnd the valve?"
    assert errors == []


def test_who_chose_ctrl_enter_gets_enter_for_lines(page, live_server_url, owner, llm, local_model):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/")
    page.check("input[name=send_with_ctrl_enter]")
    page.click("text=Save preferences")
    page.locator("text=Preferences saved.").wait_for()
    owner.refresh_from_db()
    assert owner.send_with_ctrl_enter

    llm.queue(Reply(text="Noted."))
    page.goto(f"{live_server_url}/chat/")
    assert "Ctrl+Enter to send" in page.get_attribute("#composer-text", "placeholder")
    page.click("#composer-text")
    page.keyboard.type("First line")
    page.keyboard.press("Enter")
    page.keyboard.type("second line")
    assert page.input_value("#composer-text") == "First line\nsecond line"
    assert not Message.objects.exists()
    page.keyboard.press("Control+Enter")
    page.wait_for_url(new_chat_url(live_server_url))
    wait_for_status(page, "done")
    assert Message.objects.get(role="user").text == "First line\nsecond line"
    assert errors == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_focus_ring_on_text_boxes_stands_out(page, live_server_url, owner, theme):
    owner.theme = theme
    owner.save(update_fields=["theme"])
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/library/add/")
    page.focus("#id_url")
    ring = page.evaluate(CONTRAST_JS, "#id_url")
    assert ring["outline"] == "solid" and ring["width"] >= 2
    assert ring["ratio"] >= 3, ring
    page.goto(f"{live_server_url}/chat/")
    page.focus("#composer-text")
    ring = page.evaluate(CONTRAST_JS, "#composer-text")
    assert ring["ratio"] >= 3, ring
    screenshot(page, f"focus-ring-{theme}")


def test_each_page_has_one_h1(page, live_server_url, owner, llm, local_model):
    sign_in(page, live_server_url)
    for path in ["/chat/", "/library/", "/library/add/", "/settings/", "/jobs/", "/drafts/"]:
        page.goto(f"{live_server_url}{path}")
        assert page.locator("h1").count() == 1, path
    assert page.goto(f"{live_server_url}/chat/") and page.locator("h1").inner_text() == "New chat"
