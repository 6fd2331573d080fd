"""End to end: sign in through a real browser, switch the theme, see the live
socket connect, and use the shell at phone width."""

import pytest

from tests.conftest import PASSWORD
from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.e2e


def sign_in(page, base_url, username="olivia"):
    page.goto(f"{base_url}/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")


def test_sign_in_switch_theme_and_open_the_websocket(page, live_server_url, owner):
    page.goto(f"{live_server_url}/accounts/login/")
    screenshot(page, "login")
    sign_in(page, live_server_url)
    page.wait_for_url(f"{live_server_url}/chat/")
    assert page.locator("nav.nav a[aria-current=page]").inner_text() == "Chat"

    # The htmx websocket extension connects to /ws/ping/ and swaps in the badge.
    page.wait_for_selector("#live-status[data-state=live]")

    assert page.evaluate("document.documentElement.dataset.theme") is None
    page.click("[data-theme-toggle]")
    page.wait_for_selector("html[data-theme=dark]")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(19, 21, 24)"  # the dark --bg token
    screenshot(page, "chat-dark")

    # Signing out closes the socket and lands on the login page.
    page.click("text=Sign out")
    page.wait_for_url(f"{live_server_url}/accounts/login/")
    assert "You are signed out." in page.content()


def test_a_wrong_password_shows_the_generic_error(page, live_server_url, owner):
    page.goto(f"{live_server_url}/accounts/login/")
    page.fill("input[name=username]", "olivia")
    page.fill("input[name=password]", "not it")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text() == (
        "That username and password do not match an account."
    )


def test_the_shell_fits_a_phone(browser, live_server_url, owner):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        sign_in(page, live_server_url)
        page.wait_for_url(f"{live_server_url}/chat/")
        page.goto(f"{live_server_url}/settings/")
        overflow = page.evaluate(
            "document.scrollingElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0
        for label in ["Chat", "Library", "Drafts", "Jobs", "Settings"]:
            assert page.locator(f"nav.nav >> text={label}").count() == 1
        screenshot(page, "settings-phone")
    finally:
        context.close()
