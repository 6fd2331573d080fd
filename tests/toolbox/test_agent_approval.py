"""Outside tools in an agent chat go through its approval mode like any other
call (the real agent policy, a real OpenSSH server for the chat's profile): in
Ask mode a call waits on a card and runs only once approved; in Plan mode it
is refused; a tool the admin marked read-only runs in Ask without a card."""

from __future__ import annotations

import json

import pytest

from apps.chats import approvals
from apps.chats.models import Message
from apps.toolbox.models import McpTool
from tests.agents.conftest import grant_agents
from tests.agents.test_agent_turns import agent_chat, resume
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply
from tests.toolbox.conftest import checked, stdio_server

pytestmark = pytest.mark.django_db(transaction=True)

WEATHER = ("fake__weather", json.dumps({"city": "Leeds"}))


@pytest.fixture
def agent_user(owner, tool_users):
    return grant_agents(owner)


@pytest.fixture
def project(sshd):
    return sshd.workdir("toolbox-proj")


def tool_messages(llm) -> list[str]:
    return [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


def test_in_ask_mode_an_outside_tool_waits_on_a_card_and_runs_once_approved(
    agent_user, tool_users, sshd, project, local_model, llm
):
    checked(stdio_server(tool_users))
    chat = agent_chat(agent_user, sshd, project, mode="ask")
    llm.queue(Reply(tool_calls=[WEATHER]), Reply(text="Drizzle."))
    _, answer = run_turn(agent_user, "What's the weather?", chat=chat)

    assert answer.status == Message.Status.WAITING
    card = approvals.waiting_card(answer)
    [asked] = card.payload["calls"]
    assert (asked["name"], asked["verdict"]) == ("fake__weather", "ask")
    assert len(llm.chat_requests) == 1  # nothing ran, no second request yet

    approvals.approvals_resolve(user=agent_user, action=card, approve=None)
    answer = resume(answer)
    assert "Forecast for Leeds" in tool_messages(llm)[0]
    assert answer.text == "Drizzle."


def test_in_plan_mode_an_outside_tool_is_refused(
    agent_user, tool_users, sshd, project, local_model, llm
):
    checked(stdio_server(tool_users))
    chat = agent_chat(agent_user, sshd, project, mode="plan")
    llm.queue(Reply(tool_calls=[WEATHER]), Reply(text="I'll plan instead."))
    _, answer = run_turn(agent_user, "What's the weather?", chat=chat)
    [result] = tool_messages(llm)
    assert "Plan mode: nothing is run or changed" in result and "Forecast" not in result
    assert [a["state"] for a in answer.activity if a["name"] == "fake__weather"] == ["refuse"]


def test_a_tool_marked_read_only_runs_in_ask_mode_without_a_card(
    agent_user, tool_users, sshd, project, local_model, llm
):
    checked(stdio_server(tool_users))
    McpTool.objects.filter(exposed_name="fake__weather").update(read_only=True)
    chat = agent_chat(agent_user, sshd, project, mode="ask")
    llm.queue(Reply(tool_calls=[WEATHER]), Reply(text="Drizzle."))
    _, answer = run_turn(agent_user, "What's the weather?", chat=chat)
    assert answer.status == Message.Status.DONE
    assert approvals.waiting_card(answer) is None
    assert "Forecast for Leeds" in tool_messages(llm)[0]
