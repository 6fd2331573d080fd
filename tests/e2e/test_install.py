"""End to end: Jarvis as an installed app (real Chromium, real daphne). The
service worker takes the page, Chromium's own installability check passes,
and with the server out of reach a page shows the offline page, never a
copy of a page with someone's data in it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.chats.models import Chat, Message
from tests.e2e.conftest import CHROMIUM_ARGS, chromium_path, screenshot
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e

SECRET = "The spare key is under the third plant pot, code quince-7731."

# Every request the browser's caches hold, and each text body, as the page sees them.
CACHED = """async () => {
  const found = [];
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    for (const request of await cache.keys()) {
      const response = await cache.match(request);
      const type = response.headers.get("Content-Type") || "";
      const body = /text|javascript|json|css/.test(type) ? await response.text() : "";
      found.push({cache: name, url: request.url, body});
    }
  }
  return found;
}"""


@pytest.fixture
def page(browser, tmp_path):
    """A page in a browser profile of its own on disk: Chromium never offers
    to install a site from an incognito context, which is what a plain new
    context is (Page.getInstallabilityErrors says "in-incognito")."""
    context = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=chromium_path(),
        args=CHROMIUM_ARGS,
        viewport={"width": 1280, "height": 800},
    )
    page = context.pages[0] if context.pages else context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


# The worker's URL once it is active, if it controls the page, else null.
# evaluate() has no timeout of its own: a worker that never comes fails the
# test instead of hanging it.
ACTIVE = """async () => {
  const never = new Promise((_, fail) => setTimeout(() => fail(new Error("no worker became active")), 30000));
  await Promise.race([navigator.serviceWorker.ready, never]);
  const controller = navigator.serviceWorker.controller;
  return controller ? controller.scriptURL : null;
}"""


def wait_for_worker(page) -> str | None:
    worker = page.evaluate(ACTIVE)
    if worker is None:
        # This page began loading while the worker was still installing, and
        # clients.claim() ran before the page existed: as in any browser, the
        # next load of the page is the worker's.
        page.reload()
        worker = page.evaluate(ACTIVE)
    return worker


def test_the_worker_takes_the_page_and_chromium_finds_jarvis_installable(
    page, live_server_url, owner
):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    worker = wait_for_worker(page)
    scope = page.evaluate("navigator.serviceWorker.getRegistration().then(r => r.scope)")
    assert worker == f"{live_server_url}/sw.js"
    assert scope == f"{live_server_url}/"

    cdp = page.context.new_cdp_session(page)
    manifest = cdp.send("Page.getAppManifest")
    assert manifest["url"] == f"{live_server_url}/manifest.webmanifest"
    assert manifest["errors"] == []
    # The checks Chromium runs before it offers "Install Jarvis" (manifest,
    # icons, start URL in scope, a worker that answers fetches, secure origin:
    # 127.0.0.1 counts as one).
    assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
    assert errors == []


def test_offline_a_page_seen_before_is_the_offline_page_not_a_copy(page, live_server_url, owner):
    chat = Chat.objects.create(owner=owner, title="House keys")
    Message.objects.create(chat=chat, role=Message.Role.USER, text=SECRET, status="done")
    chat_url = live_server_url + reverse("chats:detail", args=[chat.pk])

    sign_in(page, live_server_url)
    assert wait_for_worker(page) == f"{live_server_url}/sw.js"
    page.goto(chat_url)
    page.locator(".msg__body", has_text=SECRET).wait_for()
    page.goto(f"{live_server_url}/library/")

    # What the browser keeps: static files and the offline page, nothing else,
    # and nothing it keeps mentions the chat.
    cached = page.evaluate(CACHED)
    paths = {entry["url"].removeprefix(live_server_url) for entry in cached}
    assert "/offline/" in paths and "/static/css/app.css" in paths
    assert [p for p in paths if p != "/offline/" and not p.startswith("/static/")] == []
    assert [e["url"] for e in cached if SECRET in e["body"] or "House keys" in e["body"]] == []

    page.context.set_offline(True)
    page.goto(chat_url)
    offline = page.get_by_test_id("offline")
    offline.wait_for()
    assert "can't be reached" in offline.inner_text()
    assert page.url == chat_url  # the address stays, so Retry asks for it again
    assert SECRET not in page.content()
    assert "House keys" not in page.content()
    screenshot(page, "offline-page")
    # Styled from the cached shell: the tokens' background, not the browser's white.
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(247, 247, 245)"

    page.goto(f"{live_server_url}/library/")
    offline.wait_for()

    # Back online, Retry on the offline page asks for that page again.
    page.goto(chat_url)
    offline.wait_for()
    page.context.set_offline(False)
    page.get_by_test_id("offline-retry").click()
    page.locator(".msg__body", has_text=SECRET).wait_for()
    assert page.get_by_test_id("offline").count() == 0


def test_after_sign_out_the_device_holds_nothing_of_the_person(page, live_server_url, owner):
    chat = Chat.objects.create(owner=owner, title="House keys")
    Message.objects.create(chat=chat, role=Message.Role.USER, text=SECRET, status="done")
    chat_url = live_server_url + reverse("chats:detail", args=[chat.pk])
    sign_in(page, live_server_url)
    assert wait_for_worker(page) == f"{live_server_url}/sw.js"
    page.goto(chat_url)
    page.locator(".msg__body", has_text=SECRET).wait_for()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(f"{live_server_url}/accounts/login/")

    # The next person on this device, offline, gets the offline page for the
    # first person's chat: nothing of it was ever stored.
    page.context.set_offline(True)
    page.goto(chat_url)
    page.get_by_test_id("offline").wait_for()
    assert SECRET not in page.content()
    assert [e["url"] for e in page.evaluate(CACHED) if SECRET in e["body"]] == []
