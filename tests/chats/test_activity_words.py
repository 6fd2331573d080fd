"""The activity list of a reply reads as sentences: no raw state names, no
"Used 0 tools" while a call waits for approval."""

from __future__ import annotations

from types import SimpleNamespace

from django.template.loader import render_to_string


def activity(status: str, calls: list[dict]) -> str:
    reply = SimpleNamespace(pk=7, status=status, tool_activity=calls, call_activity=[])
    return render_to_string("chats/_reply.html#activity", {"reply": reply})


def summary(html: str) -> str:
    return html.split('data-testid="activity-summary">')[1].split("</summary>")[0]


def test_a_reply_waiting_for_approval_says_so_not_used_0_tools():
    html = activity("waiting", [])
    assert summary(html) == "Waiting for your approval"
    assert "Used 0" not in html


def test_a_reply_waiting_after_two_calls_counts_them_so_far():
    calls = [{"name": "search_notes", "arguments": "{}", "state": "ok"}] * 2
    assert summary(activity("waiting", calls)) == (
        "Waiting for your approval · used 2 tools so far"
    )
    assert summary(activity("done", calls)) == "Used 2 tools"


def test_a_refused_call_reads_as_a_sentence_with_its_reason():
    calls = [
        {
            "name": "run_command",
            "arguments": "{}",
            "state": "refuse",
            "reason": "this chat may not run commands",
        },
        {"name": "search_notes", "arguments": "{}", "state": "ask"},
    ]
    html = activity("waiting", calls)
    assert "— refuse" not in html and ">refuse<" not in html
    assert "not run, because this chat may not run commands" in html
    assert 'search_notes</code> <span class="muted">{}</span>: waiting for your approval' in html
