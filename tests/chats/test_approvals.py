"""Approval of tool calls, enforced by the loop: a chat whose policy asks
waits with one card per round; nothing of the round runs until the person
answers; a denied call reaches the model as denied; Stop denies. The policy
here is a test's own (agent chats register theirs; see tests/agents)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.test import Client

from apps.chats import approvals
from apps.chats.approvals import Decision, Verdict
from apps.chats.models import Message, PendingAction
from apps.chats.runner import reply_resume
from apps.chats.tools import Tool, tool_spec
from apps.chats.tools.registry import TOOLS
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply

RAN: list[dict] = []


class AskForWrites:
    """Reads run, `scribble` waits, `shred` is refused."""

    mode = "ask"

    def __init__(self) -> None:
        self.everything = False

    def decide(self, name: str, arguments: dict) -> Decision:
        if name == "shred":
            return Decision(Verdict.REFUSE, "shredding is never allowed here")
        if name == "scribble" and not self.everything:
            return Decision(
                Verdict.ASK, note="writes outside the project" if "/etc" in str(arguments) else ""
            )
        return Decision(Verdict.RUN)

    def approve_all(self) -> None:
        self.everything = True


@pytest.fixture
def policy(monkeypatch):
    chosen = AskForWrites()
    monkeypatch.setattr(approvals, "PROVIDERS", [lambda chat: chosen])
    for name in ("scribble", "shred", "peek"):
        monkeypatch.setitem(
            TOOLS,
            name,
            Tool(
                tool_spec(name, f"test tool {name}", {"text": {"type": "string"}}),
                lambda ctx, args, name=name: RAN.append({"tool": name, **args}) or f"{name} done",
            ),
        )
    RAN.clear()
    return chosen


def resume(answer: Message) -> Message:
    async def go():
        await (await reply_resume(answer.pk)).task

    async_to_sync(go)()
    answer.refresh_from_db()
    return answer


def tool_results(llm) -> list[dict]:
    """The tool messages the model received in its last request."""
    return [m for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


def test_a_write_waits_on_one_card_and_runs_only_after_approval(owner, local_model, llm, policy):
    llm.queue(
        Reply(tool_calls=[("peek", '{"text": "a"}'), ("scribble", '{"text": "notes.txt"}')]),
        Reply(text="Written."),
    )
    _chat, answer = run_turn(owner, "write it down")
    assert answer.status == Message.Status.WAITING
    assert RAN == []  # nothing of the round ran, not even the read
    (card,) = PendingAction.objects.filter(message=answer, kind="approve_tools")
    assert [c["name"] for c in card.payload["calls"]] == ["peek", "scribble"]
    assert [c["verdict"] for c in card.payload["calls"]] == ["run", "ask"]
    assert len(llm.chat_requests) == 1  # the model waits too

    approvals.approvals_resolve(user=owner, action=card, approve=None)
    answer = resume(answer)
    assert [r["tool"] for r in RAN] == ["peek", "scribble"]
    assert answer.status == Message.Status.DONE and answer.text == "Written."
    assert [m["content"] for m in tool_results(llm)] == ["peek done", "scribble done"]


def test_a_denied_call_reaches_the_model_as_denied_and_never_runs(owner, local_model, llm, policy):
    llm.queue(Reply(tool_calls=[("scribble", '{"text": "x"}')]), Reply(text="Understood."))
    _, answer = run_turn(owner, "write it")
    card = approvals.waiting_card(answer)
    approvals.approvals_resolve(user=owner, action=card, approve=set())
    answer = resume(answer)
    assert RAN == []
    (result,) = tool_results(llm)
    assert result["content"].endswith(approvals.DENIED)
    assert answer.activity[-1]["state"] == "denied"


def test_a_refused_call_is_never_asked_about_and_the_model_is_told_why(
    owner, local_model, llm, policy
):
    llm.queue(Reply(tool_calls=[("shred", "{}")]), Reply(text="I can't."))
    _, answer = run_turn(owner, "shred it")
    assert answer.status == Message.Status.DONE
    assert not PendingAction.objects.filter(kind="approve_tools").exists()
    assert RAN == []
    assert tool_results(llm)[0]["content"].endswith("Refused: shredding is never allowed here")


def test_stop_on_a_waiting_reply_denies_its_calls(owner, local_model, llm, policy):
    llm.queue(Reply(tool_calls=[("scribble", '{"text": "x"}')]))
    chat, answer = run_turn(owner, "write it")
    client = Client()
    client.force_login(owner)
    assert client.post(f"/chat/{chat.pk}/stop/{answer.pk}/").status_code == 204
    answer.refresh_from_db()
    card = PendingAction.objects.get(message=answer)
    assert answer.status == Message.Status.STOPPED and approvals.STOPPED_NOTE in answer.notes
    assert card.status == PendingAction.Status.DISMISSED
    assert card.payload["calls"][0]["answer"] == "denied"
    assert RAN == []


def test_the_card_in_the_browser_approves_the_ticked_calls(
    owner, local_model, llm, policy, monkeypatch
):
    llm.queue(
        Reply(tool_calls=[("scribble", '{"text": "/etc/passwd"}'), ("scribble", '{"text": "b"}')]),
        Reply(text="Done."),
    )
    chat, answer = run_turn(owner, "two writes")
    client = Client()
    client.force_login(owner)
    page = client.get(f"/chat/{chat.pk}/").content.decode()
    assert 'data-testid="approval-card"' in page and "writes outside the project" in page
    # The continuation runs on daphne's loop (the browser test covers it);
    # the test client's loop ends with the request, so it is recorded here.
    resumed = []

    async def record(message_id):
        resumed.append(message_id)

    monkeypatch.setattr("apps.chats.views.reply_resume", record)
    card = approvals.waiting_card(answer)
    first, second = (c["id"] for c in card.payload["calls"])
    response = client.post(f"/chat/approval/{card.pk}/", {"decision": "approve", "call": [second]})
    assert response.status_code == 200 and "denied" in response.content.decode()
    card.refresh_from_db()
    assert card.payload["answers"] == {first: False, second: True}
    assert resumed == [answer.pk]
    answer = resume(answer)
    assert RAN == [{"tool": "scribble", "text": "b"}]
    contents = [m["content"] for m in tool_results(llm)]
    assert contents[0].endswith(approvals.DENIED) and contents[1] == "scribble done"


def test_approve_all_for_this_chat_stops_the_asking(owner, local_model, llm, policy):
    llm.queue(Reply(tool_calls=[("scribble", "{}")]), Reply(text="ok"))
    _, answer = run_turn(owner, "write")
    approvals.approvals_resolve(
        user=owner, action=approvals.waiting_card(answer), approve=None, approve_all_for_chat=True
    )
    assert policy.everything


def test_nobody_else_can_answer_the_card(owner, member, local_model, llm, policy):
    llm.queue(Reply(tool_calls=[("scribble", "{}")]))
    _, answer = run_turn(owner, "write")
    card = approvals.waiting_card(answer)
    client = Client()
    client.force_login(member)
    assert client.post(f"/chat/approval/{card.pk}/", {"decision": "approve"}).status_code == 404
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(owner)
    assert strict.post(f"/chat/approval/{card.pk}/", {"decision": "approve"}).status_code == 403
    card.refresh_from_db()
    assert card.status == PendingAction.Status.PENDING and RAN == []


def test_the_chat_command_lists_pending_approvals_and_answers_them(owner, local_model, llm, policy):
    llm.queue(Reply(tool_calls=[("scribble", '{"text": "x"}')]), Reply(text="Written."))
    out = StringIO()
    call_command("chat", "--user", owner.username, "--json", "write it", stdout=out)
    first = json.loads(out.getvalue())
    assert first["mode"] == "ask" and first["stopped_reason"] == "waiting"
    (pending,) = first["pending_approvals"]
    assert pending["tool"] == "scribble" and json.loads(pending["arguments"]) == {"text": "x"}
    assert RAN == []
    out = StringIO()
    call_command(
        "chat", "--user", owner.username, "--chat", str(first["chat_id"]),
        "--approve", pending["id"], "--json", stdout=out,
    )  # fmt: skip
    second = json.loads(out.getvalue())
    assert second["reply"] == "Written." and second["pending_approvals"] == []
    assert RAN == [{"tool": "scribble", "text": "x"}]
