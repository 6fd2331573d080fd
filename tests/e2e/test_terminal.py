"""The terminal panel of an agent chat in a real browser: Chromium, a real
daphne, and Debian's real sshd (tests/fakes/sshd.py) at the far end.

Keystrokes go from xterm.js through the websocket, daphne and asyncssh to a
bash on a PTY, and its output comes back the same way; the shell's OSC 133
marks let "Attach last command and output" put the command and its output
into the composer. A reload comes back to the same shell with its screen.
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.agents import services
from apps.instance.services import connection_create, model_add
from tests.e2e.conftest import screenshot
from tests.fakes.llm import FakeOpenAI, Reply
from tests.fakes.sshd import FakeSSHD
from tests.support.browser import collect_errors, sign_in

pytestmark = pytest.mark.e2e

# The terminal's text, wrapped lines joined, trailing blanks trimmed.
SCREEN_JS = """
() => {
  const term = window.jarvisTerminal;
  if (!term) return null;
  const buffer = term.buffer.active;
  const lines = [];
  for (let y = 0; y < buffer.length; y++) {
    const line = buffer.getLine(y);
    const text = line.translateToString(true);
    if (line.isWrapped && lines.length) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  return lines.join("\\n");
}
"""


@pytest.fixture(scope="module")
def sshd():
    with FakeSSHD() as server:
        yield server


@pytest.fixture
def agent_chat(owner, sshd):
    group = Group.objects.create(name="agents")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.USE_AGENT_CHATS))
    )
    owner.groups.add(group)
    owner = type(owner).objects.get(pk=owner.pk)
    profile = services.profile_create(
        owner=owner,
        name="box",
        host=sshd.host,
        port=sshd.port,
        username=sshd.user,
        key_text=sshd.client_key,
    )
    services.profile_pin_host_key(profile=profile, key_line=sshd.host_key_line)
    project = sshd.workdir("my project")
    return services.agent_chat_create(owner=owner, profile=profile, project_dir=str(project))


def screen_text(page) -> str:
    return page.evaluate(SCREEN_JS) or ""


def wait_for_screen(page, text: str, timeout: int = 15_000) -> None:
    try:
        page.wait_for_function(
            f"(text) => (({SCREEN_JS})() || '').includes(text)", arg=text, timeout=timeout
        )
    except Exception:
        raise AssertionError(
            f"{text!r} not on the terminal's screen:\n{screen_text(page)}"
        ) from None


def run_in_terminal(page, command: str) -> None:
    # Focus xterm's input directly: at phone width under mobile emulation a
    # click's scroll-into-view pans the visual viewport and the tap lands on
    # the conversation above; the keystrokes are what these tests check.
    page.focus("[data-testid=terminal-screen] .xterm-helper-textarea")
    page.keyboard.type(command)
    page.keyboard.press("Enter")


def open_terminal(page, base_url: str, chat) -> None:
    page.goto(f"{base_url}/chat/{chat.pk}/")
    page.wait_for_selector("[data-terminal-status][data-state=live]")
    wait_for_screen(page, "$ ")  # bash's prompt


def test_keystrokes_and_output_round_trip_and_the_last_command_is_attached(
    page, live_server_url, agent_chat
):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    response = page.goto(f"{live_server_url}/chat/{agent_chat.pk}/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "style-src 'self' 'unsafe-inline'" in csp
    page.wait_for_selector("[data-terminal-status][data-state=live]")
    wait_for_screen(page, "$ ")
    # The shell started in the chat's project directory (a name with a space).
    run_in_terminal(page, "pwd")
    wait_for_screen(page, agent_chat.agent_session.project_dir)

    # Arithmetic the shell must do, so the output cannot be the echo of what
    # was typed; and UTF-8 out of the shell (é and ✓, written as octal
    # escapes so the command line itself is ASCII) decoded by the browser.
    run_in_terminal(page, "echo round-$((6*7))-trip; printf '\\303\\251\\342\\234\\223\\n'; false")
    wait_for_screen(page, "\nround-42-trip\n\u00e9\u2713\n")
    attach = page.locator("[data-testid=terminal-attach]")
    assert attach.inner_text() == "Attach last command and output"
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=terminal-attach]').disabled"
    )
    attach.click()
    composer = page.locator("#composer-text").input_value()
    assert "exit status 1" in composer
    assert "$ echo round-$((6*7))-trip; printf" in composer
    assert "\nround-42-trip\n\u00e9\u2713\n" in composer
    assert "pwd" not in composer  # only the last command
    screenshot(page, "terminal-wide")

    # Into the shell, byte for byte: what is pasted reaches the PTY as UTF-8.
    run_in_terminal(page, "head -c 6 | od -An -tx1")
    # Once the command runs, bash has turned bracketed paste off again.
    page.wait_for_function("() => !window.jarvisTerminal.modes.bracketedPasteMode")
    page.evaluate("window.jarvisTerminal.paste('\u00e9\u2713')")
    page.keyboard.press("Enter")
    wait_for_screen(page, "c3 a9 e2 9c 93 0a")
    assert errors == []


def test_a_reload_comes_back_to_the_same_shell_and_its_screen(page, live_server_url, agent_chat):
    sign_in(page, live_server_url)
    open_terminal(page, live_server_url, agent_chat)
    run_in_terminal(page, "echo shell=$$")
    wait_for_screen(page, "\nshell=")
    pid = screen_text(page).split("\nshell=")[1].split("\n")[0]
    assert pid.isdigit()

    page.reload()
    page.wait_for_selector("[data-terminal-status][data-state=live]")
    wait_for_screen(page, f"\nshell={pid}\n")  # the scrollback came back
    run_in_terminal(page, "echo again=$$")
    wait_for_screen(page, f"\nagain={pid}\n")  # and it is the same shell


def test_at_phone_width_the_terminal_sits_below_the_conversation_and_works(
    browser, live_server_url, agent_chat
):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        sign_in(page, live_server_url)
        open_terminal(page, live_server_url, agent_chat)
        panel = page.locator("[data-testid=terminal-panel]").bounding_box()
        messages = page.locator("[data-testid=messages]").bounding_box()
        assert panel["y"] > messages["y"]  # below the conversation
        assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 390  # within the screen
        cols = page.evaluate("window.jarvisTerminal.cols")
        assert 30 <= cols < 60  # fitted to the phone, not xterm's default 80
        run_in_terminal(page, "echo phone-$((2+3))")
        wait_for_screen(page, "\nphone-5\n")
        screenshot(page, "terminal-phone")
    finally:
        context.close()


# --- the panel's own behaviour, with the socket played by the test ----------------------


def test_a_shell_without_marks_attaches_the_visible_screen_and_says_so(
    page, live_server_url, agent_chat
):
    def server(ws) -> None:
        # A shell that prints no OSC 133 marks (sh, fish, …): just its screen.
        ws.send(
            json.dumps({"type": "ready", "cols": 80, "rows": 24, "marks": False, "scrollback": 0})
        )
        ws.send(b"$ echo hi\r\nhi from sh\r\n$ ")

    page.route_web_socket(re.compile(r"/ws/terminal/\d+/"), server)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{agent_chat.pk}/")
    wait_for_screen(page, "hi from sh")
    attach = page.locator("[data-testid=terminal-attach]")
    assert attach.inner_text() == "Attach visible screen"
    assert "no command marks (bash and zsh do)" in attach.get_attribute("title")
    attach.click()
    composer = page.locator("#composer-text").input_value()
    assert composer.startswith("The terminal's screen:")
    assert "$ echo hi\nhi from sh\n$" in composer


def test_a_dropped_tab_reconnects_at_once_and_starts_from_the_scrollback(
    page, live_server_url, agent_chat
):
    connections = []

    def server(ws) -> None:
        connections.append(ws)
        ready = {"type": "ready", "cols": 80, "rows": 24, "marks": False}
        if len(connections) == 1:
            ws.send(json.dumps({**ready, "scrollback": 0}))
            ws.send(b"first screen\r\n")
            ws.close(code=4408, reason="too slow")  # dropped for falling behind
        else:
            ws.send(json.dumps({**ready, "scrollback": 30}))
            ws.send(b"first screen\r\nwhat was missed\r\n")

    page.route_web_socket(re.compile(r"/ws/terminal/\d+/"), server)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{agent_chat.pk}/")
    wait_for_screen(page, "what was missed")
    assert len(connections) == 2
    # The scrollback replaced the screen rather than being added to it.
    assert screen_text(page).count("first screen") == 1
    assert page.locator("[data-terminal-status]").get_attribute("data-state") == "live"


def test_an_approval_card_in_the_browser_lets_a_command_run(
    page, live_server_url, agent_chat, sshd
):
    """Ask mode in the browser: the command waits on a card; Approve runs it
    over SSH and the reply goes on; the terminal shows its effect."""
    project = agent_chat.agent_session.project_dir
    with FakeOpenAI() as llm:  # the model, in this process, over HTTP
        connection = connection_create(
            name="home", kind="openai", base_url=llm.base_url, location="local"
        )
        model_add(connection=connection, model_id="local-7b", supports_tools=True, default=True)
        llm.queue(
            Reply(tool_calls=[("shell_run", json.dumps({"command": "echo approved > card.txt"}))]),
            Reply(text="The file is written."),
        )
        errors = collect_errors(page)
        sign_in(page, live_server_url)
        page.goto(f"{live_server_url}/chat/{agent_chat.pk}/")
        page.fill("#composer-text", "write card.txt")
        page.click("[data-testid=send]")
        card = page.locator("[data-testid=approval-card]")
        card.wait_for(timeout=15_000)
        assert "Run a command" in card.inner_text() and "echo approved" in card.inner_text()
        assert not (sshd.home / project.rsplit("/", 1)[-1] / "card.txt").exists()
        screenshot(page, "agent-approval-card")
        card.locator("button[value=approve]").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=answer]')]"
            ".some(a => a.textContent.includes('The file is written.'))",
            timeout=20_000,
        )
        assert (sshd.home / project.rsplit("/", 1)[-1] / "card.txt").read_text() == "approved\n"
        assert errors == []
