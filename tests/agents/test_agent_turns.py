"""Agent chat turns against a real OpenSSH server: the tools run over SSH, and
each approval mode is enforced by the loop (a command in Plan mode never runs;
in Ask mode it runs only after approval; Stop denies)."""

from __future__ import annotations

import json
import secrets
from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.test import Client

from apps.agents import services
from apps.chats import approvals
from apps.chats.models import Message
from apps.chats.runner import reply_resume
from tests.agents.conftest import pinned_profile
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def project(sshd):
    return sshd.workdir("proj")


def agent_chat(owner, sshd, project, mode="ask", profile=None):
    """An agent chat in `project` on the owner's first profile (made and pinned
    for `sshd` when they have none), or on `profile`."""
    profile = profile or owner.ssh_profiles.first() or pinned_profile(owner, sshd)
    return services.agent_chat_create(
        owner=owner, profile=profile, project_dir=str(project), mode=mode
    )


def resume(answer: Message) -> Message:
    """Go on with a reply whose card was answered, and wait for it."""

    async def go():
        await (await reply_resume(answer.pk)).task

    async_to_sync(go)()
    answer.refresh_from_db()
    return answer


def results(llm) -> list[str]:
    return [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


def touch_call(project, name="made.txt") -> tuple[str, str]:
    return ("shell_run", json.dumps({"command": f"touch {name} && echo done"}))


def test_plan_mode_never_runs_a_command_but_reads_and_takes_a_plan(
    agent_owner, sshd, project, local_model, llm
):
    sshd.put(project / "README.md", "Build with make.\n")
    chat = agent_chat(agent_owner, sshd, project, "plan")
    llm.queue(
        Reply(
            tool_calls=[
                ("file_read", '{"path": "README.md"}'),
                touch_call(project),
                ("submit_plan", '{"plan": "1. run make"}'),
            ]
        ),
        Reply(text="Here is my plan."),
    )
    _, answer = run_turn(agent_owner, "what would you do?", chat=chat)
    assert answer.status == Message.Status.DONE and answer.text == "Here is my plan."
    assert not (project / "made.txt").exists()
    read, refused, plan = results(llm)
    assert "Build with make." in read
    assert "Plan mode" in refused and "Refused" in refused
    assert "Plan recorded" in plan


def test_ask_mode_runs_a_command_only_after_approval(agent_owner, sshd, project, local_model, llm):
    chat = agent_chat(agent_owner, sshd, project, "ask")
    llm.queue(Reply(tool_calls=[touch_call(project)]), Reply(text="Made it."))
    _, answer = run_turn(agent_owner, "make the file", chat=chat)
    assert answer.status == Message.Status.WAITING
    assert not (project / "made.txt").exists()
    card = approvals.waiting_card(answer)
    (call,) = card.payload["calls"]
    assert call["name"] == "shell_run" and "touch made.txt" in call["arguments"]
    approvals.approvals_resolve(user=agent_owner, action=card, approve=None)
    answer = resume(answer)
    assert (project / "made.txt").exists()
    (result,) = results(llm)
    assert result.startswith("exit code 0") and "done" in result
    assert answer.text == "Made it."


def test_manual_mode_waits_even_for_a_read_and_auto_mode_asks_nothing(
    agent_owner, sshd, project, local_model, llm
):
    manual = agent_chat(agent_owner, sshd, project, "manual")
    llm.queue(Reply(tool_calls=[("file_list", "{}")]))
    _, answer = run_turn(agent_owner, "look around", chat=manual)
    assert answer.status == Message.Status.WAITING

    auto = agent_chat(agent_owner, sshd, project, "auto")
    llm.queue(Reply(tool_calls=[touch_call(project, "auto.txt")]), Reply(text="ok"))
    _, answer = run_turn(agent_owner, "go", chat=auto)
    assert answer.status == Message.Status.DONE and (project / "auto.txt").exists()


def test_stop_denies_a_waiting_command(agent_owner, sshd, project, local_model, llm):
    chat = agent_chat(agent_owner, sshd, project, "ask")
    llm.queue(Reply(tool_calls=[touch_call(project)]))
    _, answer = run_turn(agent_owner, "make it", chat=chat)
    client = Client()
    client.force_login(agent_owner)
    assert client.post(f"/chat/{chat.pk}/stop/{answer.pk}/").status_code == 204
    answer.refresh_from_db()
    assert answer.status == Message.Status.STOPPED and not (project / "made.txt").exists()


def test_file_tools_take_paths_with_spaces_and_quotes_and_mark_paths_outside(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project, "ask")
    name = 'it\'s a "test" file.txt'
    elsewhere = f"/tmp/jarvis-elsewhere-{secrets.token_hex(4)}.txt"
    llm.queue(
        Reply(
            tool_calls=[
                ("file_write", json.dumps({"path": name, "content": "hello $HOME `id`"})),
                ("file_write", json.dumps({"path": elsewhere, "content": "x"})),
            ]
        ),
        Reply(tool_calls=[("file_read", json.dumps({"path": name}))]),
        Reply(text="Done."),
    )
    _, answer = run_turn(agent_owner, "write it", chat=chat)
    card = approvals.waiting_card(answer)
    inside, outside = card.payload["calls"]
    assert inside["note"] == "" and outside["note"] == "outside the project directory"
    approvals.approvals_resolve(user=agent_owner, action=card, approve={inside["id"]})
    resume(answer)
    assert (project / name).read_text() == "hello $HOME `id`"  # bytes, never a shell
    written, denied, read = results(llm)
    assert written.startswith("Created") and denied.endswith(approvals.DENIED)
    assert "hello $HOME `id`" in read and not Path(elsewhere).exists()


def test_a_command_past_its_timeout_is_killed_and_the_model_is_told(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project, "auto")
    llm.queue(
        Reply(tool_calls=[("shell_run", '{"command": "sleep 30", "timeout": 1}')]),
        Reply(text="It hung."),
    )
    _, answer = run_turn(agent_owner, "wait", chat=chat)
    (result,) = results(llm)
    assert "ran longer than 1 s and was stopped" in result
    assert answer.text == "It hung."


def test_a_changed_host_key_reaches_the_chat_as_a_clear_message(
    agent_owner, fresh_sshd, local_model, llm
):
    project = fresh_sshd.workdir("proj")
    chat = agent_chat(agent_owner, fresh_sshd, project, "auto")
    fresh_sshd.restart(new_host_key=True)
    llm.queue(Reply(tool_calls=[("file_list", "{}")]), Reply(text="Cannot connect."))
    _, answer = run_turn(agent_owner, "look", chat=chat)
    (result,) = results(llm)
    assert "host key changed" in result
    assert answer.status == Message.Status.DONE and answer.activity[0]["state"] == "error"


def test_bad_calls_get_an_error_the_model_can_read(agent_owner, sshd, project, local_model, llm):
    chat = agent_chat(agent_owner, sshd, project, "auto")
    llm.queue(
        Reply(tool_calls=[("rm_everything", "{}"), ("shell_run", '{"cwd": 5}')]),
        Reply(text="Sorry."),
    )
    run_turn(agent_owner, "oops", chat=chat)
    unknown, invalid = results(llm)
    assert "Unknown tool 'rm_everything'" in unknown
    assert "command must be a non-empty string" in invalid


def test_the_chat_command_runs_an_agent_turn_and_answers_its_approvals(
    agent_owner, sshd, project, local_model, llm
):
    pinned_profile(agent_owner, sshd)
    llm.queue(Reply(tool_calls=[touch_call(project)]), Reply(text="Made it."))
    out = StringIO()
    call_command(
        "chat", "--user", agent_owner.username, "--agent", "box", "--dir", str(project),
        "--mode", "ask", "--json", "make the file", stdout=out,
    )  # fmt: skip
    first = json.loads(out.getvalue())
    assert first["mode"] == "ask"
    (pending,) = first["pending_approvals"]
    assert pending["tool"] == "shell_run" and not (project / "made.txt").exists()
    out = StringIO()
    call_command(
        "chat", "--user", agent_owner.username, "--chat", str(first["chat_id"]),
        "--approve", "all", "--json", stdout=out,
    )  # fmt: skip
    second = json.loads(out.getvalue())
    assert second["reply"] == "Made it." and second["pending_approvals"] == []
    assert (project / "made.txt").exists()


def test_an_agent_chat_keeps_the_library_tools_and_their_privacy(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project, "ask")
    llm.queue(Reply(tool_calls=[("search_notes", '{"query": "anything"}')]), Reply(text="ok"))
    _, answer = run_turn(agent_owner, "search", chat=chat)
    assert answer.status == Message.Status.DONE  # a read: it ran without asking
    offered = {t["function"]["name"] for t in llm.chat_requests[0].json["tools"]}
    assert {"search_notes", "shell_run", "file_read", "file_write", "file_list"} <= offered
