"""One assistant reply, in the one shape everything shares: the runner mutates
it while the model streams, the saver snapshots it, the frames and the page
render it. A saved Message becomes one with `Reply.of()`; a reply this process
writes is a Generation, the same object with the writer's own fields."""

from __future__ import annotations

import asyncio
import copy
import time
from dataclasses import dataclass, field, fields
from typing import ClassVar

from apps.chats.citations import render_answer
from apps.chats.export import reply_markdown
from apps.chats.models import Message
from apps.chats.streaming import TextStream, plain_html
from apps.chats.usage import usage_line


@dataclass(frozen=True)
class Snapshot:
    """A reply's fields copied on the event loop (`Reply.snapshot`), for a
    save in a thread (apps.chats.saving): frozen, and its lists deep-copied,
    so the save never reads what the stream is still appending to."""

    message_id: int
    fields: dict
    final: bool
    index: bool  # the final save of a finished reply: index the exchange for history search


@dataclass
class Reply:
    """The reply's state. The fields in STORED and FINAL are the Message
    row's; the rest is what the page and the frames show beside them."""

    pk: int
    chat_id: int
    status: str = Message.Status.PENDING
    text: str = ""
    reasoning: str = ""
    activity: list = field(default_factory=list)  # tool calls as shown to the person
    citations: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # fixed lines: privacy caveat, uncited…
    actions: list = field(default_factory=list)  # PendingAction cards
    model_label: str = ""
    usage: dict = field(default_factory=dict)
    turns: list = field(default_factory=list)  # the provider-neutral transcript of the reply
    status_line: str = ""  # "Thinking…", "Writing…": shown while it runs, never stored
    configure_link: bool = False  # an admin sees "set up a model" when none answered
    chat_usage: str | None = None  # the chat's total, sent with the final frame
    # The chat header's badge and model picker, rendered (apps.chats.pages
    # chat_header_frame) when a turn changed them; sent with the "header" touch
    # and with every whole frame after.
    header: str = ""
    pager: object = None  # tree.Pager among its alternatives, on the page only

    # What a Message row keeps, and what only the final save writes (the
    # transcript and usage are complete only when the reply is).
    STORED: ClassVar[tuple[str, ...]] = (
        "status",
        "text",
        "reasoning",
        "activity",
        "citations",
        "notes",
        "model_label",
    )
    FINAL: ClassVar[tuple[str, ...]] = ("turns", "usage")

    def add_usage(self, usage) -> None:
        """Add one model call's token counts and cost (an llm Usage, or None
        when the stream ended before the server said) to the reply's totals."""
        if usage is None:
            return
        for key in ("input_tokens", "output_tokens", "cost"):
            value = getattr(usage, key)
            if value is not None:
                self.usage[key] = self.usage.get(key, 0) + value

    @property
    def in_flight(self) -> bool:
        """Not finished: being written, or waiting for the person (Message.IN_FLIGHT)."""
        return self.status in Message.IN_FLIGHT

    @property
    def being_written(self) -> bool:
        """A task is writing it now (Message.WRITING): not waiting for the person."""
        return self.status in Message.WRITING

    @property
    def tool_activity(self) -> list:
        """Calls listed in one line each (library tools and the like)."""
        return [a for a in self.activity if not a.get("details")]

    @property
    def call_activity(self) -> list:
        """Calls shown whole with what they did (a policy described them: an
        agent's commands and file changes)."""
        return [a for a in self.activity if a.get("details")]

    @property
    def answer_html(self):
        return render_answer(self.text, self.citations)

    @property
    def reasoning_html(self):
        return plain_html(self.reasoning)

    @property
    def markdown(self) -> str:
        """What the copy button copies: the answer's Markdown and its sources."""
        return reply_markdown(self.text, self.citations)

    @property
    def usage_line(self) -> str:
        return usage_line(self.usage)

    @classmethod
    def of(cls, message: Message, *, actions=None, configure_link: bool = False) -> Reply:
        return cls(
            pk=message.pk,
            chat_id=message.chat_id,
            **{name: getattr(message, name) for name in cls.STORED + cls.FINAL},
            actions=list(actions if actions is not None else message.actions.all()),
            configure_link=configure_link,
        )

    def snapshot(self, *, final: bool = False) -> Snapshot:
        """The Message fields to save, deep-copied (a save running in a thread
        must never read lists the stream is still appending to). Until the final
        save the row says "streaming"; the final save of a finished reply also
        indexes it for the history search."""
        names = self.STORED + (self.FINAL if final else ())
        values = {name: copy.deepcopy(getattr(self, name)) for name in names}
        if not final:
            values["status"] = Message.Status.STREAMING
        index = final and self.status == Message.Status.DONE
        return Snapshot(self.pk, values, final, index)


@dataclass
class Generation(Reply):
    """A Reply this process is writing: the same state, plus what only the
    task writing it needs. It is not a copy of the Reply: the runner mutates
    it, the ticker renders it, the saver snapshots it.

    A subclass rather than more fields on Reply: a Reply rendered from a saved
    row (the page, a socket of a reply running in another process) has no
    task, no save timing and no text streams, and must render its answer whole
    from the text, never as a stream's open block that only this process's
    frames append to."""

    status_line: str = "Thinking…"
    # The chat's header state (pages.header_state) when the turn loaded: the
    # final frame renders the header again only if a turn or another tab changed it.
    header_state: tuple | None = None
    dirty: set = field(default_factory=set)  # blocks changed since the last frame
    task: asyncio.Task | None = None
    # The first periodic save comes SAVE_INTERVAL after the start, not at the
    # first token (when a burst of sends is still being handled).
    last_save: float = field(default_factory=time.monotonic)
    save_task: asyncio.Task | None = None
    # The answer and the reasoning as frames show them while they grow
    # (apps.chats.streaming): appended text, closed blocks rendered once.
    answer_stream: TextStream | None = None
    reasoning_stream: TextStream | None = None

    def __post_init__(self) -> None:
        self.answer_stream = TextStream(f"msg-{self.pk}-open", markdown=True)
        self.reasoning_stream = TextStream(f"msg-{self.pk}-reasoning-open", markdown=False)

    @classmethod
    def resumed(cls, reply: Reply) -> Generation:
        """`reply` (as saved) written on again: its approval card was answered."""
        generation = cls(**{f.name: getattr(reply, f.name) for f in fields(Reply)})
        generation.status = Message.Status.PENDING
        return generation

    def touch(self, *blocks: str) -> None:
        self.dirty.update(blocks)

    @property
    def answer_html(self):
        if self.being_written:
            return self.answer_stream.whole(self.text)
        return super().answer_html

    @property
    def reasoning_html(self):
        if self.being_written:
            return self.reasoning_stream.whole(self.reasoning)
        return super().reasoning_html

    def streams(self):
        return (
            (self.answer_stream, self.text, "answer"),
            (self.reasoning_stream, self.reasoning, "reasoning"),
        )
