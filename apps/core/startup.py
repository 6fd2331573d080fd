"""Work a web process does once when it starts serving, before its first request.

Why not at import or in AppConfig.ready(): every management command and test
collection imports the apps, and the database may not be migrated (or, in
tests, may not be open) then. The first ASGI event (an HTTP request, a
websocket, a lifespan startup) is the moment a process really starts serving
this instance; the jobs run there once, off the event loop, before that event
goes on. A job that fails is logged and not retried: serving goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from asgiref.sync import sync_to_async

logger = logging.getLogger(__name__)


def at_start(app, jobs: list[Callable[[], object]], background: list[Callable] = ()):
    """`app`, running each of `jobs` (sync callables) once before its first
    event, and starting each of `background` (coroutine functions that run
    for the life of the process) as a task of its event loop then."""
    state: dict = {"done": False, "lock": None, "tasks": []}

    async def run_jobs() -> None:
        for job in jobs:
            try:
                await sync_to_async(job, thread_sensitive=True)()
            except Exception:  # serving goes on; the log says what failed
                logger.exception("start-up job %s failed", getattr(job, "__name__", job))

    async def wrapped(scope, receive, send):
        if not state["done"]:
            # Two first events at once: one runs the jobs, the other waits for them.
            state["lock"] = state["lock"] or asyncio.Lock()
            async with state["lock"]:
                if not state["done"]:
                    await run_jobs()
                    loop = asyncio.get_running_loop()
                    # Held here: the loop keeps only weak references to tasks.
                    state["tasks"] = [loop.create_task(work()) for work in background]
                    state["done"] = True
        await app(scope, receive, send)

    return wrapped
