"""End to end: axe-core (vendored, static/vendor/axe-core/) run in Chromium on
the main pages finds no control without a name (label, button-name,
link-name, select-name) and no text below its contrast ratio, in the light and
the dark theme, and at phone width with the Menu and More menus open. Real daphne, the page as a person gets it, axe loaded from
Jarvis's own static files (the site's CSP allows nothing else)."""

from __future__ import annotations

import pytest

from apps.accounts.models import User
from apps.chats.models import Chat, Message
from apps.drafts.services import draft_create
from tests.support.browser import sign_in

pytestmark = pytest.mark.e2e

RULES = ["label", "button-name", "link-name", "select-name", "color-contrast"]

RUN_AXE_JS = """rules => axe.run(document, {runOnly: {type: 'rule', values: rules}})
  .then(result => result.violations.map(v => v.id + ': ' + v.nodes.map(
    n => n.target.join(' ') + ' (' + (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 160) + ')'
  ).join(' | ')))"""


@pytest.fixture
def server(live_server_url, drafts_root):
    return live_server_url


def violations(page, base_url: str) -> list[str]:
    page.add_script_tag(url=f"{base_url}/static/vendor/axe-core/axe.min.js")
    return page.evaluate(RUN_AXE_JS, RULES)


def main_pages(owner: User) -> list[str]:
    chat = Chat.objects.create(owner=owner, title="Boiler service")
    Message.objects.create(chat=chat, role="user", text="When was the boiler serviced?")
    Message.objects.create(chat=chat, role="assistant", text="In March 2026, by Tomasz.")
    draft = draft_create(
        owner=owner, title="Letter", filename="letter.md", content="# Letter\n\nDear Sir.\n"
    )
    return [
        "/library/",
        "/chat/",
        f"/chat/{chat.pk}/",
        "/settings/",
        "/drafts/",
        f"/drafts/{draft.pk}/",
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_main_pages_have_named_controls_and_readable_contrast(page, server, owner, theme):
    page.goto(f"{server}/accounts/login/")
    assert violations(page, server) == [], "login"

    paths = main_pages(owner)
    User.objects.filter(pk=owner.pk).update(theme=theme)
    sign_in(page, server)
    found = {}
    for path in paths:
        page.goto(f"{server}{path}")
        page.wait_for_load_state("networkidle")
        problems = violations(page, server)
        if problems:
            found[path] = problems
    assert found == {}


def test_the_check_does_see_an_unnamed_button_and_faint_text(page, server, owner):
    # The same run on a page given one nameless button and one pale paragraph:
    # a check that passes only because it looked at nothing would fail here.
    sign_in(page, server)
    page.goto(f"{server}/library/")
    page.evaluate(
        """() => {
          const main = document.querySelector('main');
          const button = document.createElement('button');
          main.appendChild(button);
          const faint = document.createElement('p');
          faint.textContent = 'Barely there';
          faint.style.cssText = 'color: rgb(230, 230, 230); background: rgb(255, 255, 255)';
          main.appendChild(faint);
        }"""
    )
    found = " ".join(violations(page, server))
    assert "button-name:" in found
    assert "color-contrast:" in found


def test_at_phone_width_the_open_menus_have_named_links_and_readable_contrast(page, server, owner):
    chat = Chat.objects.create(owner=owner, title="Boiler service")
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, server)
    page.goto(f"{server}/chat/{chat.pk}/")
    page.locator("[data-testid=nav-toggle]").click()
    assert page.locator("#main-nav").is_visible()
    assert violations(page, server) == []
    page.keyboard.press("Escape")
    page.locator("[data-testid=chat-overflow-toggle]").click()
    assert page.locator("#chat-overflow").is_visible()
    assert violations(page, server) == []
