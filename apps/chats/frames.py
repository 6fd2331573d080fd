"""What the page shows of a reply, as whole rendered blocks.

A frame is a few top-level elements with ids (the reply's status line,
reasoning, tool activity, answer, sources, notes, confirmation cards, and the
composer's Send/Stop button); the htmx websocket extension swaps each into the
element with the same id. Whole blocks, not deltas: a frame that arrives late
or twice still leaves the page right."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.template.loader import render_to_string

from apps.chats.citations import render_answer

BLOCKS = ("status", "reasoning", "activity", "answer", "sources", "notes", "actions")


@dataclass
class ReplyView:
    """A reply as the templates see it: a saved Message or a running generation."""

    pk: int
    chat_id: int
    status: str
    text: str = ""
    reasoning: str = ""
    activity: list = field(default_factory=list)
    citations: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    model_label: str = ""
    status_line: str = ""
    configure_link: bool = False

    @property
    def in_flight(self) -> bool:
        return self.status in ("pending", "streaming")

    @property
    def answer_html(self):
        return render_answer(self.text, self.citations)

    @classmethod
    def of(cls, message, *, actions=None, configure_link: bool = False) -> ReplyView:
        return cls(
            pk=message.pk,
            chat_id=message.chat_id,
            status=message.status,
            text=message.text,
            reasoning=message.reasoning,
            activity=message.activity,
            citations=message.citations,
            notes=message.notes,
            actions=list(actions if actions is not None else message.actions.all()),
            model_label=message.model_label,
            configure_link=configure_link,
        )


def render_blocks(reply: ReplyView, blocks=BLOCKS, *, composer: bool = False) -> str:
    parts = [
        render_to_string(f"chats/_reply.html#{block}", {"reply": reply, "oob": True})
        for block in blocks
    ]
    if composer:
        parts.append(
            render_to_string(
                "chats/_composer_actions.html",
                {
                    "busy_message": reply.pk if reply.in_flight else None,
                    "chat_id": reply.chat_id,
                    "oob": True,
                },
            )
        )
    return "".join(parts)
