"""What a chat does with a server that misbehaves or a model with habits:
an empty stream, a 200 that is not a stream, a server that sends its headers
and then nothing, and a Qwen3-style model that thinks in `<think>` tags and
writes its tool calls as `<tool_call>{…}</tool_call>` text (streams in
tests/fakes/streams/, in llama.cpp's format). Each one either answers or
fails with a reason a person can act on."""

import pytest

from apps.chats.models import Message
from apps.library.ingest.sync import source_sync
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(owner, vault, make_source, embedder):
    vault.write(
        "home/boiler.md",
        "# Boiler\n\nThe boiler service is due on 14 April; Hale & Sons do it.\n",
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)


@pytest.mark.parametrize("stream", ["empty", "only_done"])
def test_an_empty_stream_is_a_failed_reply_that_says_so(owner, local_model, llm, stream):
    llm.queue(Reply(replay=stream))
    _, answer = run_turn(owner, "Hello there, what can you do?")
    answer.refresh_from_db()
    assert answer.status == Message.Status.ERROR
    assert "sent an empty reply" in answer.text
    assert "server's log" in answer.text


def test_a_200_that_is_not_a_stream_fails_with_the_reason(owner, local_model, llm):
    llm.queue(Reply(body="<html><body>Welcome to nginx!</body></html>"))
    _, answer = run_turn(owner, "Hello there, what can you do?")
    answer.refresh_from_db()
    assert answer.status == Message.Status.ERROR
    assert "answered with a web page (text/html)" in answer.text
    assert "base URL" in answer.text


def test_a_server_that_hangs_after_its_headers_times_out_with_the_reason(
    owner, local_model, llm, settings
):
    settings.CHAT_REQUEST_TIMEOUT_SECONDS = 1
    llm.queue(Reply(hang_after_headers=True))
    _, answer = run_turn(owner, "Hello there, what can you do?")
    answer.refresh_from_db()
    assert answer.status == Message.Status.ERROR
    assert "did not answer within 1 s" in answer.text
    assert llm.chat_requests[0].closed_early


def test_a_thinking_model_that_writes_its_tool_call_as_text_is_answered(
    owner, notes, local_model, llm
):
    llm.queue(Reply(replay="qwen3_think_tool_call"), Reply(replay="qwen3_think_answer"))
    _, answer = run_turn(owner, "When is the boiler service due?")
    answer.refresh_from_db()
    assert len(llm.chat_requests) == 2
    tool_results = [m for m in llm.chat_requests[1].json["messages"] if m["role"] == "tool"]
    assert "14 April" in tool_results[-1]["content"]
    assert answer.text == "The boiler service is due on 14 April; Hale & Sons do it [1]."
    assert "<think>" not in answer.text and "<tool_call>" not in answer.text
    assert "should search the notes" in answer.reasoning
    assert answer.citations[0]["path"] == "home/boiler.md"
