"""End to end: the drafts editor through a real browser, a real daphne and the
fake OpenAI-compatible model.

The story: the person asks in the chat panel beside the editor; the model
suggests two changes to the open file; the person accepts one and rejects the
other, and exactly that merge is written; the history panel puts the original
back. And: Ctrl-S saves, a save over a file that changed underneath is refused
with a message (nothing written), the preview frame is sandboxed without
scripts, shows the rendered Markdown and follows the editor's scroll; a review
survives a tab switch and never touches the person's unsaved text; .tex
compiles into a `sandbox=""` frame and Markdown exports to a PDF download;
each tab keeps its own undo and unsaved mark, closing an unsaved tab saves it,
and a chat message saves unsaved text first; Accept all and Reject all answer
every change at once.

The daphne child gets the test's drafts folder through JARVIS_DRAFTS_DIR, so
the files the test writes and reads are the ones the browser edits.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest
from django.db import connections

from apps.chats.models import Chat
from apps.drafts.hunks import diff_hunks
from apps.drafts.models import Draft, Proposal
from apps.drafts.services import draft_add_file, draft_create
from tests.e2e.conftest import screenshot
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in
from tests.support.processes import wait_until

pytestmark = pytest.mark.e2e

ORIGINAL = """# Letter to the insurer

Dear Sir or Madam,

The window in the back room broke on 3 May.
A branch fell on it during the storm.
Nobody was hurt.

We have photos of the damage.
The glazier can come next week.
His quote is attached.

Please tell us what you need from us.

