"""End to end: a notice that is not a failure goes by itself and is not shown
again; a failure stays until closed (real Chromium, real daphne)."""

from __future__ import annotations

import pytest

from apps.core.models import Notice
from apps.core.notices import notice_send
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e


def test_a_good_news_toast_goes_by_itself_and_a_failure_stays(page, live_server_url, owner):
    errors = collect_errors(page)
    notice_send(user_id=owner.pk, text="jam.md is ready to search.")
    notice_send(user_id=owner.pk, text="scan.pdf could not be read.", level=Notice.Level.ERROR)
    sign_in(page, live_server_url)
    ready = page.locator("[data-testid=toast]", has_text="jam.md is ready")
    failed = page.locator("[data-testid=toast]", has_text="scan.pdf could not be read")
    ready.wait_for()
    failed.wait_for()
    ready.wait_for(state="detached", timeout=20_000)
    # Gone once seen: the server knows, so the next page does not show it again.
    ok = Notice.objects.get(level=Notice.Level.OK)
    assert ok.dismissed_at is not None
    page.reload()
    page.locator("#live-status[data-state=live]").wait_for()
    failed.wait_for()
    assert ready.count() == 0
    assert Notice.objects.get(level=Notice.Level.ERROR).dismissed_at is None
    assert errors == []
