"""manage.py llm connections add|list|reencrypt, llm models add [--probe]|list

Scripts depend on these names and flags. No key is ever printed unmasked.
"""

from __future__ import annotations

import sys

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from apps.core.commands import SubcommandCommand
from apps.core.crypto import SecretUndecryptable
from apps.core.errors import AlreadyExists
from apps.instance import services
from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings
from apps.llm.services import PROBE_FAILED, PROBE_WORDS, model_tools_from_probe


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]


def _invalid(exc: ValidationError) -> CommandError:
    if hasattr(exc, "message_dict"):
        text = "; ".join(f"{name}: {' '.join(errs)}" for name, errs in exc.message_dict.items())
    else:
        text = " ".join(exc.messages)
    return CommandError(text)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


class Command(SubcommandCommand):
    help = "Configure LLM connections and the model catalogue."

    def add_arguments(self, parser: CommandParser) -> None:
        groups = parser.add_subparsers(dest="noun", required=True)

        connections = groups.add_parser("connections", help="LLM endpoints")
        conn = connections.add_subparsers(dest="action", required=True)
        add = conn.add_parser("add", help="add an endpoint (prints its id)")
        add.add_argument("--name", required=True)
        add.add_argument("--kind", required=True, choices=Connection.Kind.values)
        add.add_argument("--base-url", required=True)
        add.add_argument(
            "--api-key-stdin", action="store_true", help="read the API key from standard input"
        )
        add.add_argument(
            "--location",
            choices=Connection.Location.values,
            default=Connection.Location.CLOUD,
            help="local: on your own network; cloud (the default): anywhere else",
        )
        conn.add_parser("list", help="list endpoints (keys masked)")
        conn.add_parser(
            "reencrypt",
            help="re-encrypt stored keys with the first key of JARVIS_FERNET_KEYS",
        )

        models = groups.add_parser("models", help="the model catalogue")
        mod = models.add_subparsers(dest="action", required=True)
        madd = mod.add_parser("add", help="add a model of a connection")
        madd.add_argument("--connection", required=True, help="the connection's name")
        madd.add_argument("--model", required=True, help="the model id the endpoint uses")
        madd.add_argument("--display-name", default="")
        madd.add_argument("--tools", action="store_true", help="it can call tools")
        madd.add_argument(
            "--probe",
            action="store_true",
            help="ask the model one tiny tool request, as admin's Check does, and set tools "
            "and 'search only' from its answer (instead of --tools)",
        )
        madd.add_argument("--vision", action="store_true", help="it accepts images")
        madd.add_argument("--context", type=int, default=0, help="context window in tokens")
        madd.add_argument("--default", action="store_true", help="make it the instance default")
        mod.add_parser("list", help="list the catalogue")

    # --- connections

    def connections_add(self, options: dict) -> None:
        api_key = ""
        if options["api_key_stdin"]:
            api_key = sys.stdin.readline().strip()
            if not api_key:
                raise CommandError("no API key on standard input")
        try:
            connection = services.connection_create(
                name=options["name"],
                kind=options["kind"],
                base_url=options["base_url"],
                api_key=api_key,
                location=options["location"],
            )
        except AlreadyExists as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:
            raise _invalid(exc) from None
        self.stdout.write(str(connection.pk))

    def connections_list(self, options: dict) -> None:
        rows = [("NAME", "KIND", "BASE URL", "LOCATION", "ENABLED", "KEY")]
        for c in Connection.objects.order_by("name"):
            rows.append(
                (c.name, c.kind, c.base_url, c.location, _yes(c.enabled), c.masked_key or "-")
            )
        for line in _table(rows):
            self.stdout.write(line)

    def connections_reencrypt(self, options: dict) -> None:
        try:
            count = services.connections_reencrypt()
        except SecretUndecryptable as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"re-encrypted {count} key(s)")

    # --- models

    def models_add(self, options: dict) -> None:
        connection = Connection.objects.filter(name=options["connection"]).first()
        if connection is None:
            raise CommandError(f"no connection named {options['connection']!r}")
        if options["context"] < 0:
            raise CommandError("--context must be 0 (unknown) or more")
        try:
            entry = services.model_add(
                connection=connection,
                model_id=options["model"],
                display_name=options["display_name"],
                supports_tools=options["tools"],
                supports_vision=options["vision"],
                context_length=options["context"],
                default=options["default"],
            )
        except AlreadyExists as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:
            raise _invalid(exc) from None
        suffix = " (instance default)" if options["default"] else ""
        self.stdout.write(f"added {entry.label}{suffix}")
        if options["probe"]:
            probe = model_tools_from_probe(entry=entry)
            if probe == PROBE_FAILED:
                self.stderr.write(f"the tool probe of {entry.model_id} failed; tools left as set")
            else:
                self.stdout.write(f"the model {entry.model_id} {PROBE_WORDS[probe]}")

    def models_list(self, options: dict) -> None:
        default_id = instance_settings().default_model_id
        rows = [("LABEL", "DISPLAY NAME", "TOOLS", "VISION", "CONTEXT", "ENABLED", "DEFAULT")]
        for m in ModelEntry.objects.select_related("connection").order_by(
            "connection__name", "model_id"
        ):
            rows.append(
                (
                    m.label,
                    m.display_name or "-",
                    _yes(m.supports_tools),
                    _yes(m.supports_vision),
                    str(m.context_length) if m.context_length else "?",
                    _yes(m.enabled) if m.connection.enabled else "no (connection off)",
                    "*" if m.pk == default_id else "",
                )
            )
        for line in _table(rows):
            self.stdout.write(line)
