"""manage.py agent: SSH profiles for agent chats, and the connection check.

  agent profiles add --user USER --name NAME --host HOST --port PORT --username NAME
                     (--key-file FILE | --generate-key | --password-stdin)
  agent profiles list --user USER [--json]
  agent check --user USER --profile NAME [--accept-host-key]

Scripts and the feature's outside checks depend on these names and flags.
No secret is ever printed; a generated key's public half is.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.commands import user_named
from apps.accounts.models import User
from apps.agents import services
from apps.agents.models import SSHProfile
from apps.agents.selectors import may_use_agents, profile_named_for, profiles_for
from apps.core.errors import JarvisError

# A private key file is a few kilobytes; anything much bigger is the wrong file.
MAX_KEY_FILE = 64 * 1024


def _invalid(exc: ValidationError) -> CommandError:
    if hasattr(exc, "message_dict"):
        text = "; ".join(f"{name}: {' '.join(errs)}" for name, errs in exc.message_dict.items())
    else:
        text = " ".join(exc.messages)
    return CommandError(text)


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]


def _as_json(profile: SSHProfile, user: User) -> dict:
    return {
        "id": profile.pk,
        "name": profile.name,
        "owner": profile.owner.username,
        "own": profile.owner_id == user.pk,
        "host": profile.host,
        "port": profile.port,
        "username": profile.username,
        "auth": profile.auth,
        "public_key": profile.public_key,
        "host_key_fingerprint": profile.host_key_fingerprint,
        "host_key_pinned_at": (
            profile.host_key_pinned_at.isoformat() if profile.host_key_pinned_at else None
        ),
        "shared_with": sorted(g.name for g in profile.shared_groups.all()),
    }


class Command(BaseCommand):
    help = "SSH profiles for agent chats: add, list, check a connection."

    def add_arguments(self, parser: CommandParser) -> None:
        nouns = parser.add_subparsers(dest="noun", required=True)

        profiles = nouns.add_parser("profiles", help="SSH profiles")
        actions = profiles.add_subparsers(dest="action", required=True)
        add = actions.add_parser("add", help="add a profile")
        add.add_argument("--user", required=True)
        add.add_argument("--name", required=True)
        add.add_argument("--host", required=True)
        add.add_argument("--port", type=int, default=22)
        add.add_argument("--username", required=True, help="the user on the remote machine")
        secret = add.add_mutually_exclusive_group(required=True)
        secret.add_argument("--key-file", help="a private key file (OpenSSH or PEM, no passphrase)")
        secret.add_argument(
            "--generate-key",
            action="store_true",
            help="make an ed25519 key here and print its public key",
        )
        secret.add_argument(
            "--password-stdin", action="store_true", help="read the password from standard input"
        )
        listing = actions.add_parser("list", help="the profiles a person may use")
        listing.add_argument("--user", required=True)
        listing.add_argument("--json", action="store_true")

        check = nouns.add_parser("check", help="connect, show the host key, run uname -a")
        check.add_argument("--user", required=True)
        check.add_argument("--profile", required=True, help="the profile's name")
        check.add_argument(
            "--accept-host-key",
            action="store_true",
            help="on a first connection, trust the host key the server shows",
        )

    def handle(self, *args, **options) -> None:
        user = self._user(options["user"])
        if options["noun"] == "check":
            self.check_connection(user, options)
        else:
            getattr(self, f"profiles_{options['action']}")(user, options)

    def _user(self, username: str) -> User:
        user = user_named(username, active=True)
        if not may_use_agents(user=user):
            raise CommandError(
                f"{user.username} may not use agent chats: an admin grants the "
                "'Can use agent chats' permission through a group"
            )
        return user

    def profiles_add(self, user: User, options: dict) -> None:
        key_text = password = None
        if options["key_file"]:
            path = Path(options["key_file"])
            try:
                if path.stat().st_size > MAX_KEY_FILE:
                    raise CommandError(f"{path} is too big to be a private key")
                key_text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"cannot read {path}: {getattr(exc, 'strerror', exc)}") from None
        if options["password_stdin"]:
            # Only the line break goes: a password may begin or end with a space.
            password = sys.stdin.readline().rstrip("\r\n")
            if not password:
                raise CommandError("no password on standard input")
        try:
            profile = services.profile_create(
                owner=user,
                name=options["name"],
                host=options["host"],
                port=options["port"],
                username=options["username"],
                key_text=key_text,
                generate_key=options["generate_key"],
                password=password,
            )
        except ValidationError as exc:
            raise _invalid(exc) from None
        except JarvisError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"added SSH profile {profile.name!r} (id {profile.pk})")
        if options["generate_key"]:
            self.stdout.write(
                f"public key (add this line to ~/.ssh/authorized_keys of {profile.username} "
                f"on {profile.host}):"
            )
            self.stdout.write(profile.public_key)

    def profiles_list(self, user: User, options: dict) -> None:
        profiles = list(
            profiles_for(user=user).prefetch_related("shared_groups").order_by("name", "pk")
        )
        if options["json"]:
            self.stdout.write(json.dumps([_as_json(p, user) for p in profiles]))
            return
        rows = [("NAME", "OWNER", "HOST", "PORT", "USER", "AUTH", "HOST KEY")]
        for p in profiles:
            rows.append(
                (
                    p.name,
                    p.owner.username,
                    p.host,
                    str(p.port),
                    p.username,
                    p.auth,
                    p.host_key_fingerprint or "not accepted yet",
                )
            )
        for line in _table(rows):
            self.stdout.write(line)

    def check_connection(self, user: User, options: dict) -> None:
        profile = profile_named_for(user=user, name=options["profile"])
        if profile is None:
            raise CommandError(f"{user.username} has no SSH profile named {options['profile']!r}")
        try:
            result = services.profile_check(
                user=user, profile=profile, accept_host_key=options["accept_host_key"]
            )
        except JarvisError as exc:
            raise CommandError(str(exc)) from None
        if result.fingerprint:
            accepted = " (accepted now)" if result.newly_pinned else ""
            self.stdout.write(f"host key {result.fingerprint}{accepted}")
        if result.needs_acceptance:
            raise CommandError(
                f"{result.message}. Compare it with the server's own fingerprint "
                "(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the server), then run: "
                f"manage.py agent check --user {shlex.quote(user.username)} "
                f"--profile {shlex.quote(profile.name)} "
                "--accept-host-key"
            )
        if not result.ok:
            raise CommandError(result.message)
        self.stdout.write("ok")
        self.stdout.write(result.uname)
