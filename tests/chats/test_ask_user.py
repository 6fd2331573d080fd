"""The model asks the person (ask_user), through the real runner against the
fake OpenAI-compatible server over real HTTP: every question of a round is
on one card, the reply waits (also across a reload), the answers go back
together as the round's tool results and the reply goes on; Stop closes the
card; an answer the card does not allow, another person's card and a second
answer are refused."""

from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from apps.chats.models import Message, PendingAction
from apps.chats.runner import reply_resume
from apps.chats.tools import ask
from tests.agents.conftest import agent_owner, sshd  # noqa: F401  (fixtures)
from tests.agents.test_agent_turns import agent_chat
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db(transaction=True)

TWO_QUESTIONS = {
    "questions": [
        {"question": "Which city is the trip to?"},
        {"question": "Train or car?", "choices": ["Train", "Car"]},
    ]
}


def resume(answer: Message) -> Message:
    """Go on with the reply whose card was answered, and wait for it (the
    browser's answer resumes it on daphne's loop; the test client's loop
    ends with the request)."""

    async def go():
        await (await reply_resume(answer.pk)).task

    async_to_sync(go)()
    answer.refresh_from_db()
    return answer


@pytest.fixture
def no_resume(monkeypatch):
    """Record the resume the answer view asks for; the test resumes itself."""
    resumed = []

    async def record(message_id):
        resumed.append(message_id)

    monkeypatch.setattr("apps.chats.ask_views.reply_resume", record)
    return resumed


def answer_card(client: Client, card, data: dict):
    """Post the card as the page's htmx does (a swap of the card in place)."""
    return client.post(f"/chat/ask/{card.pk}/", data, headers={"HX-Request": "true"})


