"""One vocabulary for a document's state, read by every template that shows it
(the library table, the add page's rows, the document page, the live banner).

A document is in one of four states, and each state says once what a person
may do with it and what it is: only an indexed document is a version (latest
or older); a failed one is neither latest nor waiting; a waiting or reading one
can be cancelled; only a failed one can be tried again (a waiting one is
already queued, and a second queueing would only move it to the back).
Templates read `state_of(document)` (the `doc_state` filter), never the raw
status string.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.library.models import Document

Status = Document.Status


@dataclass(frozen=True)
class DocState:
    status: str
    word: str  # the badge: "waiting", "reading", "failed", "ready to search"
    tone: str  # the badge's modifier: accent, danger, ok
    in_flight: bool  # waiting or being read: the page asks again every second
    is_version: bool  # indexed: it is the latest version or an older one
    can_cancel: bool
    can_retry: bool
    no_text: str  # what the document page says where its text would be

    @property
    def waiting(self) -> bool:
        return self.status == Status.PENDING

    @property
    def reading(self) -> bool:
        return self.status == Status.PARSING

    @property
    def failed(self) -> bool:
        return self.status == Status.FAILED

    @property
    def ready(self) -> bool:
        return self.status == Status.READY


STATES = {
    Status.PENDING: DocState(
        Status.PENDING, "waiting", "accent", True, False, True, False,
        "The text appears here once the document is indexed.",
    ),
    Status.PARSING: DocState(
        Status.PARSING, "reading", "accent", True, False, True, False,
        "The text appears here once the document is indexed.",
    ),
    Status.FAILED: DocState(
        Status.FAILED, "failed", "danger", False, False, False, True,
        "No text: the file could not be read (the reason is above).",
    ),
    Status.READY: DocState(
        Status.READY, "ready to search", "ok", False, True, False, False,
        "This document has no text.",
    ),
}  # fmt: skip


def state_of(document: Document) -> DocState:
    # An unknown value (a row written by a newer version) reads as waiting, never as ready.
    return STATES.get(document.status, STATES[Status.PENDING])
