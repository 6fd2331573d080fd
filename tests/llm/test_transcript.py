"""The provider-neutral transcript and its conversion to each API's messages."""

from __future__ import annotations

import copy
import json

from apps.llm import transcript as t

CLAUDE = "claude-test-1"
THINKING = {"type": "thinking", "thinking": "The log is the source.", "signature": "c2ln"}


def conversation() -> list[t.Turn]:
    return [
        t.user_turn("What is the boiler pressure, and when was it serviced?"),
        {
            "role": "assistant",
            "blocks": [
                t.reasoning("I should search the notes twice."),
                t.opaque("anthropic", CLAUDE, THINKING),
                t.text("Let me look."),
                t.tool_call("call_1", "search_kb", '{"query": "boiler pressure"}'),
                t.tool_call("call_2", "search_kb", '{"query": "boiler service"}'),
            ],
        },
        {
            "role": "tool",
            "blocks": [
                t.tool_result("call_1", "search_kb", "1.5 bar (boiler.md, 2024-05-02)"),
                t.tool_result("call_2", "search_kb", "index unavailable", is_error=True),
            ],
        },
        {"role": "assistant", "blocks": [t.text("It is at 1.5 bar.")]},
        t.user_turn("Thanks!"),
    ]


def test_a_conversation_converts_for_openai():
    assert t.to_openai(conversation(), system="You are Jarvis.", model="qwen3:8b") == [
        {"role": "system", "content": "You are Jarvis."},
        {"role": "user", "content": "What is the boiler pressure, and when was it serviced?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_kb", "arguments": '{"query": "boiler pressure"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "search_kb", "arguments": '{"query": "boiler service"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "1.5 bar (boiler.md, 2024-05-02)"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: index unavailable"},
        {"role": "assistant", "content": "It is at 1.5 bar."},
        {"role": "user", "content": "Thanks!"},
    ]


def test_a_conversation_converts_for_anthropic_with_its_thinking_on_the_same_model():
    assert t.to_anthropic(conversation(), model=CLAUDE) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is the boiler pressure, and when was it serviced?"}
            ],
        },
        {
            "role": "assistant",
            "content": [
                THINKING,
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "search_kb",
                    "input": {"query": "boiler pressure"},
                },
                {
                    "type": "tool_use",
                    "id": "call_2",
                    "name": "search_kb",
                    "input": {"query": "boiler service"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": "1.5 bar (boiler.md, 2024-05-02)",
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "call_2",
                    "content": "index unavailable",
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It is at 1.5 bar."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks!"}]},
    ]


def test_switching_model_drops_the_opaque_blocks():
    other = t.to_anthropic(conversation(), model="claude-other")
    assert THINKING not in other[1]["content"]
    assert other[1]["content"][0] == {"type": "text", "text": "Let me look."}
    as_openai = json.dumps(t.to_openai(conversation(), system="", model=CLAUDE))
    assert "signature" not in as_openai and "The log is the source" not in as_openai


def test_reasoning_is_never_sent_back():
    for wire in (
        t.to_openai(conversation(), system="s", model=CLAUDE),
        t.to_anthropic(conversation(), model=CLAUDE),
    ):
        assert "search the notes twice" not in json.dumps(wire)


def test_a_stored_transcript_round_trips_through_json():
    turns = conversation()
    stored = json.loads(json.dumps(turns))
    assert stored == turns
    assert t.to_openai(stored, system="s", model="m") == t.to_openai(turns, system="s", model="m")
    assert t.to_anthropic(stored, model=CLAUDE) == t.to_anthropic(turns, model=CLAUDE)


def test_conversion_leaves_the_stored_transcript_alone():
    turns = conversation()
    before = copy.deepcopy(turns)
    t.to_openai(turns, system="s", model="m")
    t.to_anthropic(turns, model=CLAUDE)
    assert turns == before


def test_helpers_read_blocks():
    blocks = conversation()[1]["blocks"]
    assert t.text_of(blocks) == "Let me look."
    assert t.reasoning_of(blocks) == "I should search the notes twice."
    assert [c["id"] for c in t.tool_calls_of(blocks)] == ["call_1", "call_2"]
    assert t.text_of([t.text("a"), t.reasoning("x"), t.text("b")]) == "ab"


def test_a_call_without_a_result_gets_an_error_result_and_orphan_results_are_dropped():
    turns = [
        t.user_turn("Go"),
        {"role": "assistant", "blocks": [t.tool_call("c1", "slow_tool", "{}")]},
        # The turn was stopped while the tool ran: no tool turn was stored.
        t.user_turn("Never mind."),
        {"role": "tool", "blocks": [t.tool_result("stray", "x", "orphan")]},
    ]
    wire = t.to_openai(turns, system="", model="m")
    assert wire[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": f"Error: {t.INTERRUPTED_RESULT}",
    }
    assert "orphan" not in json.dumps(wire)
    anthropic = t.to_anthropic(turns, model="m")
    # The synthetic result and the next user text share one user message.
    assert anthropic[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "c1",
                "content": t.INTERRUPTED_RESULT,
                "is_error": True,
            },
            {"type": "text", "text": "Never mind."},
        ],
    }
    assert len(anthropic) == 3


