"""Browser tests: Playwright driving Debian's Chromium against a real daphne.

The browser is the system Chromium (installed by `make test`), never one
Playwright downloads. Screenshots go to $JARVIS_SCREENSHOTS when it is set.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = (
        os.environ.get("JARVIS_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if not path:
        raise RuntimeError("Chromium is not installed: `make test` installs it from Debian")
    return path


@pytest.fixture(autouse=True)
def sync_orm_beside_playwright(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own ORM
    # calls (creating users, checking rows) are ordinary sync code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="module")
def browser(django_db_setup):
    # The test database is created before Playwright starts its event loop in
    # this thread (Django refuses sync database work inside a running loop), and
    # the loop ends with the module, so later test files in this worker run
    # outside it.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture(scope="module")
def module_drafts_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("drafts")


@pytest.fixture(scope="module")
def module_daphne(django_db_setup, module_drafts_root):
    # One daphne per test module: starting one (Django, the channel layer,
    # the embedder on first search) took 4-9 s, more than most tests. Each
    # test still gets an empty database (transactional_db flushes it), and
    # row ids never repeat across a flush, so nothing a process keeps by id
    # (a running reply, a socket's chat) can meet the next test's rows. A
    # test that needs its own server settings starts its own daphne_server().
    from tests.support.processes import daphne_server

    with daphne_server(JARVIS_DRAFTS_DIR=str(module_drafts_root)) as url:
        yield url


@pytest.fixture
def drafts_root(module_drafts_root, settings) -> Path:
    """The drafts folder the module's daphne writes to, emptied for this test;
    this process (draft_create in a test, a check of the files) uses it too."""
    for child in module_drafts_root.iterdir():
        shutil.rmtree(child)
    settings.DRAFTS_ROOT = module_drafts_root
    return module_drafts_root


@pytest.fixture
def live_server_url(transactional_db, module_daphne):
    return module_daphne


def screenshot(page, name: str) -> None:
    folder = os.environ.get("JARVIS_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
