"""manage.py users add|list|set-password|disable|enable|unlock"""

from __future__ import annotations

import getpass
import ipaddress
import secrets
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from apps.accounts import services
from apps.accounts.commands import user_named
from apps.accounts.models import User
from apps.core.commands import SubcommandCommand
from apps.core.errors import AlreadyExists


def _read_password(*, from_stdin: bool, prompt: bool) -> str | None:
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise CommandError("no password on standard input")
        return password
    if prompt and sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if first != getpass.getpass("Password (again): "):
            raise CommandError("the two passwords differ")
        return first
    return None


class Command(SubcommandCommand):
    help = "Manage household accounts."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)

        add = sub.add_parser(
            "add", help="create a user (prints a generated password unless given one)"
        )
        add.add_argument("name")
        add.add_argument("--admin", action="store_true", help="can configure the instance in admin")
        add.add_argument("--display-name", default="")
        add.add_argument(
            "--password-stdin", action="store_true", help="read the password from stdin"
        )
        add.add_argument("--guest", action="store_true", help="not a household member")

        sub.add_parser("list", help="list users")

        setpw = sub.add_parser("set-password", help="set a user's password")
        setpw.add_argument("name")
        setpw.add_argument("--password-stdin", action="store_true")

        disable = sub.add_parser("disable", help="disable a user and end their sessions")
        disable.add_argument("name")
        enable = sub.add_parser("enable", help="enable a disabled user")
        enable.add_argument("name")

        unlock = sub.add_parser(
            "unlock", help="lift a sign-in lock: forget a name's (or an address's) failed attempts"
        )
        unlock.add_argument("name", nargs="?", help="the name that was typed at sign-in")
        unlock.add_argument("--address", help="the client address, for every name")

    def add(self, options: dict) -> None:
        password = _read_password(from_stdin=options["password_stdin"], prompt=True)
        generated = password is None
        if generated:
            password = secrets.token_urlsafe(12)
        try:
            user = services.user_create(
                username=options["name"],
                password=password,
                display_name=options["display_name"],
                is_admin=options["admin"],
                household=not options["guest"],
                validate=not generated,
            )
        except AlreadyExists as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:
            raise CommandError("password rejected: " + " ".join(exc.messages)) from None
        role = "admin" if user.is_superuser else "member"
        self.stdout.write(f"created {role} {user.username}")
        if generated:
            self.stdout.write(f"password: {password}")

    def list(self, options: dict) -> None:
        rows = [("NAME", "DISPLAY NAME", "ROLE", "ACTIVE", "GROUPS", "LAST LOGIN")]
        for user in User.objects.order_by("username").prefetch_related("groups"):
            rows.append(
                (
                    user.username,
                    user.display_name or "-",
                    "admin" if user.is_superuser else ("staff" if user.is_staff else "member"),
                    "yes" if user.is_active else "no",
                    ",".join(sorted(g.name for g in user.groups.all())) or "-",
                    user.last_login.strftime("%Y-%m-%d %H:%M") if user.last_login else "never",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write(
                "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
            )

    def set_password(self, options: dict) -> None:
        user = user_named(options["name"])
        password = _read_password(from_stdin=options["password_stdin"], prompt=True)
        if password is None:
            raise CommandError("give the password on a terminal or with --password-stdin")
        try:
            services.user_set_password(user=user, password=password)
        except ValidationError as exc:
            raise CommandError("password rejected: " + " ".join(exc.messages)) from None
        ended = services.end_sessions_of(user=user)
        self.stdout.write(f"password set for {user.username}; ended {ended} session(s)")

    def disable(self, options: dict) -> None:
        user = user_named(options["name"])
        ended = services.user_set_active(user=user, active=False)
        self.stdout.write(f"disabled {user.username}; ended {ended} session(s)")

    def enable(self, options: dict) -> None:
        user = user_named(options["name"])
        services.user_set_active(user=user, active=True)
        self.stdout.write(f"enabled {user.username}")

    def unlock(self, options: dict) -> None:
        name, address = options["name"], options["address"]
        if not name and not address:
            raise CommandError("give a name, --address ADDRESS, or both")
        if address:
            try:
                ipaddress.ip_address(address)
            except ValueError:
                raise CommandError(f"not an IP address: {address!r}") from None
        cleared = services.login_failures_clear(username=name, ip=address)
        what = " from ".join(part for part in (name, address) if part)
        self.stdout.write(f"unlocked {what}; forgot {cleared} failed attempt(s)")
