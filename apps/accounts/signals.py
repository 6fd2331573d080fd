"""Signing out closes that session's open websockets."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_out
from django.dispatch import receiver

from apps.core.realtime import close_sockets, session_group


@receiver(user_logged_out)
def close_sockets_of_ended_session(sender, request, user, **kwargs) -> None:
    # Sent before the session is flushed, so the key still names it.
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if session_key:
        close_sockets(session_group(session_key))
