"""Websocket consumers shared by every app.

`AuthenticatedConsumer` is the base for every Jarvis socket: it refuses
anonymous connections before `accept()`, joins a group named for the session
so logging out closes the socket, and re-checks the session periodically so a
session ended elsewhere (a disabled user, a password change) closes it too.
Origin and Host are checked before any consumer runs (asgi.py, apps/core/origins.py).

Every socket here derives from `LayerGuardedConsumer`: with a shared channel
layer (Redis) that cannot be reached, Channels fails to make the socket's
channel before any consumer code runs, and daphne would answer the handshake
with a 500 and a traceback in the log. The socket is refused instead, the
outage logged once (see `LayerGuardedConsumer.__call__`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.template.loader import render_to_string
from django.utils import timezone

from apps.core import notices
from apps.core.realtime import session_group, user_group

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_SESSION_ENDED = 4403
CLOSE_NOT_FOUND = 4404


class LayerOutage:
    """This process's sockets refused because the channel layer could not be
    reached. The first refusal of an outage is logged, the rest only counted,
    and the count is logged when a socket next gets its channel: a page
    retries with backoff, and a line per retry from every tab would bury
    the one that says what is wrong. Only the layer's class and the error's
    kind are logged, never its message or the layer's address (a Redis URL
    may carry a password)."""

    def __init__(self) -> None:
        self.refused = 0

    def refuse(self, layer: object, error: BaseException) -> None:
        if self.refused == 0:
            logger.warning(
                "websocket refused: the channel layer (%s) cannot be reached (%s); new "
                "sockets are refused until it answers, open ones go on",
                type(layer).__name__,
                type(error).__name__,
            )
        self.refused += 1

    def answered(self) -> None:
        if self.refused:
            logger.warning(
                "the channel layer answers again; %d websocket(s) were refused meanwhile",
                self.refused,
            )
            self.refused = 0


LAYER_OUTAGE = LayerOutage()


class LayerGuardedConsumer(AsyncJsonWebsocketConsumer):
    """A consumer whose handshake is refused cleanly when the channel layer
    cannot make its channel (a shared Redis that is down)."""

    async def __call__(self, scope, receive, send) -> None:
        # Channels' AsyncConsumer.__call__ (channels/consumer.py) sets
        # self.channel_layer, awaits channel_layer.new_channel(), sets
        # self.channel_name from it, and only then dispatches messages. So an
        # exception with a layer and no channel_name can only be the layer
        # failing to make the channel: nothing of the socket ran yet. Any
        # other exception is the consumer's own and goes to daphne as before
        # (a 500 during the handshake, 1011 after it).
        try:
            await super().__call__(scope, receive, send)
        except Exception as error:
            layer = getattr(self, "channel_layer", None)
            if layer is None or hasattr(self, "channel_name"):
                raise
            LAYER_OUTAGE.refuse(layer, error)
            # Refused before accept: daphne answers the handshake with 403
            # and the browser sees a failed handshake (close code 1006),
            # which the page's sockets retry with backoff (htmx's ws
            # extension: 1 s, 2 s, 4 s… up to about a minute; the terminal
            # panel: up to 30 s), its live badge saying "Offline" meanwhile.
            # Not accept-then-close with 1013 ("try again later"): that
            # would let the page read a reason, but htmx's extension resets
            # its backoff on every open, so each tab would retry about once
            # a second for as long as Redis is away, and a refused
            # handshake is what every other "cannot serve a socket now"
            # looks like to the page anyway.
            await send({"type": "websocket.close"})

    async def websocket_connect(self, message: dict) -> None:
        LAYER_OUTAGE.answered()  # this socket has its channel: the layer is back
        await super().websocket_connect(message)


class AuthenticatedConsumer(LayerGuardedConsumer):
    # Channel-layer message types whose handlers touch no database. Channels
    # runs close_old_connections() on Django's one shared sync thread before
    # every message a consumer handles; for a chat's frames (about 15 a
    # second per reply, apps.chats.relay) that hop queued them behind every
    # request's database work, for seconds at a hundred replies.
    without_database: frozenset[str] = frozenset()

    async def dispatch(self, message: dict) -> None:
        if message.get("type") in self.without_database:
            await getattr(self, get_handler_name(message))(message)
            return
        await super().dispatch(message)

    async def connect(self) -> None:
        user = self.scope.get("user")
        session = self.scope.get("session")
        if user is None or not user.is_authenticated or session is None or not session.session_key:
            await self.close(code=CLOSE_UNAUTHENTICATED)  # before accept: the handshake fails
            return
        self.user = user
        self.session_key = session.session_key
        if not await self.authorize():
            await self.close(code=CLOSE_NOT_FOUND)  # before accept: another person's object
            return
        self.groups_joined = []
        for group in (session_group(self.session_key), user_group(user.pk)):
            await self.join(group)
        await self.accept()
        self.session_watch = asyncio.create_task(self._watch_session())
        await self.on_authenticated()

    async def authorize(self) -> bool:
        """Subclasses check the object the socket is about belongs to the user."""
        return True

    async def join(self, group: str) -> bool:
        """Join a channel-layer group; False when the layer cannot be reached
        (a shared Redis that went away). The socket still works for what this
        process sends it directly (a chat's frames, a terminal), and its
        periodic session check still closes it when the session ends."""
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except Exception:  # any layer error: logged, the socket goes on
            # The group's kind only: a session's group is named with its
            # session key (apps.core.realtime), which is a login.
            kind = group.split(".", 1)[0]
            logger.warning("could not join a %s group: the channel layer is unreachable", kind)
            return False
        self.groups_joined.append(group)
        return True

    async def on_authenticated(self) -> None:
        """Subclasses send their first frame here."""

    async def disconnect(self, code: int) -> None:
        watch = getattr(self, "session_watch", None)
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
        for group in getattr(self, "groups_joined", []):
            with contextlib.suppress(Exception):  # a layer gone away has forgotten us anyway
                await self.channel_layer.group_discard(group, self.channel_name)

    async def session_ended(self, event: dict) -> None:
        await self.close(code=CLOSE_SESSION_ENDED)

    async def _watch_session(self) -> None:
        interval = settings.WEBSOCKET_SESSION_CHECK_SECONDS
        while True:
            await asyncio.sleep(interval)
            if not await self._session_still_valid():
                await self.close(code=CLOSE_SESSION_ENDED)
                return

    @database_sync_to_async
    def _session_still_valid(self) -> bool:
        alive = Session.objects.filter(
            session_key=self.session_key, expire_date__gt=timezone.now()
        ).exists()
        # Not type(self.user): scope["user"] is Channels' lazy proxy, which has no manager.
        users = get_user_model().objects
        return alive and users.filter(pk=self.user.pk, is_active=True).exists()


class NotFoundConsumer(LayerGuardedConsumer):
    """Every websocket path no app routes: refused before accept()."""

    async def connect(self) -> None:
        await self.close(code=CLOSE_NOT_FOUND)


class PingConsumer(AuthenticatedConsumer):
    """The socket every page opens: greets the user, answers pings, and shows
    their notices as toasts and in the header's bell (apps.core.notices). The
    shell uses it to show that live updates are connected.

    Notices come as `notice.created` through the channel layer, the worker's
    through the web process's bridge (apps.core.bridge); where no bridge
    listens in this process, a catch-up task asks for notices newer than the
    last this socket knows every NOTICE_CATCH_UP_SECONDS."""

    async def on_authenticated(self) -> None:
        # An HTML fragment: the htmx websocket extension swaps it into the header.
        await self.send(
            text_data=render_to_string("core/_live_status.html", {"name": self.user.name})
        )
        joined = await self.join(notices.notices_group(self.user.pk))
        # Read before the toasts: a notice written in between comes by the layer or the catch-up.
        self.last_notice_id = await notices.newest_id_async(self.user)
        for toast in await notices.toasts_async(self.user):
            await self.send(text_data=notices.render_toast(toast))
        # The page came with an empty bell ("No notices in the last day"):
        # fill it when that is untrue.
        bell = await notices.render_bell_async(self.user, only_if_any=True)
        if bell:
            await self.send(text_data=bell)
        # Without the layer's group (in memory: the worker's notices cannot
        # come that way; a shared layer that is down) the socket asks itself.
        interval = notices.catch_up_seconds(joined=joined)
        if interval is not None:
            self.catch_up = asyncio.create_task(self._catch_up(interval))

    async def disconnect(self, code: int) -> None:
        catch_up = getattr(self, "catch_up", None)
        if catch_up is not None:
            catch_up.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await catch_up
        await super().disconnect(code)

    async def notice_created(self, event: dict) -> None:
        notice_id = event["notice_id"]
        self.last_notice_id = max(self.last_notice_id, notice_id)
        # Looked up again for this socket's own user: a notice reaches only its owner.
        toast = await notices.toast_with_async(self.user, notice_id)
        if toast is not None:
            await self.send(text_data=notices.render_toast(toast))
            await self.send(text_data=await notices.render_bell_async(self.user))

    async def _catch_up(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                fresh = await notices.ids_after_async(self.user, self.last_notice_id)
            except Exception:  # a locked or busy database: try again next time
                logger.exception("could not read new notices")
                continue
            for notice_id in fresh:
                await self.notice_created({"notice_id": notice_id})

    async def receive_json(self, content: dict, **kwargs) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})
