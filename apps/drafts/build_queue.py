"""Draft builds wait their turn: at most JARVIS_DRAFTS_BUILDS_PER_PERSON per
person and JARVIS_DRAFTS_BUILDS_AT_ONCE for the whole instance run at a time;
the rest wait in order, and the editor shows how many are ahead.

A LaTeX build may loop until its timeout (three minutes by default) and use a
whole core; without this, four of them from one person would occupy both
cores of a small server for that long. Builds run in a thread of the web
process each (the tools themselves run in bubblewrap, apps.drafts.toolchain),
so the request that asks for one returns at once with a ticket, and the
editor polls the ticket. One web process holds the queue (docs/architecture.md:
one web process); a ticket is forgotten some minutes after it finished.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from apps.core.errors import JarvisError, Refused

logger = logging.getLogger(__name__)

KEEP_FINISHED_SECONDS = 600
WAITING_PER_PERSON = 3  # builds one person may have waiting besides the running ones


@dataclass
class Ticket:
    user_id: int
    draft_id: int
    kind: str
    filename: str
    work: Callable[[], object]
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    state: str = "queued"  # queued | running | done
    queued_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    finished_at: float | None = None
    result: object = None
    error: str = ""


class BuildQueue:
    def __init__(self, *, per_person: int, at_once: int) -> None:
        self.per_person = per_person
        self.at_once = at_once
        self.lock = threading.Lock()
        self.tickets: dict[str, Ticket] = {}
        self.waiting: list[Ticket] = []

    def submit(
        self, *, user_id: int, draft_id: int, kind: str, filename: str, work: Callable[[], object]
    ) -> Ticket:
        """Queue `work` (the build) for a person; it starts as soon as both
        limits allow. Refused when the person already has too many waiting."""
        with self.lock:
            self._forget_old()
            mine = [t for t in self.waiting if t.user_id == user_id]
            if len(mine) >= WAITING_PER_PERSON:
                raise Refused(
                    f"You already have {len(mine)} builds waiting; let them finish first."
                )
            ticket = Ticket(user_id, draft_id, kind, filename, work)
            self.tickets[ticket.id] = ticket
            self.waiting.append(ticket)
            self._start_what_fits()
            return ticket

    def ticket_for(self, ticket_id: str, *, user_id: int, draft_id: int) -> Ticket | None:
        """The person's own ticket for this draft, or None (another's is not there)."""
        with self.lock:
            ticket = self.tickets.get(ticket_id)
        if ticket is None or ticket.user_id != user_id or ticket.draft_id != draft_id:
            return None
        return ticket

    def ahead_of(self, ticket: Ticket) -> int:
        """Builds that start before this one: those waiting in front of it."""
        with self.lock:
            if ticket.state != "queued":
                return 0
            return self.waiting.index(ticket) if ticket in self.waiting else 0

    def running(self) -> list[Ticket]:
        with self.lock:
            return [t for t in self.tickets.values() if t.state == "running"]

    def _start_what_fits(self) -> None:
        # Called with the lock held. In queue order, start every build whose
        # person and the instance both have room; the others keep their place.
        running = [t for t in self.tickets.values() if t.state == "running"]
        for ticket in list(self.waiting):
            if len(running) >= self.at_once:
                return
            if sum(1 for t in running if t.user_id == ticket.user_id) >= self.per_person:
                continue
            self.waiting.remove(ticket)
            ticket.state, ticket.started_at = "running", time.monotonic()
            running.append(ticket)
            threading.Thread(
                target=self._run, args=(ticket,), name=f"draft-build-{ticket.id[:8]}", daemon=True
            ).start()

    def _run(self, ticket: Ticket) -> None:
        try:
            ticket.result = ticket.work()
        except JarvisError as exc:
            ticket.error = str(exc)
        except Exception as exc:  # the person sees a failed build; the log has the rest
            logger.exception("draft build %s failed", ticket.id)
            ticket.error = f"the build failed: {type(exc).__name__}"
        finally:
            with self.lock:
                ticket.state, ticket.finished_at = "done", time.monotonic()
                ticket.work = None  # nothing left to hold on to
                self._start_what_fits()

    def _forget_old(self) -> None:
        cutoff = time.monotonic() - KEEP_FINISHED_SECONDS
        for ticket_id, ticket in list(self.tickets.items()):
            if ticket.state == "done" and (ticket.finished_at or 0) < cutoff:
                del self.tickets[ticket_id]


_queue: BuildQueue | None = None
_queue_lock = threading.Lock()


def build_queue() -> BuildQueue:
    global _queue
    with _queue_lock:
        if _queue is None:
            _queue = BuildQueue(
                per_person=settings.DRAFTS_BUILDS_PER_PERSON,
                at_once=settings.DRAFTS_BUILDS_AT_ONCE,
            )
        return _queue
