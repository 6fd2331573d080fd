"""What a person approves in an agent chat, read in a real browser (Chromium,
daphne, Debian's sshd): a long command is whole on the card at phone and
laptop width, and what an approved command printed is under it, after a
reload too, and in the export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.instance.services import connection_create, model_add
from tests.e2e.conftest import screenshot
from tests.e2e.test_terminal import agent_chat, sshd  # noqa: F401  (fixtures)
from tests.fakes.llm import FakeOpenAI, Reply
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e

PHONE, LAPTOP = {"width": 390, "height": 844}, {"width": 1280, "height": 800}

# The command's <pre> on the card: does it scroll sideways, and where do its
# last 20 characters sit (a Range over them, against the viewport)?
FIT_JS = """(tail) => {
  const pre = document.querySelector('[data-testid=approval-card] [data-testid=call-command]');
  pre.scrollIntoView({block: 'end'});
  const node = pre.firstChild;
  const range = document.createRange();
  range.setStart(node, node.length - tail);
  range.setEnd(node, node.length);
  const box = range.getBoundingClientRect();
  const frame = pre.getBoundingClientRect();
  return {
    scroll: pre.scrollWidth, client: pre.clientWidth,
    tailText: range.toString(),
    inside: box.left >= frame.left - 1 && box.right <= frame.right + 1
      && box.right <= window.innerWidth && box.bottom <= window.innerHeight + 1 && box.top >= 0,
  };
}"""


def local_model(llm) -> None:
    connection = connection_create(
        name="home", kind="openai", base_url=llm.base_url, location="local"
    )
    model_add(connection=connection, model_id="local-7b", supports_tools=True, default=True)


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_a_long_command_is_whole_on_the_approval_card(page, live_server_url, agent_chat, viewport):  # noqa: F811
    command = "make clean; " + " ".join(f"step{n:04d}" for n in range(220)) + "; rm -rf ~/projects"
    assert len(command) > 2000
    with FakeOpenAI() as llm:
        local_model(llm)
        llm.queue(Reply(tool_calls=[("shell_run", json.dumps({"command": command}))]))
        errors = collect_errors(page)
        page.set_viewport_size(viewport)
        sign_in(page, live_server_url)
        page.goto(f"{live_server_url}/chat/{agent_chat.pk}/")
        page.fill("#composer-text", "clean up")
        page.click("[data-testid=send]")
        page.locator("[data-testid=approval-card]").wait_for(timeout=15_000)
        fit = page.evaluate(FIT_JS, 20)
        assert fit["scroll"] == fit["client"]  # wrapped: nothing scrolls off to the side
        assert fit["tailText"] == command[-20:] and fit["inside"]
        approve = page.locator("[data-testid=approval-card] button[value=approve]")
        approve_box = approve.bounding_box()
        pre_box = page.locator(
            "[data-testid=approval-card] [data-testid=call-command]"
        ).bounding_box()
        assert approve_box["y"] >= pre_box["y"] + pre_box["height"]  # below what it approves
        assert approve_box["x"] + approve_box["width"] <= viewport["width"]
        if viewport is LAPTOP:
            # The header is one row: title, machine and directory, mode, terminal toggle, More.
            tops = page.evaluate(
                "() => [...document.querySelectorAll('.chat-head > form, .chat-head__tools > *')]"
                ".filter(e => e.offsetParent).map(e => Math.round(e.getBoundingClientRect().top))"
            )
            assert max(tops) - min(tops) < 20, tops
        screenshot(page, f"agent-long-command-{viewport['width']}")
        assert errors == []


def test_what_an_approved_command_printed_is_under_it_after_a_reload_and_in_the_export(
    page,
    live_server_url,
    agent_chat,  # noqa: F811
):
    with FakeOpenAI() as llm:
        local_model(llm)
        llm.queue(
            Reply(tool_calls=[("shell_run", json.dumps({"command": "printf 'line1\\nline2'"}))]),
            Reply(text="It printed two lines."),
        )
        errors = collect_errors(page)
        sign_in(page, live_server_url)
        page.goto(f"{live_server_url}/chat/{agent_chat.pk}/")
        page.fill("#composer-text", "print two lines")
        page.click("[data-testid=send]")
        card = page.locator("[data-testid=approval-card]")
        card.wait_for(timeout=15_000)
        card.locator("button[value=approve]").click()
        output = page.locator("[data-testid=call-result] [data-testid=call-output]")
        output.wait_for(timeout=20_000)
        page.wait_for_function(
            "() => document.querySelector('[data-testid=call-output]').textContent.includes('line2')",
            timeout=20_000,
        )
        assert "line1\nline2" in output.inner_text()
        page.reload()
        output = page.locator("[data-testid=call-result] [data-testid=call-output]")
        assert "line1\nline2" in output.inner_text()
        assert "done" in page.locator("[data-testid=call-result]").inner_text()
        screenshot(page, "agent-command-output")
        page.click("[data-testid=chat-more] > summary")  # an agent chat's other controls
        with page.expect_download() as download:
            page.click("[data-testid=export]")
        exported = Path(download.value.path()).read_text(encoding="utf-8")
        assert "printf 'line1\\nline2'" in exported and "line1\nline2" in exported
        assert errors == []
