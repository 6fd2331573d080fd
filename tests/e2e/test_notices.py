"""End to end (real Chromium, real daphne): notices of one kind are one toast,
good news goes by itself and is not shown again, a failure stays until
closed; a page that shows the row shows no toast for it; the header's bell
lists the last day's, by keyboard and at phone width.

The notices here are rows written by this test process, as the worker writes
them: daphne is another process, so they reach the page when it connects or
by its catch-up (apps/core/notices.py)."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from apps.core.models import Notice
from apps.library.models import Document, Source
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


def ready(owner, name: str, url: str = "") -> Notice:
    return Notice.objects.create(
        user=owner, text=f"{name} is ready to search.", kind="document", subject=name, url=url
    )


def failed(owner, name: str) -> Notice:
    return Notice.objects.create(
        user=owner,
        text=f"Could not read {name}: it is encrypted",
        level=Notice.Level.ERROR,
        kind="document",
        subject=name,
    )


def wait_until(check, seconds: float = 15.0) -> bool:
    """Poll `check` (a database read) until it holds; the page acts on its own time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


@pytest.fixture
def quick_catch_up_url(transactional_db):
    from tests.support.processes import daphne_server

    # The page asks for the worker's notices every second instead of every ten;
    # uploads wait in the queue (no worker runs here).
    with daphne_server(JARVIS_NOTICE_CATCH_UP_SECONDS="1", JARVIS_TEST_HUEY_IMMEDIATE="0") as url:
        yield url


def test_files_ready_together_are_one_toast_that_goes_and_a_failure_stays(
    page, live_server_url, owner
):
    errors = collect_errors(page)
    for name in ("a.pdf", "b.docx", "c.md"):
        ready(owner, name)
    failed(owner, "scan.pdf")
    sign_in(page, live_server_url)
    toasts = page.locator("[data-testid=toast]")
    grouped = toasts.filter(has_text="3 files ready: a.pdf, b.docx, c.md")
    failure = toasts.filter(has_text="Could not read scan.pdf: it is encrypted")
    grouped.wait_for()
    failure.wait_for()
    assert toasts.count() == 2
    grouped.wait_for(state="detached", timeout=20_000)
    # Gone once seen: the server knows, so the next page does not show it again.
    assert wait_until(
        lambda: not Notice.objects.filter(level=Notice.Level.OK, dismissed_at=None).exists()
    )
    page.reload()
    page.locator("#live-status[data-state=live]").wait_for()
    failure.wait_for()
    assert grouped.count() == 0
    assert Notice.objects.get(level=Notice.Level.ERROR).dismissed_at is None
    # Closing the failure by hand marks it seen too.
    failure.get_by_role("button", name="Dismiss").click()
    failure.wait_for(state="detached")
    assert wait_until(lambda: not Notice.objects.filter(dismissed_at=None).exists())
    assert errors == []


def test_the_bell_lists_the_days_notices_by_keyboard_and_at_phone_width(
    page, live_server_url, owner
):
    errors = collect_errors(page)
    seen = Notice.objects.create(user=owner, text="old.pdf is ready to search.")
    Notice.objects.filter(pk=seen.pk).update(dismissed_at=seen.created_at)
    Notice.objects.create(user=owner, text="Your paper digest is ready.")
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server_url)
    count = page.locator("[data-testid=bell-count]")
    page.locator("[data-testid=bell-count][data-unseen='1']").wait_for()
    assert count.inner_text().startswith("1")
    button = page.locator("[data-testid=bell-button]")
    button.focus()
    page.keyboard.press("Enter")
    items = page.locator("[data-testid=bell-list] [data-testid=bell-item]")
    items.first.wait_for()
    assert items.count() == 2  # the seen one is listed too
    assert "Your paper digest is ready." in items.nth(0).inner_text()
    assert "old.pdf is ready to search." in items.nth(1).inner_text()
    panel = page.locator(".bell__panel").bounding_box()
    assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 390
    page.keyboard.press("Escape")
    items.first.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.dataset.testid") == "bell-button"
    assert errors == []


def test_a_page_that_shows_the_row_shows_no_toast_for_it(page, quick_catch_up_url, owner):
    errors = collect_errors(page)
    source = Source.objects.create(owner=owner, name="Uploads", kind=Source.Kind.UPLOADS)
    listed = Document.objects.create(
        source=source, path="listed.pdf", title="listed.pdf", kind="pdf", content_hash="1"
    )
    Document.objects.filter(pk=listed.pk).update(status=Document.Status.READY)
    sign_in(page, quick_catch_up_url)
    page.goto(f"{quick_catch_up_url}/library/")
    page.locator("#live-status[data-state=live]").wait_for()
    row_url = reverse("library:document", args=[listed.pk])
    page.locator(f"[data-notice-rows] a[href='{row_url}']").wait_for()
    on_page = ready(owner, "listed.pdf", url=row_url)
    elsewhere = ready(owner, "other.pdf", url=reverse("library:document", args=[999999]))
    # The two arrive as one group; the page keeps only the one it does not show.
    toast = page.locator("[data-testid=toast]", has_text="other.pdf")
    toast.wait_for()
    assert "listed.pdf" not in toast.inner_text()
    assert "other.pdf is ready to search." in toast.inner_text()
    assert wait_until(lambda: Notice.objects.get(pk=on_page.pk).dismissed_at is not None)
    assert Notice.objects.get(pk=elsewhere.pk).dismissed_at is None
    assert errors == []


def test_the_add_page_shows_no_toast_for_a_file_it_lists(page, quick_catch_up_url, owner, tmp_path):
    # An uploaded file's row follows it to "ready" on the add page: a toast
    # saying the same would be the file reported twice.
    errors = collect_errors(page)
    sign_in(page, quick_catch_up_url)
    page.goto(f"{quick_catch_up_url}/library/add/")
    page.locator("#live-status[data-state=live]").wait_for()
    path = tmp_path / "soup.md"
    path.write_text("# Soup\n\nLeek.\n", encoding="utf-8")
    page.set_input_files("input[name=files]", str(path))
    row = page.locator("#add-results [data-name='soup.md'][data-notice-row]")
    row.wait_for()
    on_page = ready(owner, "soup.md", url=row.get_attribute("data-notice-row"))
    assert wait_until(lambda: Notice.objects.get(pk=on_page.pk).dismissed_at is not None)
    assert page.locator("[data-testid=toast]").count() == 0
    assert errors == []
