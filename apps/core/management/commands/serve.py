"""manage.py serve: daphne (web + websockets) and the Huey worker, together.

What `make run` ends with. Both run in the foreground as child processes;
Ctrl-C (or SIGTERM) stops both, and if either dies the other is stopped too,
so a half-running Jarvis is never left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand, CommandParser

from apps.core.jobs import WORKER_COMMAND

STOP_GRACE_SECONDS = 10


class Command(BaseCommand):
    help = "Run the web server (daphne) and the background worker together."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-worker", action="store_true", help="web only")

    def handle(self, *args, **options) -> None:
        python = sys.executable
        manage = [python, os.path.abspath(sys.argv[0])]
        commands = {
            "web": [
                python,
                "-m",
                "daphne",
                "-b",
                options["host"],
                "-p",
                str(options["port"]),
                "jarvis_site.asgi:application",
            ],
        }
        if not options["no_worker"]:
            commands["worker"] = [*manage, *WORKER_COMMAND]
        stopping = False

        def request_stop(signum, frame) -> None:
            nonlocal stopping
            stopping = True

        # Handlers first: a Python handler resets to the default in the children
        # at exec, whereas an inherited "ignore" (a shell's background job) would
        # leave them deaf to the SIGINT we send to stop them gracefully.
        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        children = {name: subprocess.Popen(argv) for name, argv in commands.items()}
        self.stdout.write(
            f"Jarvis is running at http://{options['host']}:{options['port']}/ "
            f"({', '.join(children)}); press Ctrl-C to stop."
        )
        exit_code = 0
        while not stopping:
            for name, child in children.items():
                if child.poll() is not None:
                    self.stderr.write(f"{name} exited with status {child.returncode}; stopping")
                    exit_code = child.returncode or 1
                    stopping = True
            time.sleep(0.3)
        self._stop(children)
        if exit_code:
            sys.exit(exit_code)

    def _stop(self, children: dict[str, subprocess.Popen]) -> None:
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for name, child in children.items():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.stderr.write(f"{name} did not stop in time; killing it")
                child.kill()
                child.wait()
        self.stdout.write("stopped")
