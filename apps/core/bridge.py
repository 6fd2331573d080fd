"""The worker's way into the web process's in-memory channel layer.

With the default in-memory layer, a `group_send` reaches only sockets of the
process that makes it. The web process holds every socket; the worker (Huey)
and `manage.py` commands hold none, so what they announce (a file ready, a
draft changed, a session ended) would reach nobody, and pages used to ask the
database for notices every few seconds to make up for it. Instead the web
process listens on a Unix socket in the data directory (`serve`, started with
it: jarvis_site/asgi.py) and another process of the same instance hands its
group messages to it (`forward`): one JSON line per message, passed on to the
web process's layer as if it had sent it there. No port, no polling; the
socket file is the owner's only (0600, in the 0700 data directory).

Only the message types pages listen for from other processes pass (`ALLOWED`,
each with the shape of its group); anything else is dropped and logged. With
a layer that spans processes (Redis) the layer itself carries the messages
and nothing here runs. Several web processes need that layer (docs/deploy.md);
a second one started on the in-memory layer finds the socket taken and says so.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import re
import socket
from pathlib import Path

from channels.layers import get_channel_layer
from django.conf import settings

from apps.core.layers import layer_spans_processes

logger = logging.getLogger(__name__)

# What may cross, by message type: the groups it may go to.
ALLOWED = {
    "notice.created": re.compile(r"notices\.\d+"),
    "draft.event": re.compile(r"draft\.\d+"),
    "session.ended": re.compile(r"(session\.[A-Za-z0-9]+|user\.\d+)"),
}
MAX_LINE = 64 * 1024  # bytes of one message, as JSON
CONNECT_TIMEOUT = 0.5  # seconds: a worker never waits long for a web process that is not there

_state = {"serving": False}


def socket_path() -> Path:
    return Path(settings.DATA_DIR) / "layer.sock"


def serving_here() -> bool:
    """True in the web process that listens (its own layer has the sockets)."""
    return _state["serving"]


def allowed(group: str, message: dict) -> bool:
    pattern = ALLOWED.get(message.get("type")) if isinstance(message, dict) else None
    return isinstance(group, str) and pattern is not None and pattern.fullmatch(group) is not None


def forward(group: str, message: dict) -> bool:
    """Hand one group message to the web process's layer. False when none
    listens (not started, another data directory) or the message may not cross;
    the caller's row or file is written either way, and the page shows it when
    it next loads."""
    if not allowed(group, message):
        logger.warning("not forwarded to the web process: %s to %s", message.get("type"), group)
        return False
    line = json.dumps({"group": group, "message": message}).encode() + b"\n"
    if len(line) > MAX_LINE:
        logger.warning("not forwarded to the web process: %s is %d bytes", group, len(line))
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(str(socket_path()))
            conn.sendall(line)
    except OSError:  # no web process listens: nothing to tell
        return False
    return True


async def serve() -> None:
    """Listen for other processes' group messages for the life of this
    process (a background task of the web process, apps.core.startup);
    nothing with a layer that spans processes."""
    if layer_spans_processes():
        return
    path = socket_path()
    if _in_use(path):
        logger.warning(
            "another web process listens on %s: this one gets no worker messages"
            " (several web processes need a shared channel layer, docs/deploy.md)",
            path,
        )
        return
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # left by a process that ended without cleaning up
    try:
        server = await asyncio.start_unix_server(_received, path=str(path), limit=MAX_LINE)
    except OSError as exc:  # a path too long for a Unix socket, a read-only directory
        logger.warning("cannot listen for worker messages on %s: %s", path, exc)
        return
    os.chmod(path, 0o600)
    # The loop's tasks are not unwound when daphne stops (Ctrl-C, systemd's
    # SIGTERM): the file goes at the interpreter's exit, if it is still ours.
    atexit.register(_remove_if_ours, path, path.stat().st_ino)
    _state["serving"] = True
    try:
        async with server:
            await server.serve_forever()
    finally:
        _state["serving"] = False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _remove_if_ours(path: Path, inode: int) -> None:
    with contextlib.suppress(OSError):
        if path.stat().st_ino == inode:
            path.unlink()


def _in_use(path: Path) -> bool:
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(CONNECT_TIMEOUT)
        try:
            probe.connect(str(path))
        except OSError:
            return False  # a stale file: nobody answers
    return True


async def _received(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while line := await reader.readline():
            try:
                data = json.loads(line)
                group, message = data["group"], data["message"]
            except (ValueError, KeyError, TypeError):
                logger.warning("dropped a malformed worker message (%d bytes)", len(line))
                continue
            if not allowed(group, message):
                logger.warning("dropped a worker message pages do not take (to %.80r)", group)
                continue
            await get_channel_layer().group_send(group, message)
    except (ValueError, ConnectionError):  # a line past MAX_LINE, a peer gone
        logger.warning("dropped a worker connection that sent too much or went away")
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
