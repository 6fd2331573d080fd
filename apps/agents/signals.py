"""Terminals end when what they connect with changes: a profile edited (host,
port, user, secret, pinned key), deleted, or its chat deleted."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from apps.agents.models import AgentSession, SSHProfile
from apps.agents.terminal.registry import TERMINALS
from apps.agents.terminal.spec import connection_key


@receiver(post_save, sender=SSHProfile, dispatch_uid="agents-terminal-profile-saved")
def close_terminals_of_changed_profile(sender, instance: SSHProfile, **kwargs) -> None:
    TERMINALS.close_where(
        "the SSH profile changed (host, user, key or host key); start a new shell",
        profile_id=instance.pk,
        unless_key=connection_key(instance),
    )


@receiver(post_delete, sender=SSHProfile, dispatch_uid="agents-terminal-profile-deleted")
def close_terminals_of_deleted_profile(sender, instance: SSHProfile, **kwargs) -> None:
    TERMINALS.close_where("the SSH profile was deleted", profile_id=instance.pk)


@receiver(post_delete, sender=AgentSession, dispatch_uid="agents-terminal-chat-deleted")
def close_terminal_of_deleted_chat(sender, instance: AgentSession, **kwargs) -> None:
    TERMINALS.close_where("the chat was deleted", chat_id=instance.chat_id)
