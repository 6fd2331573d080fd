"""End to end: an MCP token is made once (post/redirect/get) and Revoke asks
first (real Chromium, real daphne)."""

from __future__ import annotations

import pytest

from apps.mcp.models import McpToken
from tests.e2e.conftest import screenshot
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


def test_a_reload_after_making_a_token_makes_no_second_one(page, live_server_url, owner):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/mcp/")
    page.fill("#token-name", "Cursor on my laptop")
    page.get_by_role("button", name="Create a token").click()
    secret = page.locator("[data-testid=new-token] pre code").inner_text()
    assert secret.startswith("jarvis_")
    assert page.url == f"{live_server_url}/settings/mcp/"
    screenshot(page, "mcp-token-made")
    page.reload()
    assert McpToken.objects.count() == 1
    assert page.locator("[data-testid=new-token]").count() == 0  # shown that once only
    assert secret not in page.content()
    assert errors == []


def test_revoke_asks_first(page, live_server_url, owner):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/mcp/")
    page.fill("#token-name", "Claude Desktop")
    page.get_by_role("button", name="Create a token").click()
    asked = []

    def answer(dialog, accept):
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda d: answer(d, False))
    page.get_by_role("button", name="Revoke").click()
    assert asked and "Claude Desktop" in asked[0]
    assert McpToken.objects.get().active  # kept: the person said no
    page.once("dialog", lambda d: answer(d, True))
    with page.expect_navigation():
        page.get_by_role("button", name="Revoke").click()
    assert not McpToken.objects.get().active
    assert page.locator("text=revoked").first.is_visible()
    assert errors == []
