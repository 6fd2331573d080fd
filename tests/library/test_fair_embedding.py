"""Fair embedding: an upload's passages wait behind at most one batch of a
folder sync (apps.library.index.embeddings.EmbeddingTurnstile). The sync and
the upload run on threads of their own, as on the worker's two threads, with
the real model; the order is read from what the embedder was asked, never
from a clock."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from apps.library.index.embeddings import BULK, INTERACTIVE, EmbeddingTurnstile, turnstile
from apps.library.ingest import pipeline
from apps.library.ingest.sync import source_sync
from apps.library.services.adding import upload_add
from apps.library.services.documents import document_ingest

WAIT = 120  # seconds a thread may take to reach its turn on a loaded machine (never reached)


def _note(number: int) -> str:
    sections = "\n\n".join(
        f"## Bed {bed}\n\nRow {number}.{bed}: sow the {bed}th packet of beans along the fence, "
        "water twice a week and mulch with straw once the seedlings stand."
        for bed in range(1, 6)
    )
    return f"# Garden plan {number}\n\n{sections}\n"


class _Recording:
    """The real embedder, noting which thread asked for each call; on the
    sync's first call it starts the upload and holds the turn until the
    upload waits for its own."""

    def __init__(self, inner, start_upload) -> None:
        self.inner, self.start_upload = inner, start_upload
        self.name, self.dimension = inner.name, inner.dimension
        self.calls: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def embed_passages(self, texts):
        who = threading.current_thread().name
        with self._lock:
            self.calls.append((who, len(texts)))
            first_of_sync = who == "sync" and len(self.calls) == 1
        vectors = self.inner.embed_passages(texts)
        if first_of_sync:
            self.start_upload()
            assert turnstile.wait_for_waiting(INTERACTIVE, timeout=WAIT)
        return vectors

    def embed_query(self, text):
        return self.inner.embed_query(text)


def _run(name: str, target, errors: list) -> threading.Thread:
    def body() -> None:
        try:
            target()
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=body, name=name)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_an_upload_started_mid_sync_is_embedded_before_the_syncs_remaining_batches(
    owner, vault, make_source, embedder
):
    for number in range(60):  # 300 passages: five bulk batches
        vault.write(f"plans/plan-{number:02}.md", _note(number))
    source = make_source(owner, vault)
    added = upload_add(
        owner=owner, name="quince.md", data=b"# Quince jam\n\nSimmer the quinces with lemon.\n"
    )
    assert added.document is not None, added.error
    errors: list = []
    threads: list[threading.Thread] = []

    def upload() -> None:
        document_ingest(document=added.document, embedder=recording)

    recording = _Recording(embedder, lambda: threads.append(_run("upload", upload, errors)))
    sync = _run("sync", lambda: source_sync(source=source, embedder=recording), errors)
    sync.join(WAIT)
    for thread in threads:
        thread.join(WAIT)

    assert not errors and not sync.is_alive() and len(threads) == 1
    who = [name for name, _ in recording.calls]
    # The sync's first batch, then the upload, then the rest of the sync.
    assert who[:2] == ["sync", "upload"]
    assert who.count("upload") == 1 and who.count("sync") >= 4
    assert max(size for name, size in recording.calls if name == "sync") <= pipeline.BULK_SLICE
    added.document.refresh_from_db()
    assert added.document.status == "ready"


def test_a_waiting_interactive_caller_goes_before_a_bulk_caller_that_came_first():
    gate = EmbeddingTurnstile()
    order: list[str] = []

    def take(lane: str) -> threading.Thread:
        def body() -> None:
            with gate.turn(lane):
                order.append(lane)

        thread = threading.Thread(target=body)
        thread.start()
        return thread

    with gate.turn(BULK):  # a sync's batch is running
        bulk = take(BULK)
        assert gate.wait_for_waiting(BULK, timeout=WAIT)
        interactive = take(INTERACTIVE)
        assert gate.wait_for_waiting(INTERACTIVE, timeout=WAIT)
    bulk.join(WAIT)
    interactive.join(WAIT)

    assert order == [INTERACTIVE, BULK]


def test_bulk_callers_take_turns_while_nobody_interactive_waits():
    gate = EmbeddingTurnstile()
    order: list[str] = []
    with gate.turn(BULK):
        order.append("first")
    with gate.turn(BULK):
        order.append("second")
    assert order == ["first", "second"] and gate.waiting(BULK) == 0
