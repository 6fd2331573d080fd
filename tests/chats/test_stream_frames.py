"""Frames while a reply streams: the text appended since the last frame, the
closed blocks rendered once, the whole block when a block closes or the text
is rewritten, and the final frame whole (apps/chats/streaming.py). What
`flush` hands to the channel layer's path (apps.chats.relay.publish) is
collected here; the path itself is tested in test_relay.py."""

from __future__ import annotations

import re

import pytest

from apps.chats import relay
from apps.chats.live import flush
from apps.chats.models import Message
from apps.chats.relay import LISTENER_FRAMES, RESYNC, FrameQueue
from apps.chats.reply import Generation

CHAT = 424242


@pytest.fixture
def frames(monkeypatch):
    sent: list[str] = []

    def published(chat_id: int, html: str) -> None:
        assert chat_id == CHAT
        sent.append(html)

    monkeypatch.setattr(relay, "publish", published)
    return lambda: sent


def writing(generation: Generation, text: str) -> None:
    generation.text = text
    generation.touch("answer")
    flush(generation)


@pytest.fixture
def reply(frames):
    generation = Generation(pk=7, chat_id=CHAT, status=Message.Status.STREAMING)
    flush(generation, everything=True)
    return generation


def test_frames_carry_only_the_text_appended_to_the_open_block(reply, frames):
    writing(reply, "Hello wor")
    writing(reply, "Hello world, and **more")
    writing(reply, "Hello world, and **more**")
    first, second, third = frames()[1:]
    assert 'id="msg-7-answer"' in first and 'data-end="9">Hello wor</div>' in first
    assert second == '<span data-append="msg-7-open" data-at="9">ld, and **more</span>'
    assert third == '<span data-append="msg-7-open" data-at="23">**</span>'


def test_a_closed_paragraph_is_rendered_and_the_open_one_stays_text(reply, frames):
    writing(reply, "First *point*.")
    writing(reply, "First *point*.\n\nSecond <b>")
    whole = frames()[-1]
    assert 'id="msg-7-answer"' in whole
    assert "<p>First <em>point</em>.</p>" in whole
    assert '<div id="msg-7-open" class="msg__open" data-end="26">Second &lt;b&gt;</div>' in whole
    writing(reply, "First *point*.\n\nSecond <b>bold")
    assert frames()[-1] == '<span data-append="msg-7-open" data-at="26">bold</span>'


def test_a_blank_line_inside_a_code_fence_closes_nothing(reply, frames):
    writing(reply, "```python\nx = 1")
    writing(reply, "```python\nx = 1\n\ny = 2")
    writing(reply, "```python\nx = 1\n\ny = 2\n")
    assert all(frame.startswith("<span data-append") for frame in frames()[2:])
    writing(reply, "```python\nx = 1\n\ny = 2\n```\n\nAfter")
    whole = frames()[-1]
    assert "<pre><code" in whole and 'data-end="33">After</div>' in whole


def test_rewritten_text_is_sent_whole(reply, frames):
    writing(reply, "A draft answer")
    writing(reply, "A better one")
    assert 'id="msg-7-answer"' in frames()[-1] and ">A better one</div>" in frames()[-1]


def test_offsets_count_what_a_browser_counts(reply, frames):
    writing(reply, "smile 😀\r\n")
    writing(reply, "smile 😀\r\nnext")
    # "smile 😀\n" is 9 UTF-16 code units: the emoji counts two, the carriage return none.
    assert frames()[-1] == '<span data-append="msg-7-open" data-at="9">next</span>'


def test_the_final_frame_is_the_whole_answer_rendered(reply, frames):
    writing(reply, "Done with **bold**")
    reply.status = Message.Status.DONE
    flush(reply, everything=True)
    final = frames()[-1]
    answer = re.search(r'<div id="msg-7-answer".*?</div>', final, re.S).group(0)
    assert "<strong>bold</strong>" in answer and "msg__open" not in answer


def test_the_reasoning_streams_as_appended_text_too(reply, frames):
    reply.reasoning = "Let me think"
    reply.touch("reasoning")
    flush(reply)
    reply.reasoning += " harder"
    reply.touch("reasoning")
    flush(reply)
    assert frames()[-1] == ('<span data-append="msg-7-reasoning-open" data-at="12"> harder</span>')


def test_a_socket_that_stops_reading_holds_a_bounded_queue_and_is_owed_one_resync():
    queue = FrameQueue()
    for n in range(10 * LISTENER_FRAMES):  # a long reply nobody reads
        queue.put(f"frame {n}")
    assert queue.queue.qsize() <= LISTENER_FRAMES
    frames = [queue.queue.get_nowait() for _ in range(queue.queue.qsize())]
    # What it missed is not replayed piece by piece: it is told to resync,
    # and what came after the resync is only the newest frames.
    assert RESYNC in frames
    assert frames[-1] == f"frame {10 * LISTENER_FRAMES - 1}"
    assert len(frames) - frames.index(RESYNC) - 1 < LISTENER_FRAMES


def test_the_last_words_reach_the_page_before_the_final_save(owner, local_model, llm, monkeypatch):
    """The final frame waits for the reply's last save; the model's last words
    do not: they go out as appended text the moment the stream ends, and no
    frame comes between them and the final one."""
    from apps.chats import runner
    from tests.fakes.llm import Reply as Scripted
    from tests.support.fixtures import run_turn

    sent: list[str] = []
    monkeypatch.setattr(relay, "publish", lambda chat_id, html: sent.append(html))
    saved_after: list[int] = []  # how many frames had gone out when the final save ran
    real_save = runner.save

    def save(snapshot):
        if snapshot.final:
            saved_after.append(len(sent))
        real_save(snapshot)

    monkeypatch.setattr(runner, "save", save)
    llm.queue(Scripted(text="The boiler was serviced in March by Brightwarm."))
    _, answer = run_turn(owner, "When was the boiler serviced?")

    assert answer.text.endswith("by Brightwarm.")
    before_save = sent[: saved_after[0]]
    shown = "".join(before_save)
    assert "Brightwarm." in shown  # appended text or the open block, before the save
    assert 'data-status="done"' not in shown
    # After the save: the final frame, whole, and nothing else of this reply.
    after = sent[saved_after[0] :]
    assert len(after) == 1 and 'data-status="done"' in after[0]
