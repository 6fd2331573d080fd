"""The channel layer of a single web process: Channels' in-memory layer,
sweeping for expired messages at most once a second and sending to a
group's channels in place.

Channels' own InMemoryChannelLayer walks every channel and every group
membership on each send to a group and on each receive. Every chat frame
travels the layer (apps.chats.relay), so with a hundred replies streaming
(about 1,500 frames a second, as many receives) and a few hundred sockets
that walk was most of the event loop's time, and frames queued for seconds
(bench/stream_load.py). An expired message (one a socket did not read for
a minute) waits up to a second longer to be dropped. Its group_send also
starts a task for each member and waits for them all, though a send to the
in-memory queue never waits; here each member's send is done in place (a
full channel still drops the message, as Channels' does).
"""

from __future__ import annotations

import contextlib
import time

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer as ChannelsInMemoryLayer
from django.conf import settings

CLEAN_INTERVAL = 1.0  # seconds between sweeps for expired messages and memberships


class InMemoryChannelLayer(ChannelsInMemoryLayer):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._cleaned = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned < CLEAN_INTERVAL:
            return
        self._cleaned = now
        super()._clean_expired()

    async def group_send(self, group: str, message: dict) -> None:
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            with contextlib.suppress(ChannelFull):  # a socket that does not read: owed no more
                await self.send(channel, message)


def layer_spans_processes() -> bool:
    """True when the layer reaches other processes (Redis): the worker's
    notices reach the web's sockets, a reply running in one web process can
    be followed and stopped from another, and a reply in flight in the
    database may be another process's. False for the in-memory layer."""
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    return not backend.endswith("InMemoryChannelLayer")
