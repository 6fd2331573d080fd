"""Terminals end when what they connect with changes: a profile edited (host,
port, user, secret, pinned key), deleted, or its chat deleted.

These close this process's terminals at once. A terminal held by another web
process (or a change made without a signal, by a queryset update) is ended
by the registry's access watch within TERMINAL_ACCESS_CHECK_SECONDS, with the
same words (apps.agents.terminal.spec)."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from apps.agents.models import AgentSession, SSHProfile
from apps.agents.terminal.registry import TERMINALS
from apps.agents.terminal.spec import (
    CHAT_DELETED,
    PROFILE_CHANGED,
    PROFILE_DELETED,
    connection_key,
)


@receiver(post_save, sender=SSHProfile, dispatch_uid="agents-terminal-profile-saved")
def close_terminals_of_changed_profile(sender, instance: SSHProfile, **kwargs) -> None:
    TERMINALS.close_where(
        PROFILE_CHANGED, profile_id=instance.pk, unless_key=connection_key(instance)
    )


@receiver(post_delete, sender=SSHProfile, dispatch_uid="agents-terminal-profile-deleted")
def close_terminals_of_deleted_profile(sender, instance: SSHProfile, **kwargs) -> None:
    TERMINALS.close_where(PROFILE_DELETED, profile_id=instance.pk)


@receiver(post_delete, sender=AgentSession, dispatch_uid="agents-terminal-chat-deleted")
def close_terminal_of_deleted_chat(sender, instance: AgentSession, **kwargs) -> None:
    TERMINALS.close_where(CHAT_DELETED, chat_id=instance.chat_id)
