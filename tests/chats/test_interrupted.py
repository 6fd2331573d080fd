"""Replies a previous web process left half-written are marked interrupted
once, when a process starts serving (apps.core.startup, run by
jarvis_site.asgi), not on every page render; a reply running in this
process is never touched."""

import asyncio

import httpx
import pytest

from apps.chats.live import REGISTRY
from apps.chats.models import Chat, Message
from apps.chats.owner import INTERRUPTED_NOTE, interrupted_sweep
from apps.core.startup import at_start
from tests.support.processes import daphne_server, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def left_streaming(owner, text: str = "Half an ans") -> Message:
    chat = Chat.objects.create(owner=owner, title="left behind")
    question = Message.objects.create(chat=chat, role=Message.Role.USER, text="Tell me")
    return Message.objects.create(
        chat=chat,
        parent=question,
        role=Message.Role.ASSISTANT,
        status=Message.Status.STREAMING,
        text=text,
    )


def test_a_real_daphne_marks_what_the_last_process_left_before_its_first_request(owner):
    reply = left_streaming(owner)
    with daphne_server() as url:
        # The first request of the new process; the sweep runs before it.
        httpx.get(f"{url}/healthz", timeout=30)
        wait_until(
            lambda: Message.objects.get(pk=reply.pk).status == Message.Status.INTERRUPTED,
            timeout=30,
        )
    reply.refresh_from_db()
    assert reply.text == "Half an ans"  # the text is kept
    assert reply.notes[-1] == INTERRUPTED_NOTE


def test_the_sweep_runs_once_and_leaves_a_reply_running_here_alone(owner, monkeypatch):
    old = left_streaming(owner)
    running = left_streaming(owner, "Being written")
    monkeypatch.setattr(REGISTRY, "running", lambda pk: object() if pk == running.pk else None)
    events = []

    async def app(scope, receive, send):
        events.append(scope["type"])

    served = at_start(app, [interrupted_sweep])

    async def two_requests():
        await served({"type": "http"}, None, None)
        later = await asyncio.to_thread(left_streaming, owner, "after the start")
        await served({"type": "http"}, None, None)
        return later

    later = asyncio.run(two_requests())
    assert events == ["http", "http"]
    statuses = dict(Message.objects.filter(role="assistant").values_list("pk", "status"))
    assert statuses[old.pk] == Message.Status.INTERRUPTED
    assert statuses[running.pk] == Message.Status.STREAMING
    # Not a second sweep: a reply started after the process began is its own.
    assert statuses[later.pk] == Message.Status.STREAMING


def test_a_failing_start_up_job_does_not_stop_serving(caplog):
    def broken():
        raise RuntimeError("no database")

    events = []

    async def app(scope, receive, send):
        events.append(scope["type"])

    asyncio.run(at_start(app, [broken])({"type": "websocket"}, None, None))
    assert events == ["websocket"]
    assert "start-up job broken failed" in caplog.text