def test_results_come_back_in_call_order_and_a_repeated_call_id_counts_once():
    turns = [
        t.user_turn("Go"),
        {
            "role": "assistant",
            "blocks": [
                t.tool_call("a", "f", "{}"),
                t.tool_call("b", "f", "{}"),
                t.tool_call("a", "f", "{}"),
            ],
        },
        {"role": "tool", "blocks": [t.tool_result("b", "f", "B"), t.tool_result("a", "f", "A")]},
    ]
    wire = t.to_openai(turns, system="", model="m")
    assert [c["id"] for c in wire[1]["tool_calls"]] == ["a", "b"]
    assert [(m["tool_call_id"], m["content"]) for m in wire[2:]] == [("a", "A"), ("b", "B")]


def test_malformed_and_empty_arguments():
    turns = [
        t.user_turn("Go"),
        {
            "role": "assistant",
            "blocks": [
                t.tool_call("a", "f", '{"query": "unterminated'),
                t.tool_call("b", "g", ""),
                t.tool_call("c", "h", "[1, 2]"),
            ],
        },
        {
            "role": "tool",
            "blocks": [
                t.tool_result("a", "f", "bad arguments", is_error=True),
                t.tool_result("b", "g", "done"),
                t.tool_result("c", "h", "bad arguments", is_error=True),
            ],
        },
    ]
    uses = [b for b in t.to_anthropic(turns, model="m")[1]["content"] if b["type"] == "tool_use"]
    assert [u["input"] for u in uses] == [
        {"_invalid_arguments": '{"query": "unterminated'},
        {},
        {"_invalid_arguments": "[1, 2]"},
    ]
    calls = t.to_openai(turns, system="", model="m")[1]["tool_calls"]
    arguments = [json.loads(c["function"]["arguments"]) for c in calls]
    assert arguments == [u["input"] for u in uses]
    assert turns[1]["blocks"][0]["arguments"] == '{"query": "unterminated'  # stored as produced


def test_a_valid_arguments_string_is_sent_to_openai_exactly_as_written():
    raw = '{ "query" :  "x" }'
    turns = [t.user_turn("Go"), {"role": "assistant", "blocks": [t.tool_call("a", "f", raw)]}]
    assert (
        t.to_openai(turns, system="", model="m")[1]["tool_calls"][0]["function"]["arguments"] == raw
    )


def test_anthropic_merges_same_role_messages_and_skips_empty_ones():
    turns = [
        t.user_turn("One"),
        {"role": "assistant", "blocks": [t.reasoning("only thought, no answer")]},
        t.user_turn("Two"),
        {"role": "assistant", "blocks": [t.text("A")]},
        {"role": "assistant", "blocks": [t.text("   "), t.text("B")]},
    ]
    assert t.to_anthropic(turns, model="m") == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "One"}, {"type": "text", "text": "Two"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
        },
    ]
    openai = t.to_openai(turns, system="", model="m")
    assert [m["role"] for m in openai] == ["user", "user", "assistant", "assistant"]


def test_anthropic_gets_tool_ids_it_accepts():
    turns = [
        t.user_turn("Go"),
        {"role": "assistant", "blocks": [t.tool_call("functions.search:0", "search", "{}")]},
        {"role": "tool", "blocks": [t.tool_result("functions.search:0", "search", "ok")]},
    ]
    wire = t.to_anthropic(turns, model="m")
    assert (
        wire[1]["content"][0]["id"] == wire[2]["content"][0]["tool_use_id"] == "functions_search_0"
    )
    # OpenAI-compatible servers get the id as it was.
    assert (
        t.to_openai(turns, system="", model="m")[1]["tool_calls"][0]["id"] == "functions.search:0"
    )


def test_openai_opaque_data_is_merged_on_the_same_model_only():
    details = {"reasoning_details": [{"type": "reasoning.encrypted", "data": "xyz"}]}
    turns = [
        t.user_turn("Go"),
        {"role": "assistant", "blocks": [t.opaque("openai", "gemini-x", details), t.text("Hi")]},
    ]
    assert t.to_openai(turns, system="", model="gemini-x")[1] == {
        "role": "assistant",
        "content": "Hi",
        **details,
    }
    assert t.to_openai(turns, system="", model="other")[1] == {"role": "assistant", "content": "Hi"}
    assert "reasoning_details" not in json.dumps(t.to_anthropic(turns, model="gemini-x"))


def test_an_assistant_message_with_only_calls_has_null_content():
    turns = [t.user_turn("Go"), {"role": "assistant", "blocks": [t.tool_call("a", "f", "{}")]}]
    assert t.to_openai(turns, system="", model="m")[1]["content"] is None


def test_anthropic_thinking_goes_first_whatever_the_stored_order():
    turns = [
        t.user_turn("Go"),
        {
            "role": "assistant",
            "blocks": [
                t.text("Looking."),
                t.opaque("anthropic", CLAUDE, THINKING),
                t.tool_call("a", "f", "{}"),
            ],
        },
        {"role": "tool", "blocks": [t.tool_result("a", "f", "done")]},
    ]
    content = t.to_anthropic(turns, model=CLAUDE)[1]["content"]
    assert [b["type"] for b in content] == ["thinking", "text", "tool_use"]