def tool_messages(llm) -> list[dict]:
    return [m for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


def asked(owner, llm, *calls, text="Plan my trip"):
    """A turn whose first round is `calls` (each (name, arguments dict))."""
    llm.queue(
        Reply(text="Let me ask first.", tool_calls=[(n, json.dumps(a)) for n, a in calls]),
        Reply(text="Berlin by train it is."),
    )
    return run_turn(owner, text)


def test_two_questions_wait_on_one_card_and_their_answers_go_back_together(
    owner, local_model, llm, no_resume
):
    chat, answer = asked(owner, llm, ("ask_user", TWO_QUESTIONS))
    assert answer.status == Message.Status.WAITING
    assert len(llm.chat_requests) == 1  # the model waits for the answers
    (card,) = PendingAction.objects.filter(message=answer, kind="ask_user", status="pending")

    # A reload shows the card, each question labelled, while the reply waits.
    client = signed_in(owner)
    page = client.get(f"/chat/{chat.pk}/").content.decode()
    assert 'data-testid="ask-card"' in page
    assert "Jarvis asks you 2 questions" in page
    assert "Waiting for your answers to the questions below" in page
    assert re.search(r'<label for="ask-\d+-q1">Which city is the trip to\?</label>', page)
    assert "<legend>Train or car?</legend>" in page
    assert 'type="radio" name="q2" value="Train"' in page and 'value="Car"' in page
    assert 'data-testid="stop"' in page  # the reply is still in flight

    response = answer_card(client, card, {"q1": "Berlin", "q2": "Train"})
    assert response.status_code == 200
    shown = response.content.decode()
    assert "Your answers" in shown and "<dd>Berlin</dd>" in shown and "<dd>Train</dd>" in shown
    assert no_resume == [answer.pk]

    answer = resume(answer)
    assert answer.status == Message.Status.DONE
    assert answer.text == "Let me ask first.\n\nBerlin by train it is."
    (result,) = tool_messages(llm)
    assert json.loads(result["content"]) == {
        "answers": [
            {"question": "Which city is the trip to?", "answer": "Berlin"},
            {"question": "Train or car?", "answer": "Train"},
        ]
    }
    assert answer.activity[-1]["name"] == "ask_user" and answer.activity[-1]["state"] == "ok"
    # After the reply, the page shows the card answered, not as a form.
    page = client.get(f"/chat/{chat.pk}/").content.decode()
    assert 'data-testid="ask-answered"' in page and 'name="q1"' not in page


def test_two_calls_in_one_round_make_one_card_and_each_call_gets_its_own_answers(
    owner, local_model, llm, no_resume
):
    _, answer = asked(
        owner,
        llm,
        ("ask_user", {"questions": [{"question": "How many people?"}]}),
        ("ask_user", {"question": "Which day?", "choices": ["Saturday", "Sunday"]}),
    )
    (card,) = PendingAction.objects.filter(message=answer, kind="ask_user")
    assert [q["text"] for q in card.payload["questions"]] == ["How many people?", "Which day?"]
    ask.ask_resolve(user=owner, action=card, posted={"q1": "four", "q2": "Sunday"})
    resume(answer)
    first, second = (json.loads(m["content"])["answers"] for m in tool_messages(llm))
    assert first == [{"question": "How many people?", "answer": "four"}]
    assert second == [{"question": "Which day?", "answer": "Sunday"}]


def test_a_skipped_question_reaches_the_model_as_unanswered(owner, local_model, llm):
    _, answer = asked(owner, llm, ("ask_user", TWO_QUESTIONS))
    card = PendingAction.objects.get(message=answer, kind="ask_user")
    ask.ask_resolve(user=owner, action=card, posted={"q1": "Berlin"})
    resume(answer)
    pairs = json.loads(tool_messages(llm)[0]["content"])["answers"]
    assert [p["answer"] for p in pairs] == ["Berlin", ask.NO_ANSWER]


def test_stop_closes_the_card_unanswered_and_ends_the_reply(owner, local_model, llm):
    chat, answer = asked(owner, llm, ("ask_user", TWO_QUESTIONS))
    client = signed_in(owner)
    assert client.post(f"/chat/{chat.pk}/stop/{answer.pk}/").status_code == 204
    answer.refresh_from_db()
    card = PendingAction.objects.get(message=answer, kind="ask_user")
    assert answer.status == Message.Status.STOPPED
    assert "Stopped: the questions were not answered." in answer.notes
    assert card.status == PendingAction.Status.DISMISSED
    assert len(llm.chat_requests) == 1
    page = client.get(f"/chat/{chat.pk}/").content.decode()
    assert "stopped, not answered" in page and 'name="q1"' not in page
    assert 'data-testid="send"' in page  # the composer can send again
    # An answer after Stop is refused: the card is no longer waiting.
    assert answer_card(client, card, {"q1": "Berlin"}).status_code == 409
    # The next turn goes on without the unanswered call in the history.
    llm.queue(Reply(text="Fine."))
    run_turn(owner, "Never mind", chat=chat)
    sent = llm.chat_requests[-1].json["messages"]
    assert not any(m.get("tool_calls") for m in sent) and not any(m["role"] == "tool" for m in sent)


def test_answers_the_card_does_not_allow_are_refused_and_nothing_resumes(
    owner, member, local_model, llm, no_resume
):
    _, answer = asked(owner, llm, ("ask_user", TWO_QUESTIONS))
    card = PendingAction.objects.get(message=answer, kind="ask_user")
    client = signed_in(owner)

    bad_choice = answer_card(client, card, {"q1": "Berlin", "q2": "Plane"})
    assert bad_choice.status_code == 400
    assert "Question 2: choose one of the options shown." in bad_choice.content.decode()
    assert "Berlin</textarea>" in bad_choice.content.decode()  # what was typed stays

    too_long = answer_card(client, card, {"q1": "x" * (ask.ANSWER_CHARS + 1)})
    assert too_long.status_code == 400 and "at most 2000 characters" in too_long.content.decode()

    assert signed_in(member).post(f"/chat/ask/{card.pk}/", {"q1": "Paris"}).status_code == 404
    strict = signed_in(owner, enforce_csrf_checks=True)
    assert answer_card(strict, card, {"q1": "Paris"}).status_code == 403
    card.refresh_from_db()
    assert card.status == PendingAction.Status.PENDING and no_resume == []

    assert answer_card(client, card, {"q1": "Berlin", "q2": "Car"}).status_code == 200
    second = answer_card(client, card, {"q1": "Paris", "q2": "Train"})
    assert second.status_code == 409
    assert "already answered" in second.content.decode()
    card.refresh_from_db()
    assert card.payload["answers"] == {"q1": "Berlin", "q2": "Car"} and no_resume == [answer.pk]


def test_without_javascript_the_form_answers_and_goes_back_to_the_chat(
    owner, local_model, llm, no_resume
):
    chat, answer = asked(owner, llm, ("ask_user", TWO_QUESTIONS))
    card = PendingAction.objects.get(message=answer, kind="ask_user")
    client = signed_in(owner)
    refused = client.post(f"/chat/ask/{card.pk}/", {"q2": "Plane"}, follow=True)
    assert refused.redirect_chain == [(f"/chat/{chat.pk}/", 302)]
    assert "Question 2: choose one of the options shown." in refused.content.decode()
    assert no_resume == []
    done = client.post(f"/chat/ask/{card.pk}/", {"q1": "Berlin", "q2": "Car"})
    assert done.status_code == 302 and done["Location"] == f"/chat/{chat.pk}/"
    assert no_resume == [answer.pk]


def test_an_approval_card_is_not_answerable_as_questions(owner, local_model, llm):
    _, answer = asked(owner, llm, ("ask_user", TWO_QUESTIONS))
    other = PendingAction.objects.create(message=answer, kind="approve_tools", payload={})
    assert signed_in(owner).post(f"/chat/ask/{other.pk}/", {"q1": "x"}).status_code == 404


def test_a_malformed_call_is_refused_with_what_to_fix_and_no_card(owner, local_model, llm):
    llm.queue(
        Reply(tool_calls=[("ask_user", json.dumps({"questions": [{"question": " "}]}))]),
        Reply(text="I will guess then."),
    )
    _, answer = run_turn(owner, "Plan my trip")
    assert answer.status == Message.Status.DONE
    assert not PendingAction.objects.filter(kind="ask_user").exists()
    (result,) = tool_messages(llm)
    assert "Question 1 has no text." in result["content"]


def test_the_question_limits_hold(owner, local_model, llm):
    too_many = {"questions": [f"Question {n}?" for n in range(ask.MAX_QUESTIONS + 1)]}
    one_choice = {"questions": [{"question": "Sure?", "choices": ["Yes"]}]}
    llm.queue(
        Reply(
            tool_calls=[("ask_user", json.dumps(too_many)), ("ask_user", json.dumps(one_choice))]
        ),
        Reply(text="Fine."),
    )
    run_turn(owner, "Plan my trip")
    assert not PendingAction.objects.filter(kind="ask_user").exists()
    first, second = (m["content"] for m in tool_messages(llm))
    assert f"at most {ask.MAX_QUESTIONS} questions" in first
    assert "offer two choices or more" in second


def test_the_form_caps_free_text_where_the_server_does(owner, local_model, llm):
    chat, _ = asked(owner, llm, ("ask_user", TWO_QUESTIONS))
    page = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    assert f'maxlength="{ask.ANSWER_CHARS}"' in page


# --- in an agent chat (the real agent policy, a real OpenSSH server)


def test_in_an_agent_chat_questions_come_first_and_a_call_needing_approval_waits_for_them(
    agent_owner,  # noqa: F811
    sshd,  # noqa: F811
    local_model,
    llm,
):
    project = sshd.workdir("proj")
    sshd.put(project / "README.md", "Build with make.\n")
    chat = agent_chat(agent_owner, sshd, project)
    llm.queue(
        Reply(
            tool_calls=[
                ("ask_user", json.dumps({"question": "Debug or release build?"})),
                ("file_read", json.dumps({"path": "README.md"})),
                ("shell_run", json.dumps({"command": "echo ran >> ran.log"})),
            ]
        ),
        Reply(text="A release build, then."),
    )
    _, answer = run_turn(agent_owner, "build it", chat=chat)
    # One card for the round: the questions; no approval card beside it.
    assert [a.kind for a in answer.actions.all()] == ["ask_user"]
    card = answer.actions.get()
    ask.ask_resolve(user=agent_owner, action=card, posted={"q1": "release"})
    answer = resume(answer)
    asked, read, ran = (m["content"] for m in tool_messages(llm))
    assert json.loads(asked)["answers"][0]["answer"] == "release"
    assert "Build with make." in read  # a reading call runs after the answers
    assert ask.AFTER_QUESTIONS in ran  # the command was not run: ask again for it
    assert not (project / "ran.log").exists()
    assert answer.status == Message.Status.DONE