Yours faithfully,
Olivia
"""
# Two changes far enough apart to be two hunks: a replaced line, an added one.
SUGGESTED = ORIGINAL.replace(
    "broke on 3 May.", "broke on 3 May 2026, at about ten at night."
).replace(
    "Please tell us what you need from us.\n",
    "Please tell us what you need from us.\nOur policy number is HX-4471.\n",
)
# Accept the first, reject the second.
MERGED = ORIGINAL.replace("broke on 3 May.", "broke on 3 May 2026, at about ten at night.")

# The fake model server, registered as the default local model.

EDITOR_JS = "document.querySelector('[data-editor] .CodeMirror').CodeMirror"
EDITOR_TEXT_JS = f"{EDITOR_JS}.getValue()"


@pytest.fixture
def drafts_dir(drafts_root) -> Path:
    return drafts_root


@pytest.fixture
def server(live_server_url, drafts_dir) -> str:
    return live_server_url


@pytest.fixture
def letter(owner) -> Draft:
    return draft_create(owner=owner, title="Window claim", filename="letter.md", content=ORIGINAL)


def on_disk(draft: Draft, drafts_dir: Path, name: str = "letter.md") -> str:
    return (drafts_dir / str(draft.owner_id) / draft.key / name).read_text()


@pytest.fixture
def console_errors(page) -> list[str]:
    return collect_errors(page)


def open_editor(page, base_url: str, draft: Draft, query: str = "") -> None:
    page.goto(f"{base_url}/drafts/{draft.pk}/{query}")
    page.wait_for_function(f"() => {EDITOR_TEXT_JS}.length > 0")


def editor_text(page) -> str:
    return page.evaluate(EDITOR_TEXT_JS)


def off_the_loop(function, **kwargs):
    """Run a service in a thread of its own: Playwright's event loop holds this
    one, and the service's on_commit broadcast needs a thread without a loop."""
    result = {}

    def target() -> None:
        try:
            result["value"] = function(**kwargs)
        except BaseException as exc:  # re-raised below, in the test's thread
            result["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(30)
    if "error" in result:
        raise result["error"]
    return result["value"]


def hunk(page, index: int):
    return page.locator(f"[data-testid=hunk][data-hunk='{index}']")


def type_after(page, line_text: str, text: str) -> None:
    """Put the cursor at the end of the line showing `line_text` and type
    `text` as one input (one undoable change)."""
    page.locator(".CodeMirror-line", has_text=line_text).click()
    page.keyboard.press("End")
    page.keyboard.insert_text(text)


def test_accept_one_change_reject_the_other_then_restore_the_original(
    page, console_errors, server, drafts_dir, letter, local_model, llm
):
    hunks = diff_hunks(ORIGINAL, SUGGESTED)
    assert [h.kind for h in hunks] == ["replace", "add"]
    arguments = {"draft_id": letter.pk, "filename": "letter.md", "new_content": SUGGESTED}
    # The model takes a moment, as a real one does: the suggestion lands after
    # the editor has reloaded (announced over the draft's socket), and the reply
    # is still being written when the chat panel's socket attaches to it.
    llm.queue(
        Reply(tool_calls=[("propose_draft_edit", json.dumps(arguments))], first_token_delay=1),
        Reply(text="I suggested two changes to letter.md for you to review.", delay=0.1),
    )
    sign_in(page, server)
    open_editor(page, server, letter)

    # Ask in the chat panel beside the editor: the first message starts the
    # draft's chat and brings the person back to the editor with it open.
    page.click("[data-testid=chat-toggle]")
    page.fill("#composer-text", "Make the dates in the letter precise.")
    page.click("[data-pane=chat] [data-testid=send]")
    review_link = page.locator("[data-pane=chat] [data-testid=review-link]")
    page.locator(".drafts-tab .drafts-pending-mark").wait_for()  # ✎ on the tab, live
    # The offer names the count once the proposal's details arrive (until
    # then it says "suggested changes"): wait for it rather than read once.
    page.locator("[data-testid=offer]", has_text="suggested 2 changes").wait_for()
    review_link.wait_for()
    screenshot(page, "drafts-suggestion-waiting")
    assert page.locator("[data-file='letter.md'] [data-pending-mark]").is_visible()
    request = llm.chat_requests[0].json
    assert f"draft {letter.pk}" in json.dumps(request["messages"])  # told what is open
    assert "letter.md" in json.dumps(request["messages"])

    # The card's link opens the review in place, beside the chat.
    review_link.click()
    bar = page.locator("[data-testid=review-bar]")
    bar.wait_for()
    assert page.locator("[data-testid=review-progress]").inner_text() == "0 of 2 answered"
    assert page.locator(".CodeMirror-linebackground.drafts-line--add").count() >= 1
    screenshot(page, "drafts-review-with-chat")

    # Without the chat the editor is wide enough for Current | Suggested.
    page.click("[data-testid=chat-toggle]")
    split = hunk(page, 0).locator(".drafts-split")
    split.wait_for()
    assert "at about ten at night" in split.inner_text()
    assert "Current" in split.inner_text() and "Suggested" in split.inner_text()
    added = page.locator(".CodeMirror-linebackground.drafts-line--add")
    assert added.count() == 1
    assert "HX-4471" in added.locator("xpath=..").inner_text()
    assert page.locator(".CodeMirror-linebackground.drafts-line--remove").count() == 0
    screenshot(page, "drafts-review-1280")

    # At phone width the panes stack and the replacement is shown inline.
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("[data-testid=hunk][data-hunk='0'] .drafts-split").wait_for(state="detached")
    assert page.locator(".CodeMirror-linebackground.drafts-line--remove").count() == 1
    overflow = page.evaluate(
        "document.scrollingElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    screenshot(page, "drafts-review-390")
    page.set_viewport_size({"width": 1280, "height": 800})

    # Answering both writes exactly the accepted change.
    hunk(page, 0).locator("[data-answer-button=accept]").click()
    assert page.locator("[data-testid=review-progress]").inner_text() == "1 of 2 answered"
    assert on_disk(letter, drafts_dir) == ORIGINAL  # nothing yet
    hunk(page, 1).locator("[data-answer-button=reject]").click()
    bar.wait_for(state="hidden")
    assert "Applied 1 of 2 changes" in page.locator("[data-message]").inner_text()
    assert on_disk(letter, drafts_dir) == MERGED
    assert editor_text(page) == MERGED
    assert not page.locator(".drafts-tab .drafts-pending-mark").is_visible()
    proposal = Proposal.objects.get()
    assert proposal.status == "applied" and proposal.accepted == [0]
    letter.refresh_from_db()
    assert letter.chat_id is not None  # the panel's chat now belongs to the draft

    # History: the text before the suggestion comes back (and is itself undoable).
    page.click("[data-testid=history] summary")
    first = page.locator("[data-history-list] li").first
    first.wait_for()
    assert "before accepting a suggestion" in first.inner_text()
    when = first.locator("time").inner_text()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", when)  # 24-hour, as elsewhere
    first.locator("[data-testid=restore]").click()
    wait_until(lambda: on_disk(letter, drafts_dir) == ORIGINAL, timeout=5)
    page.wait_for_function(f"() => {EDITOR_TEXT_JS} === {json.dumps(ORIGINAL)}")
    page.locator("[data-history-list] li", has_text="before a restore").wait_for()
    screenshot(page, "drafts-history")

    # The panel goes on with the same chat, in place (no reload this time).
    llm.queue(Reply(text="The original is back, as you asked."))
    page.click("[data-testid=chat-toggle]")
    page.fill("#composer-text", "Thanks, that is the one.")
    page.click("[data-pane=chat] [data-testid=send]")
    replies = page.locator("[data-pane=chat] [data-testid=reply]")
    replies.nth(1).locator("[data-testid=answer]", has_text="The original is back").wait_for()
    assert Chat.objects.get().pk == letter.chat_id  # still the draft's one chat
    assert f"draft {letter.pk}" in json.dumps(llm.chat_requests[-1].json["messages"])
    assert console_errors == []


# Long enough to scroll: forty short sections after the letter.
LONG = ORIGINAL + "".join(
    f"\n## Room {n}\n\nThe damage in room {n} is listed on page {n} of the report.\n"
    for n in range(1, 41)
)

TOP_BLOCK_LINE_JS = """() => {
  const doc = document.querySelector('[data-testid=preview-frame]').contentDocument;
  const blocks = [...doc.querySelectorAll('[data-line]')];
  const top = blocks.find((block) => block.getBoundingClientRect().bottom > 16);
  return top ? Number(top.dataset.line) : -1;
}"""


def test_ctrl_s_saves_and_a_change_underneath_is_refused(
    page, console_errors, server, drafts_dir, owner
):
    letter = draft_create(owner=owner, title="Window claim", filename="letter.md", content=LONG)
    sign_in(page, server)
    open_editor(page, server, letter)

    # The preview: sandboxed without scripts, the Markdown rendered.
    frame_element = page.locator("[data-testid=preview-frame]")
    assert frame_element.get_attribute("sandbox") == "allow-same-origin"
    preview = page.frame_locator("[data-testid=preview-frame]")
    assert preview.locator("h1").inner_text() == "Letter to the insurer"

    # Type, then Ctrl-S: written with the hash it was loaded with; preview follows.
    page.locator(".CodeMirror-line", has_text="Dear Sir or Madam,").click()
    page.keyboard.press("End")
    page.keyboard.type(" Thank you.")
    assert page.locator(".drafts-tab[data-dirty]").count() == 1
    page.keyboard.press("Control+s")
    wait_until(lambda: "Madam, Thank you." in on_disk(letter, drafts_dir), timeout=5)
    page.locator(".drafts-tab[data-dirty]").wait_for(state="detached")
    preview.locator("p", has_text="Thank you.").wait_for()
    assert on_disk(letter, drafts_dir) == LONG.replace("Madam,", "Madam, Thank you.")
    # "Saved 14:05": the household's 24-hour clock, never the browser's "2:05 PM".
    assert re.fullmatch(r"Saved \d{2}:\d{2}", page.locator("[data-save-status]").inner_text())

    # Scrolling the editor scrolls the preview to the same place (one way).
    assert page.evaluate(TOP_BLOCK_LINE_JS) == 0
    page.evaluate(
        f"() => {{ const cm = {EDITOR_JS}; cm.scrollTo(null, cm.heightAtLine(120, 'local')); }}"
    )
    page.wait_for_timeout(200)  # the lines are drawn and measured
    editor_top = page.evaluate(
        f"() => {{ const cm = {EDITOR_JS}; return cm.lineAtHeight(cm.getScrollInfo().top, 'local'); }}"
    )
    assert editor_top > 100
    page.wait_for_function(f"() => ({TOP_BLOCK_LINE_JS})() >= {editor_top - 2}")
    assert page.evaluate(TOP_BLOCK_LINE_JS) <= editor_top + 2

    # Someone changes the file underneath; the next save is refused, nothing is
    # written, and the tab keeps the person's text, still unsaved.
    underneath = LONG.replace("Olivia", "Olivia and Sam")
    (drafts_dir / str(letter.owner_id) / letter.key / "letter.md").write_text(underneath)
    page.keyboard.type(" Kind regards.")
    page.keyboard.press("Control+s")
    message = page.locator("[data-message]")
    message.wait_for()
    assert "changed since you opened it" in message.inner_text()
    assert "alert--error" in message.get_attribute("class")
    time.sleep(0.2)
    assert on_disk(letter, drafts_dir) == underneath
    assert page.locator(".drafts-tab[data-dirty]").count() == 1
    assert "Kind regards." in editor_text(page)
    screenshot(page, "drafts-conflict")
    page.emulate_media(color_scheme="dark")
    page.wait_for_timeout(300)  # the buttons' colour transition
    screenshot(page, "drafts-conflict-dark")
    # The browser reports the refused request itself; no script error beside it.
    assert console_errors == [
        "Failed to load resource: the server responded with a status of 409 (Conflict)"
    ]


TEX = r"""\documentclass{article}
\begin{document}
Hello from the window claim.
\end{document}
"""


def test_compile_shows_the_pdf_in_the_viewer_and_export_offers_a_download(
    page, console_errors, server, drafts_dir, owner
):
    from apps.drafts import toolchain

    # `make test` installs latexmk, pandoc and bubblewrap: missing tools are a failure.
    assert toolchain.available() == {"latex": True, "pandoc": True}
    paper = draft_create(owner=owner, title="Claim as LaTeX", filename="paper.tex", content=TEX)
    draft_add_file(draft=paper, filename="notes.md", content="# Notes\n\nPhotos attached.\n")
    sign_in(page, server)
    open_editor(page, server, paper)

    # .tex: Compile (no Export); the button waits while the elapsed seconds count.
    compile_button = page.locator("[data-testid=compile]")
    assert compile_button.is_visible() and not page.locator("[data-testid=export]").is_visible()
    compile_button.click()
    assert compile_button.is_disabled()
    assert page.locator("[data-build-status]").inner_text().startswith("Compiling… ")
    page.locator("[data-build-status]", has_text="Compiled in").wait_for(timeout=60_000)
    assert compile_button.is_enabled()
    # Drawn by PDF.js in the page (Chromium's viewer cannot run in a sandboxed frame).
    pdf_frame = page.locator("[data-testid=pdf-frame]")
    pdf_frame.wait_for()
    pdf_frame.and_(page.locator("[data-state=ready]")).wait_for()
    assert pdf_frame.locator("[data-testid=pdf-page-count]").inner_text() == "1"
    assert "Hello from the window claim." in pdf_frame.locator(".textLayer").inner_text()
    url = pdf_frame.get_attribute("data-src")
    assert url == f"/drafts/{paper.pk}/pdf/compile/?name=paper.tex"
    response = page.request.get(f"{server}{url}")
    assert response.headers["content-type"] == "application/pdf"
    assert response.body().startswith(b"%PDF")
    assert not page.locator("[data-testid=preview-frame]").is_visible()
    download = page.locator("[data-testid=download-pdf]")
    assert download.get_attribute("href") == f"{url}&download=1"
    screenshot(page, "drafts-compiled")

    # .md: Export PDF (no Compile), then a download link.
    page.click("a[data-file='notes.md']")
    export_button = page.locator("[data-testid=export]")
    export_button.wait_for()
    assert not compile_button.is_visible()
    assert page.locator("[data-testid=preview-frame]").is_visible()
    export_button.click()
    page.locator("[data-build-status]", has_text="Exported in").wait_for(timeout=60_000)
    assert download.get_attribute("href") == f"/drafts/{paper.pk}/pdf/export/?name=notes.md"
    screenshot(page, "drafts-export")
    assert console_errors == []


def test_a_review_survives_a_tab_switch_and_leaves_unsaved_text_alone(
    page, console_errors, server, drafts_dir, letter
):
    from apps.drafts.services import proposal_create

    draft_add_file(draft=letter, filename="notes.md", content="# Notes\n\nPhotos attached.\n")
    proposal = off_the_loop(proposal_create, draft=letter, filename="letter.md", new_text=SUGGESTED)
    sign_in(page, server)
    # The chat page's "Review in the editor" link opens the review directly.
    open_editor(page, server, letter, f"?file=letter.md&proposal={proposal.pk}")
    bar = page.locator("[data-testid=review-bar]")
    bar.wait_for()
    assert page.locator("[data-file='letter.md'] [data-pending-mark]").is_visible()
    hunk(page, 0).locator("[data-answer-button=accept]").click()
    progress = page.locator("[data-testid=review-progress]")
    assert progress.inner_text() == "1 of 2 answered"

    # Another file and back: the review is as it was left.
    page.click("a[data-file='notes.md']")
    bar.wait_for(state="hidden")
    page.wait_for_function(f"() => {EDITOR_TEXT_JS}.startsWith('# Notes')")
    page.click(".drafts-tab[data-tab='letter.md'] .drafts-tab__name")
    bar.wait_for()
    assert progress.inner_text() == "1 of 2 answered"
    accept = hunk(page, 0).locator("[data-answer-button=accept]")
    assert accept.get_attribute("aria-pressed") == "true"

    # The person's own text is a different Doc: edits there never touch the review.
    page.click("[data-review-close]")
    bar.wait_for(state="hidden")
    assert editor_text(page) == ORIGINAL
    page.locator(".CodeMirror-line", has_text="Olivia").click()
    page.keyboard.press("End")
    page.keyboard.type(" (P.S. photos follow)")
    page.click("[data-testid=review-suggestion]")
    bar.wait_for()
    hunk(page, 1).wait_for()
    assert "P.S." not in page.locator("[data-editor]").inner_text()
    page.click("[data-review-close]")
    assert "Olivia (P.S. photos follow)" in editor_text(page)
    assert page.locator(".drafts-tab[data-tab='letter.md'][data-dirty]").count() == 1

    # Saved, the file no longer matches the suggestion: the review says so,
    # and Discard drops it without writing anything.
    page.keyboard.press("Control+s")
    page.locator(".drafts-tab[data-dirty]").wait_for(state="detached")
    saved = on_disk(letter, drafts_dir)
    page.click("[data-testid=review-suggestion]")
    warning = page.locator("[data-review-warning]")
    warning.wait_for()
    assert "changed since this suggestion was made" in warning.inner_text()
    page.click("[data-review-discard]")
    bar.wait_for(state="hidden")
    assert "discarded" in page.locator("[data-message]").inner_text()
    proposal.refresh_from_db()
    assert proposal.status == "discarded"
    assert on_disk(letter, drafts_dir) == saved
    assert not page.locator("[data-file='letter.md'] [data-pending-mark]").is_visible()

    # Rename, keep, add a file: plain forms that come back to the open file.
    page.fill("[data-testid=draft-title]", "Window claim, final")
    page.click(".drafts-title button")
    page.wait_for_url(re.compile(r".*\?file=letter\.md$"))
    page.locator("[data-testid=keep]").click()
    page.locator("[data-testid=keep][aria-pressed=true]").wait_for()
    letter.refresh_from_db()
    assert letter.title == "Window claim, final" and letter.keep
    page.fill("[data-testid=add-file] input[name=filename]", "chapter.md")
    page.click("[data-testid=add-file] button")
    page.wait_for_url(re.compile(r".*\?file=chapter\.md$"))
    page.locator(".drafts-tab--active[data-tab='chapter.md']").wait_for()
    assert (drafts_dir / str(letter.owner_id) / letter.key / "chapter.md").read_text() == ""
    assert console_errors == []


NOTES = "# Notes\n\nPhotos attached.\n"


def test_each_tab_keeps_its_own_undo_and_unsaved_mark_and_a_message_saves_first(
    page, console_errors, server, drafts_dir, letter, local_model, llm
):
    draft_add_file(draft=letter, filename="notes.md", content=NOTES)
    sign_in(page, server)
    open_editor(page, server, letter)
    save_button = page.locator("[data-action=save]")
    unsaved = page.locator(".drafts-tab[data-dirty]")
    letter_tab = page.locator(".drafts-tab[data-tab='letter.md']")
    notes_tab = page.locator(".drafts-tab[data-tab='notes.md']")
    assert save_button.is_disabled()

    # An edit marks its tab unsaved (the close control becomes ●) and wakes Save.
    type_after(page, "Dear Sir or Madam,", " Thank you.")
    assert unsaved.count() == 1 and letter_tab.get_attribute("data-dirty") is not None
    assert letter_tab.locator(".drafts-tab__close").inner_text() == "●"
    assert save_button.is_enabled()

    # Another file: its own text, nothing unsaved there yet; the letter stays marked.
    page.click("a[data-file='notes.md']")
    page.wait_for_function(f"() => {EDITOR_TEXT_JS}.startsWith('# Notes')")
    assert save_button.is_disabled()
    type_after(page, "Photos attached.", " Six of them.")
    assert unsaved.count() == 2

    # Back in the letter, undo takes back the letter's edit and not the notes'.
    letter_tab.locator(".drafts-tab__name").click()
    page.wait_for_function(f"() => {EDITOR_TEXT_JS}.includes('Thank you.')")
    page.locator(".CodeMirror-line", has_text="Olivia").click()
    page.keyboard.press("Control+z")
    assert editor_text(page) == ORIGINAL
    letter_tab.and_(page.locator("[data-dirty]")).wait_for(state="detached")
    assert save_button.is_disabled()
    notes_tab.locator(".drafts-tab__name").click()
    page.wait_for_function(f"() => {EDITOR_TEXT_JS}.includes('Six of them.')")
    assert unsaved.count() == 1 and notes_tab.get_attribute("data-dirty") is not None

    # Closing an unsaved tab saves it first; the letter comes back to the editor.
    notes_tab.locator(".drafts-tab__close").click()
    notes_tab.wait_for(state="detached")
    assert on_disk(letter, drafts_dir, "notes.md") == NOTES.replace(".\n", ". Six of them.\n", 1)
    page.locator(".drafts-tab--active[data-tab='letter.md']").wait_for()
    assert editor_text(page) == ORIGINAL

    # The assistant reads the file from disk: a message saves unsaved text before it goes.
    type_after(page, "Olivia", " and Sam")
    llm.queue(Reply(text="Both names are there now."))
    page.click("[data-testid=chat-toggle]")
    page.fill("#composer-text", "Is the letter signed by both of us?")
    page.click("[data-pane=chat] [data-testid=send]")
    # The first message starts the draft's chat and brings the editor back with
    # it, the chat still beside the editor.
    answer = page.locator("[data-pane=chat] [data-testid=answer]", has_text="Both names")
    answer.wait_for()
    assert on_disk(letter, drafts_dir) == ORIGINAL.replace("Olivia", "Olivia and Sam")
    assert page.locator("[data-testid=chat-toggle]").get_attribute("aria-pressed") == "true"
    assert unsaved.count() == 0
    assert console_errors == []


def test_accept_all_writes_every_change_and_reject_all_writes_none(
    page, console_errors, server, drafts_dir, letter
):
    from apps.drafts.services import proposal_create

    first = off_the_loop(proposal_create, draft=letter, filename="letter.md", new_text=SUGGESTED)
    sign_in(page, server)
    open_editor(page, server, letter, f"?file=letter.md&proposal={first.pk}")
    bar = page.locator("[data-testid=review-bar]")
    message = page.locator("[data-message]")
    bar.wait_for()
    page.click("[data-review-all=accept]")
    bar.wait_for(state="hidden")
    assert "Applied 2 of 2 changes" in message.inner_text()
    assert on_disk(letter, drafts_dir) == SUGGESTED
    assert editor_text(page) == SUGGESTED
    first.refresh_from_db()
    assert first.status == "applied" and first.accepted == [0, 1]

    # The next suggestion, all of it rejected: nothing is written.
    second = off_the_loop(
        proposal_create,
        draft=letter,
        filename="letter.md",
        new_text=SUGGESTED.replace("Olivia", "Olivia Smith"),
    )
    open_editor(page, server, letter, f"?file=letter.md&proposal={second.pk}")
    bar.wait_for()
    assert page.locator(".drafts-tab[data-tab='letter.md'] .drafts-pending-mark").is_visible()
    assert page.locator("[data-testid=review-progress]").inner_text() == "0 of 1 answered"
    page.click("[data-review-all=reject]")
    bar.wait_for(state="hidden")
    assert "No change accepted" in message.inner_text()
    assert on_disk(letter, drafts_dir) == SUGGESTED
    second.refresh_from_db()
    assert second.status == "discarded"
    assert not page.locator(".drafts-tab[data-tab='letter.md'] .drafts-pending-mark").is_visible()
    assert console_errors == []
