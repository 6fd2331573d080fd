"""One assistant reply, in the one shape everything shares: the runner builds
it while the model streams, the frames and the page render it, and the Message
row stores it (`stored()`). A saved Message becomes one with `Reply.of()`."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import ClassVar

from apps.chats.citations import render_answer
from apps.chats.export import reply_markdown
from apps.chats.models import Message
from apps.chats.streaming import plain_html
from apps.chats.usage import usage_line


@dataclass
class Reply:
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

    @property
    def in_flight(self) -> bool:
        return self.status in (
            Message.Status.PENDING,
            Message.Status.STREAMING,
            Message.Status.WAITING,
        )

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

    def stored(self, *, final: bool) -> dict:
        """The Message fields to save, deep-copied (a save running in a thread
        must never read lists the stream is still appending to). Until the final
        save the row says "streaming"."""
        names = self.STORED + (self.FINAL if final else ())
        fields = {name: copy.deepcopy(getattr(self, name)) for name in names}
        if not final:
            fields["status"] = Message.Status.STREAMING
        return fields
