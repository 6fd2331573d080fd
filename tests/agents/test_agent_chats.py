"""Agent chats as records: a chat kind fixed at creation, the machine and
directory it works in, and an approval mode that applies from the next round."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.http import Http404

from apps.agents import services
from apps.agents.models import AgentSession
from apps.agents.policy import policy_for_chat
from apps.agents.selectors import agent_session_for, get_agent_session_for
from apps.chats.approvals import Verdict
from apps.chats.models import Chat
from apps.chats.services import chat_delete, turn_start
from apps.core.errors import Refused


def profile_of(person, name="box"):
    return services.profile_create(
        owner=person, name=name, host="127.0.0.1", port=2222, username="me", generate_key=True
    )


def test_an_agent_chat_is_created_with_its_machine_directory_and_mode(agent_owner):
    profile = profile_of(agent_owner)
    chat = services.agent_chat_create(
        owner=agent_owner, profile=profile, project_dir="/srv/project/", mode="plan"
    )
    chat = Chat.objects.get(pk=chat.pk)
    assert chat.kind == "agent" and chat.is_agent
    session = chat.agent_session
    assert (session.profile, session.project_dir, session.mode) == (profile, "/srv/project", "plan")
    # It exists before its first message (its terminal is useful at once),
    # untitled until that message names it; a normal chat stays normal.
    assert chat.messages.count() == 0 and chat.title == ""
    turn_start(user=agent_owner, chat=chat, text="Find why the nightly backup fails")
    assert Chat.objects.get(pk=chat.pk).title == "Find why the nightly backup fails"
    normal, _, _ = turn_start(user=agent_owner, chat=None, text="hello")
    assert normal.kind == "normal" and agent_session_for(user=agent_owner, chat=normal) is None


def test_the_mode_defaults_to_ask(agent_owner):
    chat = services.agent_chat_create(
        owner=agent_owner, profile=profile_of(agent_owner), project_dir="/srv"
    )
    assert chat.agent_session.mode == AgentSession.Mode.ASK


def test_without_the_permission_no_agent_chat_is_made(owner, agent_member):
    profile = profile_of(agent_member)
    with pytest.raises(Refused, match="agent chats"):
        services.agent_chat_create(owner=owner, profile=profile, project_dir="/srv")
    assert not Chat.objects.filter(kind="agent").exists()


def test_someone_elses_profile_cannot_be_used_unless_shared(agent_owner, agent_member, admin):
    theirs = profile_of(agent_member, "theirs")
    with pytest.raises(Refused, match="no such SSH profile"):
        services.agent_chat_create(owner=agent_owner, profile=theirs, project_dir="/srv")
    group = Group.objects.create(name="family")
    agent_owner.groups.add(group)
    services.profile_share(profile=theirs, groups=[group], actor=admin)
    chat = services.agent_chat_create(owner=agent_owner, profile=theirs, project_dir="/srv")
    assert chat.agent_session.profile == theirs


@pytest.mark.parametrize("directory", ["", "project", "~/project", "/srv/a\nb"])
def test_the_directory_must_be_absolute(agent_owner, directory):
    with pytest.raises(ValidationError):
        services.agent_chat_create(
            owner=agent_owner, profile=profile_of(agent_owner), project_dir=directory
        )
    assert not Chat.objects.exists()


def test_an_unknown_mode_is_refused(agent_owner):
    with pytest.raises(Refused, match="unknown approval mode"):
        services.agent_chat_create(
            owner=agent_owner, profile=profile_of(agent_owner), project_dir="/srv", mode="yolo"
        )


def test_a_mode_change_applies_to_the_next_round_even_during_a_reply(agent_owner):
    chat = services.agent_chat_create(
        owner=agent_owner, profile=profile_of(agent_owner), project_dir="/srv"
    )
    session = chat.agent_session
    services.agent_mode_set(session=session, mode="auto")
    run = ("shell_run", {"command": "make"})
    assert policy_for_chat(chat).decide(*run).verdict == Verdict.RUN

    # A reply is running in Auto: switching back takes effect at its next round.
    turn_start(user=agent_owner, chat=chat, text="build it")
    services.agent_mode_set(session=session, mode="manual")
    assert AgentSession.objects.get(pk=chat.pk).mode == "manual"
    assert policy_for_chat(chat).decide(*run).verdict == Verdict.ASK
    with pytest.raises(Refused, match="unknown approval mode"):
        services.agent_mode_set(session=session, mode="yolo")


def test_only_the_owner_finds_the_agent_chat(agent_owner, agent_member):
    chat = services.agent_chat_create(
        owner=agent_owner, profile=profile_of(agent_owner), project_dir="/srv"
    )
    assert get_agent_session_for(user=agent_owner, chat_id=chat.pk).chat == chat
    with pytest.raises(Http404):
        get_agent_session_for(user=agent_member, chat_id=chat.pk)
    assert agent_session_for(user=agent_member, chat=chat) is None


def test_deleting_the_profile_keeps_the_chat_readable(agent_owner):
    profile = profile_of(agent_owner)
    chat = services.agent_chat_create(owner=agent_owner, profile=profile, project_dir="/srv")
    services.profile_delete(profile=profile)
    session = AgentSession.objects.get(pk=chat.pk)
    assert session.profile is None and session.project_dir == "/srv"


def test_deleting_the_chat_deletes_its_agent_side(agent_owner):
    chat = services.agent_chat_create(
        owner=agent_owner, profile=profile_of(agent_owner), project_dir="/srv"
    )
    chat_delete(chat=chat)
    assert not AgentSession.objects.exists()


# --- manage.py chat --agent (the chat kind agents registers)


@pytest.mark.django_db(transaction=True)  # the turn runs on another thread: rows must be committed
def test_the_chat_command_starts_an_agent_chat_on_a_named_profile(agent_owner):
    profile = profile_of(agent_owner, "Box")
    out = StringIO()
    call_command(
        "chat", "--user", agent_owner.username, "--agent", "box", "--dir", "/srv/app",
        "--mode", "plan", "--json", "what is here?", stdout=out,
    )  # fmt: skip
    chat = Chat.objects.get(kind="agent")
    assert json.loads(out.getvalue())["chat_id"] == chat.pk
    session = chat.agent_session
    assert (session.profile, session.project_dir, session.mode) == (profile, "/srv/app", "plan")
    assert chat.messages.filter(role="user").get().text == "what is here?"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nope", "--dir", "/srv"], "no SSH profile named 'nope'"),
        (["--agent", "box", "--dir", "srv"], "absolute directory"),
    ],
)
def test_the_chat_command_says_what_is_wrong(agent_owner, args, message):
    profile_of(agent_owner)
    with pytest.raises(CommandError, match=message):
        call_command("chat", "--user", agent_owner.username, *args, "hello", stdout=StringIO())
    assert not Chat.objects.exists()


def test_the_chat_command_refuses_an_agent_chat_without_the_permission(owner):
    with pytest.raises(CommandError, match="agent chats"):
        call_command(
            "chat", "--user", owner.username, "--agent", "box", "--dir", "/srv", "hello",
            stdout=StringIO(),
        )  # fmt: skip
    assert not Chat.objects.exists()
