#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jarvis_site.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A bad JARVIS_* value or a missing extension: one clear line, not a traceback.
        print(f"Jarvis cannot start: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
