"""Agent chats on the chat page: who sees the option, starting one, the mode
in its header and its switch, the terminal panel loaded only there, and the
inline-styles policy on that page alone."""

from __future__ import annotations

import pytest

from apps.agents import services
from apps.agents.models import AgentSession
from apps.chats.models import Chat
from apps.chats.services import turn_start
from tests.agents.conftest import shown_mode


def csp_of(response) -> dict[str, str]:
    return dict(
        part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";")
    )


def profile_of(person, name="box"):
    return services.profile_create(
        owner=person, name=name, host="127.0.0.1", port=2222, username="me", generate_key=True
    )


@pytest.fixture
def agent_chat(agent_owner):
    return services.agent_chat_create(
        owner=agent_owner, profile=profile_of(agent_owner), project_dir="/srv/app"
    )


def test_a_member_without_the_permission_sees_no_agent_option_and_gets_403(client, member):
    client.force_login(member)
    page = client.get("/chat/").content.decode()
    assert "New agent chat" not in page and "/chat/agent/new/" not in page
    assert client.get("/chat/agent/new/").status_code == 403
    assert client.post("/chat/agent/new/", {"project_dir": "/srv"}).status_code == 403
    assert client.post("/chat/agent/1/mode/", {"mode": "auto"}).status_code == 403
    assert not Chat.objects.filter(kind="agent").exists()


def test_with_the_permission_an_agent_chat_is_started_from_the_chat_page(client, agent_owner):
    profile = profile_of(agent_owner)
    client.force_login(agent_owner)
    assert 'href="/chat/agent/new/"' in client.get("/chat/").content.decode()
    form = client.get("/chat/agent/new/").content.decode()
    assert "box (me@127.0.0.1:2222)" in form
    response = client.post(
        "/chat/agent/new/", {"profile": profile.pk, "project_dir": "/srv/app", "mode": "plan"}
    )
    chat = Chat.objects.get(kind="agent")
    assert response.status_code == 302 and response["Location"] == f"/chat/{chat.pk}/"
    assert (chat.agent_session.project_dir, chat.agent_session.mode) == ("/srv/app", "plan")


def test_the_form_offers_only_profiles_the_person_may_use(client, agent_owner, agent_member):
    theirs = profile_of(agent_member, "theirs")
    profile_of(agent_owner)
    client.force_login(agent_owner)
    assert "theirs" not in client.get("/chat/agent/new/").content.decode()
    response = client.post(
        "/chat/agent/new/", {"profile": theirs.pk, "project_dir": "/srv", "mode": "ask"}
    )
    assert response.status_code == 400 and not Chat.objects.filter(kind="agent").exists()


def test_a_relative_directory_is_refused_with_a_reason(client, agent_owner):
    profile = profile_of(agent_owner)
    client.force_login(agent_owner)
    response = client.post(
        "/chat/agent/new/", {"profile": profile.pk, "project_dir": "app", "mode": "ask"}
    )
    assert response.status_code == 400
    assert "absolute directory" in response.content.decode()


def test_without_profiles_the_form_points_to_settings(client, agent_owner):
    client.force_login(agent_owner)
    page = client.get("/chat/agent/new/").content.decode()
    assert "no SSH profile yet" in page and 'href="/settings/ssh/add/"' in page


def test_the_agent_chat_page_shows_the_mode_and_the_terminal(client, agent_owner, agent_chat):
    client.force_login(agent_owner)
    response = client.get(f"/chat/{agent_chat.pk}/")
    page = response.content.decode()
    assert shown_mode(page) == "Ask · commands wait for you"
    assert "/srv/app" in page
    assert (
        f"Tell the agent what to do on {agent_chat.agent_session.profile.host} in /srv/app" in page
    )
    assert f'data-socket="/ws/terminal/{agent_chat.pk}/"' in page
    assert "vendor/xterm/xterm.css" in page and "js/terminal.js" in page
    # xterm styles itself inline: this page, and only this kind of page, allows it.
    policy = csp_of(response)
    assert policy["style-src"] == "'self' 'unsafe-inline'"
    assert policy["script-src"] == "'self'"
    assert policy["connect-src"].startswith("'self'")


def test_a_normal_chat_page_loads_no_terminal_and_keeps_the_strict_policy(client, agent_owner):
    chat, _, _ = turn_start(user=agent_owner, chat=None, text="hello")
    client.force_login(agent_owner)
    for url in [f"/chat/{chat.pk}/", "/chat/"]:
        response = client.get(url)
        page = response.content.decode()
        assert "xterm" not in page and "terminal.js" not in page and "agent-mode" not in page
        assert csp_of(response)["style-src"] == "'self'"


