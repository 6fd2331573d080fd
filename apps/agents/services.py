"""SSH profiles and agent chats: the write path, and the connection check.

Secrets (private keys, passwords) are Fernet-encrypted on the model and
decrypted only into an `ssh.Target` on the way to a connection; nothing here
logs one or puts one into a message. The network work of `profile_check` runs
outside any transaction (a host may take seconds to answer).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.agents import ssh
from apps.agents.access import refusal_for_session
from apps.agents.errors import SSHError
from apps.agents.models import AgentSession, SSHProfile
from apps.agents.selectors import may_use_agents, profile_named_for, profiles_for
from apps.chats.models import Chat, Message
from apps.chats.services import turn_start
from apps.core.errors import AlreadyExists, Refused

if TYPE_CHECKING:
    from apps.accounts.models import User

logger = logging.getLogger(__name__)

NOT_ALLOWED = "you may not use agent chats (ask an admin for the 'use agent chats' permission)"
CHECK_TIMEOUT = 15.0
PIN_FIELDS = ["host_key", "host_key_fingerprint", "host_key_pinned_at", "updated"]


def _require_permission(user: User) -> None:
    if not may_use_agents(user=user):
        raise Refused(NOT_ALLOWED)


def _credential_choice(key_text: str | None, generate_key: bool, password: str | None) -> int:
    return sum([bool(key_text and key_text.strip()), generate_key, bool(password)])


def _set_credentials(
    profile: SSHProfile, *, key_text: str | None, generate_key: bool, password: str | None
) -> None:
    """Exactly one of the three; the other secret is cleared. InvalidKey for a
    key that cannot be used (its text is never repeated back)."""
    if key_text and key_text.strip():
        text = key_text.strip() + "\n"
        profile.public_key = ssh.public_key_of(text)
        profile.set_private_key(text)
        profile.set_password(None)
        profile.auth = SSHProfile.Auth.KEY
    elif generate_key:
        pair = ssh.generate_keypair(comment="jarvis")
        profile.public_key = pair.public_key
        profile.set_private_key(pair.private_key)
        profile.set_password(None)
        profile.auth = SSHProfile.Auth.KEY
    else:
        profile.set_password(password)
        profile.set_private_key(None)
        profile.public_key = ""
        profile.auth = SSHProfile.Auth.PASSWORD


def _forget_pin(profile: SSHProfile) -> None:
    profile.host_key = ""
    profile.host_key_fingerprint = ""
    profile.host_key_pinned_at = None


def profile_create(
    *,
    owner: User,
    name: str,
    host: str,
    port: int = 22,
    username: str,
    key_text: str | None = None,
    generate_key: bool = False,
    password: str | None = None,
) -> SSHProfile:
    """A new profile logging in with exactly one of: a pasted private key, a
    key generated here (its public half is on `profile.public_key`), or a
    password. Refused without the permission or with not exactly one way to
    log in; AlreadyExists for a name the owner already uses; InvalidKey;
    django's ValidationError for a bad host, port or user name."""
    _require_permission(owner)
    if _credential_choice(key_text, generate_key, password) != 1:
        raise Refused(
            "choose exactly one way to log in: a private key, a generated key or a password"
        )
    name = name.strip()
    if SSHProfile.objects.filter(owner=owner, name__iexact=name).exists():
        raise AlreadyExists(f"you already have an SSH profile named {name!r}")
    profile = SSHProfile(owner=owner, name=name, host=host.strip(), port=port, username=username)
    _set_credentials(profile, key_text=key_text, generate_key=generate_key, password=password)
    profile.full_clean()
    profile.save()
    logger.info(
        "created SSH profile %r of %s (%s@%s:%s, %s)",
        profile.name, owner, profile.username, profile.host, profile.port, profile.auth,
    )  # fmt: skip
    return profile


def profile_update(
    *,
    profile: SSHProfile,
    name: str | None = None,
    host: str | None = None,
    port: int | None = None,
    username: str | None = None,
    key_text: str | None = None,
    generate_key: bool = False,
    password: str | None = None,
) -> SSHProfile:
    """Change what is given (None: unchanged). A new host or port forgets the
    pinned host key: the key belongs to the machine that answered there, and
    the next check shows the new one for acceptance. The caller has checked
    that the person owns the profile (selectors.own_profile_for)."""
    _require_permission(profile.owner)
    if _credential_choice(key_text, generate_key, password) > 1:
        raise Refused("choose one way to log in: a private key, a generated key or a password")
    if name is not None and name.strip().lower() != profile.name.lower():
        taken = SSHProfile.objects.filter(owner=profile.owner, name__iexact=name.strip())
        if taken.exclude(pk=profile.pk).exists():
            raise AlreadyExists(f"you already have an SSH profile named {name.strip()!r}")
    moved = (host is not None and host.strip().lower() != profile.host.lower()) or (
        port is not None and port != profile.port
    )
    if name is not None:
        profile.name = name
    if host is not None:
        profile.host = host.strip()
    if port is not None:
        profile.port = port
    if username is not None:
        profile.username = username
    if _credential_choice(key_text, generate_key, password):
        _set_credentials(profile, key_text=key_text, generate_key=generate_key, password=password)
    if moved:
        _forget_pin(profile)
    profile.full_clean()
    profile.save()
    logger.info(
        "updated SSH profile %r of %s%s",
        profile.name,
        profile.owner,
        " (host key forgotten)" if moved else "",
    )
    return profile


