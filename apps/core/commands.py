"""The shape of Jarvis's multi-part management commands (`manage.py llm
connections add …`, `kb sources list`, `users set-password`): argparse
subcommands whose destinations are "noun" and "action", dispatched to the
method named `noun_action` (or the noun alone), with a JarvisError turned into
a CommandError (exit status 1 and the message, no traceback)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import JarvisError


class SubcommandCommand(BaseCommand):
    # Exceptions besides JarvisError whose message is already fit for a person.
    plain_errors: tuple[type[Exception], ...] = ()

    def handle(self, *args, **options) -> None:
        parts = [options.get("noun"), options.get("action")]
        name = "_".join(part.replace("-", "_") for part in parts if part)
        try:
            getattr(self, name)(options)
        except (JarvisError, *self.plain_errors) as exc:
            raise CommandError(str(exc)) from None
