"""The model providers against the fake servers: streaming, tool calls, reasoning,
usage, errors (with the key kept out of them), cancellation and model lists."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
import traceback

import httpx
import pytest

from apps.llm import (
    Finished,
    OpaqueBlock,
    ProviderConfig,
    ProviderError,
    ReasoningDelta,
    ReplyBuilder,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    ToolSpec,
    Usage,
    list_models,
    redact,
    stream_chat,
)
from apps.llm import transcript as t
from apps.llm.openai import ThinkSplitter
from tests.fakes.llm import FakeAnthropic, FakeOpenAI, Reply

KEY = "sk-test-0123456789-SECRET-abcdef"
SEARCH = ToolSpec(
    name="search_kb",
    description="Search the notes.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}},
)


class Server:
    """A started fake and configs pointing at it."""

    def __init__(self, kind: str, fake: FakeOpenAI | FakeAnthropic) -> None:
        self.kind = kind
        self.fake = fake

    def config(self, **overrides) -> ProviderConfig:
        values = {
            "kind": self.kind,
            "base_url": self.fake.base_url,
            "api_key": KEY,
            "model": "test-model",
            "timeout": 5.0,
        }
        return ProviderConfig(**{**values, **overrides})


@pytest.fixture(params=["openai", "anthropic"])
def server(request):
    fake = FakeOpenAI(api_key=KEY) if request.param == "openai" else FakeAnthropic(api_key=KEY)
    with fake:
        yield Server(request.param, fake)


@pytest.fixture
def openai_server():
    with FakeOpenAI(api_key=KEY) as fake:
        yield Server("openai", fake)


@pytest.fixture
def anthropic_server():
    with FakeAnthropic(api_key=KEY) as fake:
        yield Server("anthropic", fake)


async def _collect(config, turns=None, tools=(), system="You are Jarvis."):
    events = []
    try:
        stream = stream_chat(
            config, system=system, turns=turns or [t.user_turn("Hi")], tools=list(tools)
        )
        async with contextlib.aclosing(stream):
            async for event in stream:
                events.append(event)
    except ProviderError as exc:
        return events, exc
    return events, None


def collect(config, **kwargs):
    """(events, the ProviderError that ended the stream or None)."""
    return asyncio.run(_collect(config, **kwargs))


def ok(config, **kwargs):
    events, error = collect(config, **kwargs)
    assert error is None, error
    return events


def text(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reasoning(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def of(kind, events):
    return [e for e in events if isinstance(e, kind)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- streaming ---------------------------------------------------------------------------------


def test_text_arrives_in_pieces(server):
    server.fake.queue(Reply(text="The boiler is at 1.5 bar.", chunk_chars=5))
    events = ok(server.config())
    deltas = of(TextDelta, events)
    assert len(deltas) >= 5
    assert text(events) == "The boiler is at 1.5 bar."
    assert events[-1] == Finished("stop")


def test_the_openai_request(openai_server):
    fake = openai_server.fake
    config = openai_server.config(max_tokens=123, extra={"temperature": 0.2})
    ok(config, tools=[SEARCH], turns=[t.user_turn("Hi")], system="Be brief.")
    seen = fake.chat_requests[-1]
    assert seen.route == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.json == {
        "model": "test-model",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 123,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "search_kb",
                    "description": "Search the notes.",
                    "parameters": SEARCH.parameters,
                },
            }
        ],
        "temperature": 0.2,
    }


def test_no_authorization_header_without_a_key_and_no_empty_tools():
    with FakeOpenAI() as fake:
        config = ProviderConfig(kind="openai", base_url=fake.base_url, api_key=None, model="m")
        ok(config)
        seen = fake.chat_requests[-1]
        assert "authorization" not in seen.headers
        assert "tools" not in seen.json


def test_the_anthropic_request(anthropic_server):
    fake = anthropic_server.fake
    # A base URL given with /v1 works too.
    ok(
        anthropic_server.config(base_url=fake.base_url + "/v1/", max_tokens=99),
        tools=[SEARCH],
        system="Be brief.",
    )
    seen = fake.chat_requests[-1]
    assert seen.route == "/v1/messages"
    assert seen.headers["x-api-key"] == KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    assert seen.json == {
        "model": "test-model",
        "max_tokens": 99,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "stream": True,
        "system": "Be brief.",
        "tools": [
            {
                "name": "search_kb",
                "description": "Search the notes.",
                "input_schema": SEARCH.parameters,
            }
        ],
    }


def test_two_parallel_tool_calls_split_across_chunks_are_reassembled(server):
    first = '{"query": "boiler pressure", "limit": 5}'
    second = '{"query": "boiler service"}'
    server.fake.queue(
        Reply(
            text="Let me look.",
            tool_calls=[("search_kb", first), ("search_kb", second)],
            chunk_chars=3,
            interleave_tool_calls=True,
        )
    )
    events = ok(server.config(), tools=[SEARCH])
    calls = of(ToolCall, events)
    assert [(c.name, c.arguments) for c in calls] == [("search_kb", first), ("search_kb", second)]
    assert len({c.id for c in calls}) == 2 and all(c.id for c in calls)
    started = of(ToolCallStarted, events)
    assert [(s.id, s.name) for s in started] == [(c.id, c.name) for c in calls]
    assert events.index(started[0]) < events.index(calls[0])
    assert text(events) == "Let me look."
    assert events[-1] == Finished("tool_calls")


def test_openai_tool_calls_without_ids_get_unique_ones():
    async def scenario():
        body = (
            'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}\n\n'
            'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"f","arguments":""}}]}}]}\n\n'
            'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
            "data: [DONE]\n\n"
        )
        transport = httpx.MockTransport(lambda request: httpx.Response(200, text=body))
        async with httpx.AsyncClient(transport=transport) as client:
            config = ProviderConfig(
                kind="openai", base_url="http://mock/v1", api_key=None, model="m"
            )
            return [
                e async for e in stream_chat(config, system="", turns=[], tools=[], client=client)
            ]

    events = asyncio.run(scenario())
    calls = of(ToolCall, events)
    assert len(calls) == 2 and calls[0].id != calls[1].id
    assert [c.arguments for c in calls] == ["{}", ""]
    # "stop" with calls made is read as a request for tool results.
    assert events[-1] == Finished("tool_calls")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_openai_reasoning_fields(openai_server, field):
    openai_server.fake.queue(
        Reply(
            reasoning="Check the log first.", text="1.5 bar", reasoning_field=field, chunk_chars=4
        )
    )
    events = ok(openai_server.config())
    assert reasoning(events) == "Check the log first."
    assert text(events) == "1.5 bar"
    assert len(of(ReasoningDelta, events)) > 1


@pytest.mark.parametrize("chunk_chars", [1, 2, 3, 5, 7])
def test_think_tags_split_across_chunks(openai_server, chunk_chars):
    openai_server.fake.queue(
        Reply(
            reasoning="Is <b> a tag? No.",
            text="Answer: yes",
            think_tags=True,
            chunk_chars=chunk_chars,
        )
    )
    events = ok(openai_server.config())
    assert reasoning(events) == "Is <b> a tag? No."
    assert text(events) == "Answer: yes"


def test_the_think_splitter_at_every_split_point():
    content = "  <think>a < b</think>\n\nHello <think> stays text"
    for i in range(len(content) + 1):
        for j in range(i, len(content) + 1):
            splitter = ThinkSplitter()
            events = []
            for piece in (content[:i], content[i:j], content[j:]):
                events += splitter.feed(piece)
            events += splitter.finish()
            assert reasoning(events) == "a < b", (i, j)
            assert text(events) == "Hello <think> stays text", (i, j)


@pytest.mark.parametrize(
    ("content", "expected_reasoning", "expected_text"),
    [
        ("<b>bold</b>", "", "<b>bold</b>"),
        ("<", "", "<"),
        ("<think>never closed", "never closed", ""),
        ("   ", "", ""),
        ("No tags at all.", "", "No tags at all."),
    ],
)
def test_the_think_splitter_edge_cases(content, expected_reasoning, expected_text):
    splitter = ThinkSplitter()
    events = splitter.feed(content) + splitter.finish()
    assert (reasoning(events), text(events)) == (expected_reasoning, expected_text)


def test_anthropic_thinking_becomes_reasoning_and_an_opaque_block_with_its_signature(
    anthropic_server,
):
    anthropic_server.fake.queue(
        Reply(
            reasoning="Check the log first.",
            text="1.5 bar",
            chunk_chars=4,
            signature="sig-123",
            redacted_thinking="ENCRYPTED",
        )
    )
    events = ok(anthropic_server.config(model="claude-test"))
    assert reasoning(events) == "Check the log first."
    assert of(OpaqueBlock, events) == [
        OpaqueBlock(
            "anthropic",
            "claude-test",
            {"type": "thinking", "thinking": "Check the log first.", "signature": "sig-123"},
        ),
        OpaqueBlock("anthropic", "claude-test", {"type": "redacted_thinking", "data": "ENCRYPTED"}),
    ]
    assert text(events) == "1.5 bar"


def test_usage_and_cost(openai_server):
    openai_server.fake.queue(Reply(text="ok", usage=(120, 7), cost=0.00042))
    events = ok(openai_server.config())
    assert of(Usage, events) == [Usage(120, 7, 0.00042)]
    assert events[-2:] == [Usage(120, 7, 0.00042), Finished("stop")]


def test_anthropic_usage(anthropic_server):
    anthropic_server.fake.queue(Reply(text="ok", usage=(120, 7)))
    assert of(Usage, ok(anthropic_server.config())) == [Usage(120, 7, None)]


def test_no_usage_reported_means_no_usage_event(server):
    server.fake.queue(Reply(text="ok", usage=None))
    assert of(Usage, ok(server.config())) == []


def test_length_stop(server):
    server.fake.queue(Reply(text="cut", finish_reason="length"))
    assert ok(server.config())[-1] == Finished("length")


def test_keep_alives_and_multi_line_events_are_read(openai_server):
    openai_server.fake.queue(
        Reply(
            text="Hello there",
            first_token_delay=0.2,
            keepalive=0.05,
            multiline_data=True,
            chunk_chars=3,
        )
    )
    assert text(ok(openai_server.config())) == "Hello there"


def test_anthropic_pings_while_waiting_are_fine_within_the_timeout(anthropic_server):
    anthropic_server.fake.queue(Reply(text="Hello there", first_token_delay=0.2, keepalive=0.05))
    assert text(ok(anthropic_server.config())) == "Hello there"


def test_a_tool_loop_across_two_requests(server):
    """The second request carries the call and its result; the fake answers from them."""

    def answer(request):
        if server.kind == "openai":
            result = request["messages"][-1]["content"]
        else:
            result = request["messages"][-1]["content"][0]["content"]
        return Reply(text=f"It is {result}.")

    server.fake.queue(Reply(tool_calls=[("clock", "{}")]), answer)
    turns = [t.user_turn("What time is it?")]

    async def scenario():
        builder = ReplyBuilder()
        async for event in stream_chat(server.config(), system="", turns=turns, tools=[SEARCH]):
            builder.feed(event)
        turns.append(builder.turn())
        call = builder.tool_calls[0]
        turns.append({"role": "tool", "blocks": [t.tool_result(call["id"], call["name"], "12:00")]})
        final = ReplyBuilder()
        async for event in stream_chat(server.config(), system="", turns=turns, tools=[SEARCH]):
            final.feed(event)
        return builder, final

    builder, final = asyncio.run(scenario())
    assert builder.stop_reason == "tool_calls"
    assert final.text == "It is 12:00."
    assert final.stop_reason == "stop"


def test_a_chat_moves_between_providers(anthropic_server):
    """Thinking from Claude is echoed to the same model, and dropped for another one."""
    anthropic_server.fake.queue(Reply(reasoning="Hmm.", text="Hello.", signature="sig-9"))
    config = anthropic_server.config(model="claude-a")
    builder = ReplyBuilder()
    for event in ok(config, turns=[t.user_turn("Hi")]):
        builder.feed(event)
    turns = [t.user_turn("Hi"), builder.turn(), t.user_turn("And?")]
    ok(config, turns=turns)
    echoed = anthropic_server.fake.chat_requests[-1].json["messages"][1]["content"]
    assert echoed == [
        {"type": "thinking", "thinking": "Hmm.", "signature": "sig-9"},
        {"type": "text", "text": "Hello."},
    ]
    ok(anthropic_server.config(model="claude-b"), turns=turns)
    assert anthropic_server.fake.chat_requests[-1].json["messages"][1]["content"] == [
        {"type": "text", "text": "Hello."}
    ]
    with FakeOpenAI() as other:
        config = ProviderConfig(kind="openai", base_url=other.base_url, api_key=None, model="qwen")
        ok(config, turns=turns)
        assert other.chat_requests[-1].json["messages"][1:] == [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "And?"},
        ]


# --- errors ---------------------------------------------------------------------------------------


def test_a_wrong_key_is_rejected_and_redacted_even_when_the_server_quotes_it(server):
    wrong = "sk-wrong-9876543210-ALSO-SECRET"
    events, error = collect(server.config(api_key=wrong))
    assert events == []
    assert error.status == 401 and not error.retryable
    assert "rejected the API key" in error.message
    assert wrong not in error.message and wrong not in str(error) and wrong not in repr(error)
    assert "[redacted]" in error.message  # the server did quote it


def test_a_scripted_401_that_quotes_the_right_key(server):
    server.fake.queue(Reply(status=401))
    _, error = collect(server.config())
    assert error.status == 401
    assert KEY not in error.message


def test_404_names_the_model_and_the_base_url(server):
    server.fake.queue(
        Reply(status=404, error_body={"error": {"message": "model 'nope' not found"}})
    )
    _, error = collect(server.config(model="nope"))
    assert error.status == 404 and not error.retryable
    assert '"nope"' in error.message and "base URL" in error.message
    assert "model 'nope' not found" in error.message


def test_a_wrong_base_url_is_a_404(openai_server):
    config = openai_server.config(base_url=openai_server.fake.root_url + "/wrong")
    _, error = collect(config)
    assert error.status == 404


def test_429_is_retryable(server):
    server.fake.queue(Reply(status=429))
    _, error = collect(server.config())
    assert error.status == 429 and error.retryable
    assert "rate limiting" in error.message


def test_500_is_a_retryable_server_error(server):
    server.fake.queue(Reply(status=500, error_body="<html>Internal Server Error</html>"))
    _, error = collect(server.config())
    assert error.status == 500 and error.retryable
    assert "server error" in error.message
    assert "<html>" not in error.message


def test_connection_refused(server):
    port = free_port()
    base_url = f"http://127.0.0.1:{port}" + ("/v1" if server.kind == "openai" else "")
    _, error = collect(server.config(base_url=base_url))
    assert error.message.startswith(f"could not reach 127.0.0.1:{port}")
    assert error.status is None


def test_a_slow_first_token_times_out(server):
    server.fake.queue(Reply(text="late", first_token_delay=3))
    events, error = collect(server.config(timeout=0.3))
    assert text(events) == ""  # gave up before "late" came
    assert error.message == f"127.0.0.1:{server.fake.port} did not answer within 0.3 s"
    assert error.retryable


def test_keep_alives_alone_do_not_count_as_an_answer(server):
    server.fake.queue(Reply(text="late", first_token_delay=3, keepalive=0.05))
    events, error = collect(server.config(timeout=0.3))
    assert text(events) == ""  # the keep-alives did not hold the wait open until "late"
    assert "did not answer within 0.3 s" in error.message


def test_a_stream_dropped_midway_yields_what_arrived_then_fails(server):
    server.fake.queue(
        Reply(text="Hello, this reply is cut short.", chunk_chars=4, drop_after_chunks=3)
    )
    events, error = collect(server.config())
    assert text(events) == "Hello, this "
    assert "the connection dropped mid-reply" in error.message
    assert error.retryable
    assert not of(Finished, events)


def test_a_stream_that_ends_early_without_an_error_is_cut_off():
    async def scenario(kind, body):
        transport = httpx.MockTransport(lambda request: httpx.Response(200, text=body))
        async with httpx.AsyncClient(transport=transport) as client:
            config = ProviderConfig(kind=kind, base_url="http://mock", api_key=None, model="m")
            return await _stream_with(config, client)

    openai_body = 'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
    anthropic_body = (
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"Hel"}}\n\n'
    )
    for kind, body in (("openai", openai_body), ("anthropic", anthropic_body)):
        events, error = asyncio.run(scenario(kind, body))
        assert text(events) == "Hel"
        assert "dropped mid-reply" in error.message


async def _stream_with(config, client):
    events = []
    try:
        async for event in stream_chat(config, system="", turns=[], tools=[], client=client):
            events.append(event)
    except ProviderError as exc:
        return events, exc
    return events, None


def test_an_answer_that_is_not_a_stream():
    async def scenario():
        answer = {"error": {"message": "streaming is disabled on this proxy"}}
        transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
        async with httpx.AsyncClient(transport=transport) as client:
            config = ProviderConfig(
                kind="openai", base_url="http://mock/v1", api_key=None, model="m"
            )
            return await _stream_with(config, client)

    events, error = asyncio.run(scenario())
    assert events == []
    assert error.message == "mock answered without streaming: streaming is disabled on this proxy"


def test_an_error_inside_the_stream(server):
    server.fake.queue(
        Reply(text="partial", chunk_chars=3, drop_after_chunks=1, stream_error="Overloaded")
    )
    events, error = collect(server.config())
    assert text(events) == "par"
    assert "Overloaded" in error.message and error.retryable


def test_a_key_that_cannot_be_sent_is_refused_before_any_request(server):
    bad = "sk-line\nbreak-SECRET"
    _, error = collect(server.config(api_key=bad))
    assert "API key" in error.message
    assert "sk-line" not in error.message and "break-SECRET" not in error.message
    assert server.fake.requests == []


def test_an_invalid_base_url(server):
    _, error = collect(server.config(base_url="ftp://example.invalid"))
    assert "base URL is not valid" in error.message


def test_an_unknown_kind():
    with pytest.raises(ProviderError, match="unknown provider kind"):
        stream_chat(ProviderConfig("gemini", "http://x", None, "m"), system="", turns=[], tools=[])


def test_the_key_never_reaches_an_exception_or_a_log(server, caplog):
    """Every failure path, with everything logged at DEBUG (httpx, httpcore included)."""
    caplog.set_level(logging.DEBUG)
    fake = server.fake
    fake.queue(
        Reply(status=401),
        Reply(status=500, error_body={"error": {"message": f"upstream said Bearer {KEY}"}}),
        Reply(status=429),
        Reply(text="Hello there", chunk_chars=2, drop_after_chunks=2),
        Reply(text="late", first_token_delay=2),
        Reply(text="x", chunk_chars=1, drop_after_chunks=0, stream_error=f"bad key {KEY}"),
    )
    configs = [server.config() for _ in range(4)] + [server.config(timeout=0.3), server.config()]
    configs += [
        server.config(api_key=KEY + "\n"),  # stripped: still sent, still fine
        server.config(api_key=KEY + "\x00"),
        server.config(api_key=KEY, base_url=f"http://127.0.0.1:{free_port()}"),
        server.config(api_key=KEY + "-wrong"),
    ]
    errors = []
    for config in configs:
        assert KEY not in repr(config)
        _, error = collect(config)
        if error is not None:
            errors.append(error)
    assert len(errors) >= 8
    for error in errors:
        rendered = "".join(traceback.format_exception(error))
        assert KEY not in rendered and KEY not in repr(error) and KEY not in error.message
    models_error = None
    try:
        asyncio.run(list_models(server.config(api_key=KEY + "-wrong")))
    except ProviderError as exc:
        models_error = exc
    assert models_error is not None and KEY not in "".join(traceback.format_exception(models_error))
    assert caplog.records, "nothing was logged: the check would prove nothing"
    assert KEY not in caplog.text


def test_redact():
    secret = "sk-a/b+c=d"
    text_in = f"key {secret}, Bearer {secret}, encoded sk-a%2Fb%2Bc%3Dd, json {secret!r}"
    out = redact(text_in, [secret, None, ""])
    assert secret not in out and "sk-a%2F" not in out
    assert "Bearer" not in out
    assert out.count("[redacted]") == 4
    assert redact("nothing here", []) == "nothing here"


# --- cancellation ------------------------------------------------------------------------------


def test_cancelling_mid_stream_closes_the_connection(server):
    server.fake.queue(Reply(text="word " * 200, chunk_chars=5, delay=0.02))

    async def scenario():
        arrived = asyncio.Event()
        received = []

        async def consume():
            async for event in stream_chat(
                server.config(), system="", turns=[t.user_turn("Hi")], tools=[]
            ):
                received.append(event)
                if len(received) == 3:
                    arrived.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(arrived.wait(), 5)
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        seen = server.fake.chat_requests[-1]
        assert await asyncio.to_thread(seen.done.wait, 2)
        return seen, cancelled_at

    seen, cancelled_at = asyncio.run(scenario())
    assert seen.closed_early
    assert seen.closed_at - cancelled_at < 1.0
    assert seen.pieces_sent < 100


def test_breaking_out_under_aclosing_closes_the_connection(openai_server):
    openai_server.fake.queue(Reply(text="word " * 200, chunk_chars=5, delay=0.02))

    async def scenario():
        stream = stream_chat(openai_server.config(), system="", turns=[t.user_turn("Hi")], tools=[])
        async with contextlib.aclosing(stream):
            async for _ in stream:
                break
        seen = openai_server.fake.chat_requests[-1]
        assert await asyncio.to_thread(seen.done.wait, 2)
        return seen

    assert asyncio.run(scenario()).closed_early


def test_many_concurrent_streams():
    # Every request waits at the server until all 30 are there: streams made
    # one after another would never fill the barrier (and time out broken).
    arrived = threading.Barrier(30, timeout=60)

    def together(_request):
        arrived.wait()
        return Reply(text="a" * 80, tokens_per_second=400)

    with FakeOpenAI() as fake:
        fake.default = together
        config = ProviderConfig(kind="openai", base_url=fake.base_url, api_key=None, model="m")

        async def scenario():
            return await asyncio.gather(*(_collect(config) for _ in range(30)))

        results = asyncio.run(scenario())
        assert all(error is None and text(events) == "a" * 80 for events, error in results)


# --- model lists ------------------------------------------------------------------------------------


def test_list_models_openai():
    with FakeOpenAI(models=["llama3.2:3b", "qwen3:8b"], api_key=KEY) as fake:
        config = ProviderConfig(kind="openai", base_url=fake.base_url, api_key=KEY, model="m")
        assert asyncio.run(list_models(config)) == ["llama3.2:3b", "qwen3:8b"]
        assert fake.requests[-1].route == "/v1/models"
        assert fake.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_list_models_falls_back_to_ollama_tags():
    with FakeOpenAI(models=["llama3.2:3b", "qwen3:8b"]) as fake:
        fake.models_endpoint = False
        config = ProviderConfig(kind="openai", base_url=fake.base_url, api_key=None, model="m")
        assert asyncio.run(list_models(config)) == ["llama3.2:3b", "qwen3:8b"]
        assert [r.route for r in fake.requests] == ["/v1/models", "/api/tags"]


def test_list_models_anthropic_follows_pages():
    names = [f"claude-{i}" for i in range(5)]
    with FakeAnthropic(models=names, api_key=KEY) as fake:
        fake.page_size = 2
        config = ProviderConfig(kind="anthropic", base_url=fake.base_url, api_key=KEY, model="m")
        assert asyncio.run(list_models(config)) == names
        assert len(fake.requests) == 3
        assert fake.requests[0].headers["x-api-key"] == KEY
        assert fake.requests[0].headers["anthropic-version"] == "2023-06-01"


def test_list_models_errors(server):
    with pytest.raises(ProviderError) as raised:
        asyncio.run(list_models(server.config(api_key="sk-nope-123456")))
    assert raised.value.status == 401
    port = free_port()
    with pytest.raises(ProviderError, match="could not reach"):
        asyncio.run(list_models(server.config(base_url=f"http://127.0.0.1:{port}")))


def test_the_fake_forgets_requests_when_asked():
    with FakeOpenAI() as fake:
        config = ProviderConfig(kind="openai", base_url=fake.base_url, api_key=None, model="m")
        ok(config)
        asyncio.run(list_models(config))
        fake.chat_requests.clear()
        assert fake.chat_requests == [] and [r.method for r in fake.requests] == ["GET"]
        fake.queue(Reply(text="queued"))
        fake.reset()
        assert fake.requests == [] and text(ok(config)) == "ok"
