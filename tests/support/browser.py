"""Helpers the browser tests share: signing in and collecting page errors."""

from __future__ import annotations

from tests.conftest import PASSWORD


def sign_in(page, base_url: str, username: str = "olivia") -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/chat/")


def collect_errors(page) -> list[str]:
    """Console errors and uncaught exceptions of `page`, as they happen."""
    errors: list[str] = []

    def on_console(message) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors
