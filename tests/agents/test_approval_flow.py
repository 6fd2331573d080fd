"""Approval of tool calls, enforced by the loop with the real agent policy
against a real OpenSSH server: a round that asks waits on one card and
nothing of it runs until the person answers; a denied call reaches the model
as denied; Stop denies; "Approve all" is a switch to Auto that any mode
change undoes; a right taken away (the permission, a shared profile) stops
every call at the moment it would run, also one approved on a card; and what
a person approves and what it did are there to read, after a reload and in
the export."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

from apps.agents import services
from apps.agents.models import AgentSession
from apps.agents.policy import PLAN_NOT_RUN, policy_for_chat
from apps.agents.tools import MAX_COMMAND_CHARS
from apps.chats import approvals
from apps.chats.models import Message, PendingAction
from apps.chats.runner import reply_start
from tests.agents.conftest import grant_agents, pinned_profile, shown_mode
from tests.agents.test_agent_turns import agent_chat, resume
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def project(sshd):
    return sshd.workdir("proj")


def start(answer: Message) -> Message:
    async def go():
        await reply_start(answer.pk, answer.chat_id).task

    async_to_sync(go)()
    answer.refresh_from_db()
    return answer


def tool_results(llm) -> list[str]:
    return [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


def append_call(name="ran.log", cwd=None) -> tuple[str, str]:
    """A command whose every run leaves one line in the project's `name`."""
    args = {"command": f"echo ran >> {name}"}
    if cwd:
        args["cwd"] = cwd
    return ("shell_run", json.dumps(args))


def runs(project, name="ran.log") -> int:
    path = project / name
    return len(path.read_text().splitlines()) if path.exists() else 0


def approve_all_on_a_card(user, chat, llm) -> None:
    """A command waits on a card; the person clicks "Approve all", which is a
    switch to Auto (one state, not a flag beside the mode)."""
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Done."))
    _, answer = run_turn(user, "build it", chat=chat)
    approvals.approvals_resolve(
        user=user, action=approvals.waiting_card(answer), approve=None, approve_all_for_chat=True
    )
    assert AgentSession.objects.get(pk=chat.pk).mode == "auto"
    resume(answer)


# --- the loop: one card per round, nothing runs before the answer


def test_a_command_waits_on_one_card_and_runs_only_after_approval(
    agent_owner, sshd, project, local_model, llm
):
    sshd.put(project / "README.md", "Build with make.\n")
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(
        Reply(tool_calls=[("file_read", '{"path": "README.md"}'), append_call()]),
        Reply(text="Done."),
    )
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    assert answer.status == Message.Status.WAITING
    assert runs(project) == 0  # nothing of the round ran, not even the read
    (card,) = PendingAction.objects.filter(message=answer, kind="approve_tools")
    assert [c["verdict"] for c in card.payload["calls"]] == ["run", "ask"]
    assert len(llm.chat_requests) == 1  # the model waits too

    approvals.approvals_resolve(user=agent_owner, action=card, approve=None)
    answer = resume(answer)
    assert runs(project) == 1
    assert answer.status == Message.Status.DONE and answer.text == "Done."
    read, ran = tool_results(llm)
    assert "Build with make." in read and ran.startswith("exit code 0")


def test_a_denied_command_reaches_the_model_as_denied_and_never_runs(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Understood."))
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    approvals.approvals_resolve(
        user=agent_owner, action=approvals.waiting_card(answer), approve=set()
    )
    answer = resume(answer)
    assert runs(project) == 0
    assert tool_results(llm)[0].endswith(approvals.DENIED)
    assert answer.activity[-1]["state"] == "denied"


def test_plan_mode_refuses_a_command_without_asking_and_shows_it_not_run(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project, mode="plan")
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="I would run make."))
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    assert answer.status == Message.Status.DONE
    assert not PendingAction.objects.filter(kind="approve_tools").exists()
    assert runs(project) == 0
    assert "Refused: Plan mode" in tool_results(llm)[0]
    page = signed_in(agent_owner).get(f"/chat/{chat.pk}/").content.decode()
    assert 'data-testid="call-not-run"' in page and PLAN_NOT_RUN in page
    assert "echo ran &gt;&gt; ran.log" in page


def test_stop_on_a_waiting_reply_denies_its_calls(agent_owner, sshd, project, local_model, llm):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]))
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    assert signed_in(agent_owner).post(f"/chat/{chat.pk}/stop/{answer.pk}/").status_code == 204
    answer.refresh_from_db()
    card = PendingAction.objects.get(message=answer)
    assert answer.status == Message.Status.STOPPED and approvals.STOPPED_NOTE in answer.notes
    assert card.status == PendingAction.Status.DISMISSED
    assert card.payload["calls"][0]["answer"] == "denied"
    assert runs(project) == 0


def test_the_card_approves_only_the_ticked_calls_and_says_what_each_does(
    agent_owner, sshd, project, local_model, llm, monkeypatch
):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(
        Reply(tool_calls=[append_call("outside.log", cwd="/tmp"), append_call()]),
        Reply(text="Done."),
    )
    _, answer = run_turn(agent_owner, "two commands", chat=chat)
    client = signed_in(agent_owner)
    page = client.get(f"/chat/{chat.pk}/").content.decode()
    assert 'data-testid="approval-card"' in page and "Run a command" in page
    assert (
        "outside the project directory" in page
        and f'in <code class="call__where">{project}' in page
    )
    # The continuation runs on daphne's loop (the browser test covers it);
    # the test client's loop ends with the request, so it is recorded here.
    resumed = []

    async def record(message_id):
        resumed.append(message_id)

    monkeypatch.setattr("apps.chats.views.reply_resume", record)
    card = approvals.waiting_card(answer)
    first, second = (c["id"] for c in card.payload["calls"])
    response = client.post(f"/chat/approval/{card.pk}/", {"decision": "approve", "call": [second]})
    assert response.status_code == 200
    assert "Run a command — denied; Run a command — approved" in response.content.decode()
    card.refresh_from_db()
    assert card.payload["answers"] == {first: False, second: True}
    assert resumed == [answer.pk]
    resume(answer)
    assert runs(project) == 1 and not (project / "outside.log").exists()
    denied, ran = tool_results(llm)
    assert denied.endswith(approvals.DENIED) and ran.startswith("exit code 0")


def test_nobody_else_can_answer_the_card_nor_name_another_chats_call(
    agent_owner, agent_member, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]))
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    card = approvals.waiting_card(answer)
    assert (
        signed_in(agent_member)
        .post(f"/chat/approval/{card.pk}/", {"decision": "approve"})
        .status_code
        == 404
    )
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(agent_owner)
    assert strict.post(f"/chat/approval/{card.pk}/", {"decision": "approve"}).status_code == 403
    # A call id the card does not hold (another chat's, or made up): 404.
    response = signed_in(agent_owner).post(
        f"/chat/approval/{card.pk}/", {"decision": "approve", "call": ["call_of_another_chat"]}
    )
    assert response.status_code == 404
    card.refresh_from_db()
    assert card.status == PendingAction.Status.PENDING and runs(project) == 0


def test_a_second_click_on_approve_runs_the_command_once(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Done."))
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    card = approvals.waiting_card(answer)
    approvals.approvals_resolve(user=agent_owner, action=card, approve=None)
    ticked = [c["id"] for c in card.payload["calls"]]
    response = signed_in(agent_owner).post(
        f"/chat/approval/{card.pk}/", {"decision": "approve", "call": ticked}
    )
    assert response.status_code == 409 and "already answered" in response.content.decode()
    resume(answer)
    assert runs(project) == 1


def test_the_chat_command_lists_pending_approvals_and_answers_them(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Done."))
    out = StringIO()
    call_command(
        "chat", "--user", agent_owner.username, "--chat", str(chat.pk), "--json", "build it",
        stdout=out,
    )  # fmt: skip
    first = json.loads(out.getvalue())
    assert first["mode"] == "ask" and first["stopped_reason"] == "waiting"
    (pending,) = first["pending_approvals"]
    assert pending["tool"] == "shell_run" and "echo ran" in pending["arguments"]
    assert runs(project) == 0
    out = StringIO()
    call_command(
        "chat", "--user", agent_owner.username, "--chat", str(chat.pk),
        "--approve", pending["id"], "--json", stdout=out,
    )  # fmt: skip
    second = json.loads(out.getvalue())
    assert second["reply"] == "Done." and second["pending_approvals"] == []
    assert runs(project) == 1


# --- the real policy, every mode against every kind of call


CALLS = {
    "read": ("file_read", {"path": "a.txt"}),
    "list": ("file_list", {"path": "."}),
    "write": ("file_write", {"path": "a.txt", "content": "x"}),
    "command": ("shell_run", {"command": "ls"}),
}
TABLE = {
    "plan": {"read": "run", "list": "run", "write": "refuse", "command": "refuse"},
    "ask": {"read": "run", "list": "run", "write": "ask", "command": "ask"},
    "manual": {"read": "ask", "list": "ask", "write": "ask", "command": "ask"},
    "auto": {"read": "run", "list": "run", "write": "run", "command": "run"},
}


@pytest.mark.parametrize("approved_all_before", [False, True])
@pytest.mark.parametrize("mode", list(TABLE))
def test_the_policy_enforces_each_mode_and_approve_all_never_outlives_a_mode_change(
    agent_owner, sshd, project, local_model, llm, mode, approved_all_before
):
    chat = agent_chat(agent_owner, sshd, project, mode="ask")
    if approved_all_before:
        approve_all_on_a_card(agent_owner, chat, llm)
    services.agent_mode_set(session=AgentSession.objects.get(pk=chat.pk), mode=mode)
    policy = policy_for_chat(chat)
    got = {kind: str(policy.decide(*CALLS[kind]).verdict) for kind in CALLS}
    assert got == TABLE[mode]


def test_approve_all_then_manual_asks_again_and_runs_nothing_until_approved(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    approve_all_on_a_card(agent_owner, chat, llm)
    page = signed_in(agent_owner).get(f"/chat/{chat.pk}/").content.decode()
    assert shown_mode(page) == "Auto · approving everything"
    assert 'data-testid="stop-approving-all"' in page

    client = signed_in(agent_owner)
    client.post(f"/chat/agent/{chat.pk}/mode/", {"mode": "manual"})
    page = client.get(f"/chat/{chat.pk}/").content.decode()
    assert shown_mode(page) == "Manual · every call waits for you"
    assert "stop-approving-all" not in page
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Done again."))
    _, answer = run_turn(agent_owner, "once more", chat=chat)
    assert answer.status == Message.Status.WAITING and runs(project) == 1
    approvals.approvals_resolve(user=agent_owner, action=approvals.waiting_card(answer))
    resume(answer)
    assert runs(project) == 2


def test_approve_all_then_plan_refuses_the_command(agent_owner, sshd, project, local_model, llm):
    chat = agent_chat(agent_owner, sshd, project)
    approve_all_on_a_card(agent_owner, chat, llm)
    services.agent_mode_set(session=AgentSession.objects.get(pk=chat.pk), mode="plan")
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Planned."))
    run_turn(agent_owner, "once more", chat=chat)
    assert runs(project) == 1
    assert "Refused: Plan mode" in tool_results(llm)[-1]


# --- a right taken away stops every call where it runs


def test_a_revoked_permission_stops_the_next_command_and_refuses_the_turn(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project, mode="auto")
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Done."))
    run_turn(agent_owner, "build it", chat=chat)
    assert runs(project) == 1
    agent_owner.groups.clear()
    owner = type(agent_owner).objects.get(pk=agent_owner.pk)
    response = signed_in(owner).post(f"/chat/{chat.pk}/send/", {"text": "again"})
    assert response.status_code == 400
    assert "no longer have permission to use agent chats" in response.content.decode()
    # A reply already under way (a regenerate, a resume) is refused at its start too.
    answer = Message.objects.filter(chat=chat, role="assistant").last()
    regenerated = services_regenerate(owner, chat, answer)
    assert regenerated is None
    assert runs(project) == 1


def services_regenerate(user, chat, reply):
    from apps.chats.services import reply_regenerate
    from apps.core.errors import Refused

    try:
        return reply_regenerate(user=user, chat=chat, reply=reply)
    except Refused:
        return None


def test_a_call_approved_on_a_card_is_refused_if_the_right_went_meanwhile(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Could not."))
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    card = approvals.waiting_card(answer)
    agent_owner.groups.clear()
    owner = type(agent_owner).objects.get(pk=agent_owner.pk)
    # Approving now is refused, with the reason on the card; nothing runs.
    ticked = [c["id"] for c in card.payload["calls"]]
    response = signed_in(owner).post(
        f"/chat/approval/{card.pk}/", {"decision": "approve", "call": ticked}
    )
    assert response.status_code == 409
    body = response.content.decode()
    assert 'data-testid="approval-error"' in body and "no longer have permission" in body
    assert runs(project) == 0
    # Approved a moment before the right went: the call is checked again where it runs.
    grant_agents(owner)
    approvals.approvals_resolve(user=owner, action=card, approve=None)
    owner.groups.clear()
    answer = resume(answer)
    assert runs(project) == 0
    assert answer.status == Message.Status.ERROR
    assert "no longer have permission to use agent chats" in answer.text


def test_an_unshared_profile_runs_nothing_more_with_the_owners_key(
    agent_owner, agent_member, admin, sshd, project, local_model, llm
):
    family = Group.objects.create(name="family")
    agent_member.groups.add(family)
    profile = pinned_profile(agent_owner, sshd)
    services.profile_share(profile=profile, groups=[family], actor=admin)
    member = type(agent_member).objects.get(pk=agent_member.pk)
    chat = agent_chat(member, sshd, project, mode="auto", profile=profile)
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Done."))
    run_turn(member, "build it", chat=chat)
    assert runs(project) == 1

    # Mid-reply: the policy let the round run, the share goes, the call is checked again.
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Could not."))
    from apps.chats.services import turn_start

    _, _, answer = turn_start(user=member, chat=chat, text="again")
    services.profile_share(profile=profile, groups=[], actor=admin)
    answer = start(answer)
    assert runs(project) == 1
    assert "access to the profile 'box'" in answer.text


def test_a_tool_call_checks_the_right_itself(agent_owner, sshd, project, local_model, llm):
    """The tool's own check, under the loop's: a call reaching shell_run after
    the right went sends nothing over SSH."""
    from apps.chats.tools import TurnContext, run_tool

    chat = agent_chat(agent_owner, sshd, project, mode="auto")
    ctx = TurnContext(user=agent_owner, chat=chat, cloud=False, notes_only=True, mentions=[])
    agent_owner.groups.clear()
    content, is_error = run_tool(ctx, *append_call())
    assert is_error and "no longer have permission" in content
    assert runs(project) == 0


# --- what a person reads: the whole call, and what it did


def test_the_output_of_an_approved_command_is_shown_under_it_after_a_reload_and_exported(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(
        Reply(tool_calls=[("shell_run", json.dumps({"command": "printf 'line1\\nline2'"}))]),
        Reply(text="Printed two lines."),
    )
    _, answer = run_turn(agent_owner, "print two lines", chat=chat)
    approvals.approvals_resolve(user=agent_owner, action=approvals.waiting_card(answer))
    answer = resume(answer)
    (entry,) = answer.activity
    assert entry["state"] == "ok" and entry["details"]["label"] == "Run a command"
    assert "seconds" in entry
    page = signed_in(agent_owner).get(f"/chat/{chat.pk}/").content.decode()
    output = page.split('data-testid="call-output">', 1)[1].split("</pre>", 1)[0]
    assert "exit code 0" in output and "line1\nline2" in output
    export = signed_in(agent_owner).get(f"/chat/{chat.pk}/export/").content.decode()
    assert "printf 'line1\\nline2'" in export and "line1\nline2" in export
    assert "**Run a command** — done" in export


def test_a_write_on_the_card_shows_its_change_against_the_file(
    agent_owner, sshd, project, local_model, llm
):
    sshd.put(project / "config.ini", "port = 80\nhost = a\n")
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(
        Reply(
            tool_calls=[
                (
                    "file_write",
                    json.dumps({"path": "config.ini", "content": "port = 8080\nhost = a\n"}),
                ),
                ("file_write", json.dumps({"path": "new.txt", "content": "a\nb\nc\n"})),
            ]
        )
    )
    _, answer = run_turn(agent_owner, "change the port", chat=chat)
    edit, new = approvals.waiting_card(answer).payload["calls"]
    assert "-port = 80\n+port = 8080" in edit["details"]["diff"]
    assert new["details"]["new_file"] is True and new["details"]["new_lines"] == 3
    page = signed_in(agent_owner).get(f"/chat/{chat.pk}/").content.decode()
    assert "Write a file" in page and "new file, 3 lines" in page
    assert (project / "config.ini").read_text() == "port = 80\nhost = a\n"  # nothing written yet


# --- bad input from the model


def test_control_characters_in_a_command_are_shown_escaped(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    command = "echo \x1b[31mred\x1b[0m; printf '\\a'\x07"
    llm.queue(Reply(tool_calls=[("shell_run", json.dumps({"command": command}))]))
    run_turn(agent_owner, "colours", chat=chat)
    page = signed_in(agent_owner).get(f"/chat/{chat.pk}/").content.decode()
    assert "\x1b" not in page and "\x07" not in page
    assert "echo \\x1b[31mred\\x1b[0m; printf &#x27;\\a&#x27;\\x07" in page


def test_a_command_too_long_to_review_is_refused_before_any_card(
    agent_owner, sshd, project, local_model, llm
):
    chat = agent_chat(agent_owner, sshd, project)
    command = "echo " + "x" * (1024 * 1024)
    llm.queue(Reply(tool_calls=[("shell_run", json.dumps({"command": command}))]), Reply(text="ok"))
    _, answer = run_turn(agent_owner, "long", chat=chat)
    assert answer.status == Message.Status.DONE
    assert not PendingAction.objects.filter(kind="approve_tools").exists()
    assert f"the limit is {MAX_COMMAND_CHARS:,}" in tool_results(llm)[0]


def test_a_write_to_a_directory_says_so(agent_owner, sshd, project, local_model, llm):
    (project / "sub").mkdir()
    chat = agent_chat(agent_owner, sshd, project, mode="auto")
    llm.queue(
        Reply(tool_calls=[("file_write", json.dumps({"path": "sub", "content": "x"}))]),
        Reply(text="ok"),
    )
    run_turn(agent_owner, "write", chat=chat)
    assert "it is a directory" in tool_results(llm)[0]
    assert (project / "sub").is_dir()


# --- the plan step


def test_a_submitted_plan_is_a_card_that_carries_it_out_in_ask_mode(
    agent_owner, sshd, project, local_model, llm, monkeypatch
):
    chat = agent_chat(agent_owner, sshd, project, mode="plan")
    llm.queue(
        Reply(tool_calls=[("submit_plan", json.dumps({"plan": "1. run make\n2. run tests"}))]),
        Reply(text="That is my plan."),
    )
    run_turn(agent_owner, "how would you build it?", chat=chat)
    client = signed_in(agent_owner)
    page = client.get(f"/chat/{chat.pk}/").content.decode()
    assert 'data-testid="plan-card"' in page and "Carry out (switches to Ask)" in page
    assert "1. run make\n2. run tests" in page and 'data-testid="revise"' in page

    started = []
    monkeypatch.setattr("apps.agents.views.reply_start", lambda pk, chat_id: started.append(pk))
    response = client.post(f"/chat/agent/{chat.pk}/plan/")
    assert response.status_code == 302
    assert AgentSession.objects.get(pk=chat.pk).mode == "ask"
    (answer_id,) = started
    question = Message.objects.get(pk=answer_id).parent
    assert question.text == services.CARRY_OUT
    # The scripted model carries it out: its command now waits for approval.
    llm.queue(Reply(tool_calls=[append_call()]), Reply(text="Built."))
    answer = start(Message.objects.get(pk=answer_id))
    assert answer.status == Message.Status.WAITING and runs(project) == 0
    approvals.approvals_resolve(user=agent_owner, action=approvals.waiting_card(answer))
    assert resume(answer).text == "Built." and runs(project) == 1
    # Another person's chat: 404.
    assert signed_in(grant_agents_member()).post(f"/chat/agent/{chat.pk}/plan/").status_code == 404


def grant_agents_member():
    from apps.accounts.models import User

    other = User.objects.create_user(username="zed", password="x" * 12)
    return grant_agents(other)


def test_a_reply_waiting_on_a_card_says_so_in_words(agent_owner, sshd, project, local_model, llm):
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]))
    run_turn(agent_owner, "build it", chat=chat)
    page = signed_in(agent_owner).get(f"/chat/{chat.pk}/").content.decode()
    assert "nothing runs until you answer" in page and "Approve all (switch to Auto)" in page


def test_a_reply_waiting_for_approval_is_regenerated_only_after_stop(
    agent_owner, sshd, project, local_model, llm
):
    from apps.chats.services import reply_regenerate
    from apps.core.errors import Conflict

    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(Reply(tool_calls=[append_call()]))
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    client = signed_in(agent_owner)
    refused = client.post(f"/chat/{chat.pk}/regenerate/{answer.pk}/", HTTP_HX_REQUEST="true")
    assert refused.status_code == 409  # the card still waits: one turn at a time
    with pytest.raises(Conflict):
        reply_regenerate(user=agent_owner, chat=chat, reply=answer)

    assert client.post(f"/chat/{chat.pk}/stop/{answer.pk}/").status_code == 204
    llm.queue(Reply(text="Thought better of it."))
    new = start(reply_regenerate(user=agent_owner, chat=chat, reply=answer))
    assert new.text == "Thought better of it." and runs(project) == 0
    answer.refresh_from_db()
    assert answer.status == Message.Status.STOPPED  # the old reply and its card stay
    assert answer.actions.get().status == "dismissed"
