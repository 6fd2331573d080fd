"""A reply's speed: time to first token and tokens per second, measured where
the stream is read (apps.chats.speed.timed) against the fake OpenAI server
over real HTTP, and shown quietly in the reply's footer only where the
endpoint reported its output tokens."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import async_to_sync

from apps.chats.models import Chat, Message
from apps.chats.speed import speed_line, timed, tokens_per_second
from apps.chats.usage import chat_usage_line, usage_line
from apps.llm import ProviderConfig, TextDelta, stream_chat
from tests.fakes.llm import FakeOpenAI, Reply
from tests.support.fixtures import run_turn, signed_in

QUESTION = [{"role": "user", "blocks": [{"type": "text", "text": "How is the boiler?"}]}]


def read(fake: FakeOpenAI, usage: dict) -> str:
    config = ProviderConfig(kind="openai", base_url=fake.base_url, api_key=None, model="m")

    async def go() -> str:
        text = ""
        async for event in timed(stream_chat(config, system="", turns=QUESTION, tools=[]), usage):
            if isinstance(event, TextDelta):
                text += event.text
        return text

    return async_to_sync(go)()


def test_the_first_token_wait_and_the_writing_time_are_measured():
    with FakeOpenAI() as fake:
        # 0.6 s before the first piece, then 10 pieces a second for 2 seconds.
        fake.queue(
            Reply(text="x" * 80, first_token_delay=0.6, tokens_per_second=10, usage=(50, 21))
        )
        usage: dict = {}
        assert read(fake, usage) == "x" * 80
    # Lower bounds only: the fake cannot be faster than its schedule, but a
    # loaded machine may be slower (no wall-clock ceilings in tests).
    assert usage["first_token_s"] >= 0.55
    assert usage["writing_s"] >= 1.7
    usage["output_tokens"] = 21  # what the runner adds from the Usage event
    # The tokens after the first, over the writing time: never above the fake's 10 a second.
    assert tokens_per_second(usage) == pytest.approx(20 / usage["writing_s"])
    assert tokens_per_second(usage) <= 12


def test_a_reply_of_several_calls_adds_up_their_writing_but_keeps_the_first_wait():
    usage: dict = {}
    with FakeOpenAI() as fake:
        fake.queue(Reply(text="a" * 40, first_token_delay=0.5, tokens_per_second=20))
        fake.queue(Reply(text="b" * 40, first_token_delay=0.9, tokens_per_second=20))
        read(fake, usage)
        first = usage["first_token_s"]
        one = usage["writing_s"]
        read(fake, usage)
    assert usage["first_token_s"] == first  # the reply's first call's wait
    assert one >= 0.35 and usage["writing_s"] >= one + 0.35


def test_the_footer_says_tokens_per_second_and_time_to_first_token():
    usage = {"input_tokens": 1200, "output_tokens": 43, "writing_s": 1.0, "first_token_s": 0.84}
    assert speed_line(usage) == "42 tok/s · 0.8 s to first token"
    assert usage_line(usage) == "1,200 tokens in · 43 out · 42 tok/s · 0.8 s to first token"
    # A slow CPU server keeps a decimal; a long wait loses it.
    assert speed_line({"output_tokens": 4, "writing_s": 1.5, "first_token_s": 12.3}) == (
        "2.0 tok/s · 12 s to first token"
    )


def test_no_speed_without_reported_usage():
    # An endpoint that reports no usage: timings alone are no speed, never a guess.
    assert speed_line({"writing_s": 2.0, "first_token_s": 0.5}) == ""
    assert usage_line({"writing_s": 2.0, "first_token_s": 0.5}) == ""
    # Nor from a reply of one token (no interval to measure) or no writing time.
    assert tokens_per_second({"output_tokens": 1, "writing_s": 0.5}) is None
    assert tokens_per_second({"output_tokens": 30, "writing_s": 0}) is None
    # Pieces that all came at once (a buffering proxy): no rate, and no "first token" either.
    assert speed_line({"output_tokens": 300, "writing_s": 0.01, "first_token_s": 4.0}) == ""
    assert tokens_per_second({"output_tokens": True, "writing_s": 1}) is None


@pytest.mark.django_db
def test_the_reply_footer_shows_the_speed_and_the_chat_total_does_not(owner):
    chat = Chat.objects.create(owner=owner, title="Boiler")
    question = Message.objects.create(chat=chat, role="user", text="How is the boiler?")
    answer = Message.objects.create(
        chat=chat,
        role="assistant",
        parent=question,
        text="Serviced in March.",
        usage={"input_tokens": 900, "output_tokens": 43, "writing_s": 1.0, "first_token_s": 0.8},
    )
    chat.leaf = answer
    chat.save()
    page = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    footer = re.search(r'<span data-testid="usage">([^<]*)</span>', page).group(1)
    assert footer == "900 tokens in · 43 out · 42 tok/s · 0.8 s to first token"
    # Speeds do not add up: the header's total is tokens (and cost) only.
    assert chat_usage_line(chat.pk) == "900 tokens in · 43 out"


@pytest.mark.django_db(transaction=True)
def test_a_reply_through_the_runner_records_its_speed(owner, local_model, llm):
    llm.queue(Reply(text="y" * 60, first_token_delay=0.4, tokens_per_second=20, usage=(30, 16)))
    _, answer = run_turn(owner, "How is the boiler?")
    assert answer.usage["output_tokens"] == 16
    assert answer.usage["first_token_s"] >= 0.35
    assert answer.usage["writing_s"] > 0
    assert "tok/s" in usage_line(answer.usage) and "s to first token" in usage_line(answer.usage)