def profile_pin_host_key(*, profile: SSHProfile, key_line: str) -> ssh.HostKey:
    """Trust this host key (an OpenSSH public-key line) for the profile's host and port."""
    key = ssh.parse_host_key(key_line)
    profile.host_key = key.line
    profile.host_key_fingerprint = key.fingerprint
    profile.host_key_pinned_at = timezone.now()
    profile.save(
        update_fields=["host_key", "host_key_fingerprint", "host_key_pinned_at", "updated"]
    )
    logger.info(
        "pinned host key %s for SSH profile %r of %s", key.fingerprint, profile.name, profile.owner
    )
    return key


def profile_forget_host_key(*, profile: SSHProfile) -> None:
    """Drop the pinned key (the server was reinstalled); the next check asks again."""
    _forget_pin(profile)
    profile.save(
        update_fields=["host_key", "host_key_fingerprint", "host_key_pinned_at", "updated"]
    )
    logger.info("forgot the host key of SSH profile %r of %s", profile.name, profile.owner)


def profile_share(*, profile: SSHProfile, groups: Iterable[Group], actor: User) -> None:
    """Admins share a profile with groups (members still need the permission)."""
    if not (actor.is_active and actor.is_staff):
        raise Refused("only an admin can share an SSH profile")
    groups = list(groups)
    profile.shared_groups.set(groups)
    logger.info(
        "%s shared SSH profile %r of %s with %s",
        actor, profile.name, profile.owner, ", ".join(g.name for g in groups) or "nobody",
    )  # fmt: skip


def profile_delete(*, profile: SSHProfile) -> None:
    logger.info("deleted SSH profile %r of %s", profile.name, profile.owner)
    profile.delete()


def profile_target(profile: SSHProfile) -> ssh.Target:
    """Where and how to connect, secrets decrypted (crypto.SecretUndecryptable
    when the Fernet key they were stored with is gone). Keep it in memory only."""
    return ssh.Target(
        host=profile.host,
        port=profile.port,
        username=profile.username,
        private_key=profile.private_key,
        password=profile.password,
        host_key=profile.host_key or None,
    )


@dataclass(frozen=True)
class ProfileCheck:
    ok: bool
    fingerprint: str  # the server's host key as seen or pinned; "" when never reached
    uname: str = ""  # `uname -a` on the remote machine when ok
    newly_pinned: bool = False
    needs_acceptance: bool = False  # reached, key shown, not accepted yet
    message: str = ""  # what went wrong, for a person
    error: SSHError | None = None


async def _uname(target: ssh.Target) -> str:
    async with await ssh.connect(target, connect_timeout=CHECK_TIMEOUT) as conn:
        result = await ssh.run_command(conn, "uname -a", timeout=CHECK_TIMEOUT)
    return (result.stdout or result.stderr).strip()


def profile_check(
    *,
    user: User,
    profile: SSHProfile,
    accept_host_key: bool = False,
    expected_fingerprint: str | None = None,
) -> ProfileCheck:
    """Connect and run `uname -a`. A profile without a pinned key first has the
    server's key fetched (key exchange only, nothing sent); `accept_host_key`
    pins it — only the owner may — and, when `expected_fingerprint` is given
    (the one the person was shown), only if it is still that key. A changed
    key is never accepted here: the owner forgets the old one first."""
    _require_permission(user)
    if not profiles_for(user=user).filter(pk=profile.pk).exists():
        raise Refused("no such SSH profile")
    if accept_host_key and profile.owner_id != user.pk:
        raise Refused("only the profile's owner can accept its host key")
    target = profile_target(profile)
    fingerprint = profile.host_key_fingerprint
    newly_pinned = False
    try:
        if not profile.host_key:
            seen = async_to_sync(ssh.capture_host_key)(target, connect_timeout=CHECK_TIMEOUT)
            fingerprint = seen.fingerprint
            if not accept_host_key:
                return ProfileCheck(
                    ok=False,
                    fingerprint=fingerprint,
                    needs_acceptance=True,
                    message=f"the host key {fingerprint} of {profile.host}:{profile.port} "
                    "is not accepted yet",
                )
            if expected_fingerprint and expected_fingerprint != fingerprint:
                return ProfileCheck(
                    ok=False,
                    fingerprint=fingerprint,
                    needs_acceptance=True,
                    message=f"the server now shows {fingerprint}, not the {expected_fingerprint} "
                    "you accepted; nothing was pinned",
                )
            profile_pin_host_key(profile=profile, key_line=seen.line)
            target = replace(target, host_key=seen.line)
            newly_pinned = True
        uname = async_to_sync(_uname)(target)
    except SSHError as exc:
        got = getattr(exc, "got", None)
        return ProfileCheck(
            ok=False,
            fingerprint=got or fingerprint,
            newly_pinned=newly_pinned,
            message=str(exc),
            error=exc,
        )
    return ProfileCheck(ok=True, fingerprint=fingerprint, uname=uname, newly_pinned=newly_pinned)