def test_someone_elses_agent_chat_is_404(client, agent_member, agent_chat):
    client.force_login(agent_member)
    assert client.get(f"/chat/{agent_chat.pk}/").status_code == 404
    assert client.post(f"/chat/agent/{agent_chat.pk}/mode/", {"mode": "auto"}).status_code == 404
    assert AgentSession.objects.get(pk=agent_chat.pk).mode == "ask"


def test_the_mode_switch_posts_and_changes_the_row(client, agent_owner, agent_chat):
    client.force_login(agent_owner)
    assert client.get(f"/chat/agent/{agent_chat.pk}/mode/").status_code == 405
    response = client.post(f"/chat/agent/{agent_chat.pk}/mode/", {"mode": "manual"})
    assert response.status_code == 302
    assert AgentSession.objects.get(pk=agent_chat.pk).mode == "manual"
    assert (
        "Manual · every call waits for you"
        in client.get(f"/chat/{agent_chat.pk}/").content.decode()
    )
    client.post(f"/chat/agent/{agent_chat.pk}/mode/", {"mode": "yolo"})
    assert AgentSession.objects.get(pk=agent_chat.pk).mode == "manual"


def test_the_mode_can_change_while_a_reply_is_written(client, agent_owner, agent_chat):
    """ "Stop approving all" in the middle of an Auto reply must work at once:
    the loop reads the mode before each round."""
    services.agent_mode_set(session=agent_chat.agent_session, mode="auto")
    turn_start(user=agent_owner, chat=agent_chat, text="build it")
    client.force_login(agent_owner)
    page = client.get(f"/chat/{agent_chat.pk}/").content.decode()
    assert 'data-testid="stop-approving-all"' in page
    client.post(f"/chat/agent/{agent_chat.pk}/mode/", {"mode": "ask"})
    assert AgentSession.objects.get(pk=agent_chat.pk).mode == "ask"


def test_after_losing_the_permission_the_chat_stays_readable_without_a_terminal(
    client, agent_owner, agent_chat
):
    agent_owner.groups.clear()
    client.force_login(agent_owner)
    response = client.get(f"/chat/{agent_chat.pk}/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "not enabled for you" in page
    assert "data-socket" not in page and "terminal.js" not in page
    assert 'data-testid="mode-form"' not in page


def test_a_chat_whose_profile_was_deleted_says_so(client, agent_owner, agent_chat):
    services.profile_delete(profile=agent_chat.agent_session.profile)
    client.force_login(agent_owner)
    page = client.get(f"/chat/{agent_chat.pk}/").content.decode()
    assert "SSH profile was deleted" in page and "data-socket" not in page


@pytest.mark.django_db(transaction=True)
def test_the_form_preselects_the_only_profile_and_offers_the_models(
    client, agent_owner, local_model
):
    profile = profile_of(agent_owner)
    client.force_login(agent_owner)
    form = client.get("/chat/agent/new/").content.decode()
    assert f'<option value="{profile.pk}" selected>box (me@127.0.0.1:2222)</option>' in form
    assert "---------" not in form  # nothing else to choose between
    assert f'<option value="{local_model.label}">' in form and "Default (" in form
    response = client.post(
        "/chat/agent/new/",
        {
            "profile": profile.pk,
            "project_dir": "/srv/app",
            "mode": "ask",
            "model": local_model.label,
        },
    )
    chat = Chat.objects.get(kind="agent")
    assert response.status_code == 302 and chat.model_label == local_model.label
    # A model the person may not use is refused by the form.
    response = client.post(
        "/chat/agent/new/",
        {"profile": profile.pk, "project_dir": "/srv/b", "mode": "ask", "model": "nope:x"},
    )
    assert response.status_code == 400 and Chat.objects.filter(kind="agent").count() == 1
    profile_of(agent_owner, "second")
    form = client.get("/chat/agent/new/").content.decode()
    assert "selected>box" not in form  # two machines: the person chooses


def test_a_new_agent_chat_says_what_it_is_for(client, agent_owner, agent_chat):
    client.force_login(agent_owner)
    page = client.get(f"/chat/{agent_chat.pk}/").content.decode()
    assert "Tell the agent what to do" in page and "Ask about your notes" not in page
    assert 'data-testid="terminal-toggle-head"' in page and 'data-testid="chat-more"' in page
    assert "New agent chat" in page  # its untitled name in the chat list