# --- agent chats


def agent_chat_create(
    *,
    owner: User,
    profile: SSHProfile,
    project_dir: str,
    mode: str = AgentSession.Mode.ASK,
    title: str = "",
    model_label: str = "",
) -> Chat:
    """A new chat of kind "agent" working in `project_dir` on the machine of
    `profile` (one the owner may use: their own or one shared with them).
    Unlike a normal chat it exists before its first message: its terminal is
    useful before anything is asked. The kind, profile and directory are fixed
    from here on; `chat.agent_session` holds them and the approval mode.
    Refused without the permission or for a profile they may not use;
    django's ValidationError for a directory that is not absolute."""
    _require_permission(owner)
    if not profiles_for(user=owner).filter(pk=profile.pk).exists():
        raise Refused("no such SSH profile")
    if mode not in AgentSession.Mode.values:
        raise Refused(f"unknown approval mode {mode!r}: choose plan, ask, manual or auto")
    project_dir = project_dir.strip()
    if len(project_dir) > 1 and project_dir.endswith("/"):
        project_dir = project_dir.rstrip("/") or "/"
    session = AgentSession(profile=profile, project_dir=project_dir, mode=mode)
    session.full_clean(exclude=["chat"])
    # No title yet unless one is given: the first request names the chat
    # (chats.services.turn_start), as a normal chat's first message does.
    title = " ".join(title.split())[:200]
    with transaction.atomic():
        chat = Chat.objects.create(
            owner=owner, kind=Chat.Kind.AGENT, title=title, model_label=model_label.strip()
        )
        session.chat = chat
        session.save()
    logger.info(
        "created agent chat %s of %s on SSH profile %r in %s (%s)",
        chat.pk, owner, profile.name, project_dir, mode,
    )  # fmt: skip
    return chat


def agent_chat_from_options(*, user: User, options: dict) -> Chat:
    """`manage.py chat --agent PROFILE --dir DIR --mode MODE`: the agent chat
    kind's starter (registered with chats.kinds by agents' `registrations`).
    Refused, with a message, for anything agent_chat_create refuses."""
    _require_permission(user)
    profile = profile_named_for(user=user, name=options["agent"])
    if profile is None:
        raise Refused(f"you have no SSH profile named {options['agent']!r}")
    try:
        return agent_chat_create(
            owner=user,
            profile=profile,
            project_dir=options["dir"] or "",
            mode=options.get("mode") or AgentSession.Mode.ASK,
        )
    except ValidationError as exc:
        raise Refused(" ".join(exc.messages)) from None


def agent_mode_set(*, session: AgentSession, mode: str) -> AgentSession:
    """Change the approval mode. It applies from the next round of tool calls,
    also in a reply that is running now: the loop asks the policy, which reads
    the mode fresh, before each round (and again before each call it runs), so
    "Stop approving all" in the middle of an Auto reply stops the next command."""
    _require_permission(session.chat.owner)
    if mode not in AgentSession.Mode.values:
        raise Refused(f"unknown approval mode {mode!r}: choose plan, ask, manual or auto")
    return agent_mode_switch(session=session, mode=mode)


def agent_mode_switch(*, session: AgentSession, mode: str) -> AgentSession:
    """Write the mode (the caller has checked the permission and the value):
    the header form through agent_mode_set, and "Approve all" on a card, which
    is a switch to Auto."""
    session.mode = mode
    session.save(update_fields=["mode"])
    logger.info("agent chat %s of %s is now in %s mode", session.chat_id, session.chat.owner, mode)
    return session


CARRY_OUT = "Carry out the plan you submitted, step by step."


def agent_plan_carry_out(*, session: AgentSession) -> Message:
    """ "Carry out" on a submitted plan: the chat leaves Plan mode for Ask (commands
    and writes still wait for the person) and the request to carry it out is sent.
    Refused while a reply runs or when the chat may not run things any more.
    Returns the new reply's placeholder; the caller starts it."""
    refusal = refusal_for_session(session)
    if refusal:
        raise Refused(refusal)
    _, _, answer = turn_start(user=session.chat.owner, chat=session.chat, text=CARRY_OUT)
    agent_mode_switch(session=session, mode=AgentSession.Mode.ASK)
    return answer
