"""manage.py digest: run the paper digest now, or configure it.

    manage.py digest [--user USER] [--force] [--json]
    manage.py digest configure --user USER [--enable | --disable]
        [--arxiv CAT:LIMIT ...] [--biorxiv CAT:LIMIT ...] [--keyword WORD:LIMIT ...]
        [--model CONNECTION:MODEL] [--context-file FILE] [--folder NAME]
    manage.py digest configure --instance --enable | --disable

One parser with an optional positional action ("run" when left out), rather
than subparsers: argparse subparsers make the action mandatory once they
exist, and the documented run form has none. Options that only mean
something for `configure` are refused with the run form, and the reverse.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.commands import user_named
from apps.core.errors import Refused
from apps.core.jobs import job_run
from apps.digest import config
from apps.digest.models import Digest
from apps.digest.papers import DigestFailed
from apps.digest.selectors import digest_settings_for, digest_users, may_run_digest
from apps.digest.services import digest_configure, digest_instance_enable, digest_run, summary_json
from apps.instance.selectors import instance_settings

DISABLED = """\
The paper digest is turned off for this instance, so nothing was fetched.
To turn it on: Admin → Instance settings → "Digest enabled", or
    manage.py digest configure --instance --enable
Then each person with the "Can run the paper digest" permission sets up their
digest on the Digests page (or: manage.py digest configure --user NAME ...).
To run once anyway: manage.py digest --force [--user NAME]"""

CONFIGURE_ONLY = ("arxiv", "biorxiv", "keyword", "model", "context_file", "folder", "instance")


class Command(BaseCommand):
    help = "Run the weekly paper digest now (see docs/digest.md), or configure it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "action",
            nargs="?",
            choices=["run", "configure"],
            default="run",
            help="run (the default) or configure",
        )
        parser.add_argument("--user", help="whose digest (run: everyone whose digest is on)")
        parser.add_argument(
            "--force",
            action="store_true",
            help="run even when the digest is switched off (instance or person)",
        )
        parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
        switch = parser.add_mutually_exclusive_group()
        switch.add_argument("--enable", action="store_true", help="configure: switch it on")
        switch.add_argument("--disable", action="store_true", help="configure: switch it off")
        parser.add_argument(
            "--instance", action="store_true", help="configure: the instance switch (admins)"
        )
        parser.add_argument("--arxiv", nargs="+", metavar="CAT:LIMIT", help="e.g. cs.LG:50")
        parser.add_argument(
            "--biorxiv", nargs="+", metavar="CAT:LIMIT", help="e.g. bioinformatics:100"
        )
        parser.add_argument("--keyword", nargs="+", metavar="WORD:LIMIT", help="e.g. cytometry:50")
        parser.add_argument(
            "--model", metavar="CONNECTION:MODEL", help="scoring model ('' = their default)"
        )
        parser.add_argument(
            "--context-file", metavar="FILE", help="research context for the prompt ('-' = stdin)"
        )
        parser.add_argument("--folder", metavar="NAME", help="subfolder for digest files")

    def handle(self, *args, **options) -> None:
        if options["action"] == "configure":
            self.configure(options)
        else:
            given = [name for name in CONFIGURE_ONLY if options.get(name)]
            if given or options["enable"] or options["disable"]:
                shown = ", ".join(f"--{n.replace('_', '-')}" for n in given) or "--enable/--disable"
                raise CommandError(f"{shown} belong to `manage.py digest configure`")
            self.run(options)

    # --- configure

    def configure(self, options: dict) -> None:
        if options["force"] or options["json"]:
            raise CommandError("--force and --json belong to the run form (manage.py digest)")
        if options["instance"]:
            if options["user"] or any(options.get(n) for n in CONFIGURE_ONLY[:-1]):
                raise CommandError("--instance takes only --enable or --disable")
            if not (options["enable"] or options["disable"]):
                state = "on" if instance_settings().digest_enabled else "off"
                self.stdout.write(f"The paper digest is {state} for this instance.")
                return
            digest_instance_enable(enabled=options["enable"])
            state = "on" if options["enable"] else "off"
            self.stdout.write(f"The paper digest is now {state} for this instance.")
            return
        if not options["user"]:
            raise CommandError("configure needs --user NAME (or --instance)")
        user = user_named(options["user"])
        enabled = True if options["enable"] else False if options["disable"] else None
        context = None
        if options["context_file"]:
            context = self._read_context(options["context_file"])
        try:
            current = digest_configure(
                user=user,
                enabled=enabled,
                arxiv=options["arxiv"],
                biorxiv=options["biorxiv"],
                keywords=options["keyword"],
                model_label=options["model"],
                research_context=context,
                folder=options["folder"],
            )
        except Refused as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            lines = [f"{field}: {m}" for field, msgs in exc.message_dict.items() for m in msgs]
            raise CommandError("\n".join(lines)) from exc
        self.stdout.write(self._describe(user, current))

    def _read_context(self, name: str) -> str:
        if name == "-":
            return sys.stdin.read()
        try:
            return Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {name}: {exc}") from exc

    def _describe(self, user, conf) -> str:
        lines = [
            f"Digest settings of {user.username}: {'on' if conf.enabled else 'off'}",
            f"  arXiv: {config.as_text(conf.arxiv_categories).replace(chr(10), ', ') or '-'}",
            f"  bioRxiv: {config.as_text(conf.biorxiv_categories).replace(chr(10), ', ') or '-'}",
            f"  keywords: {config.as_text(conf.biorxiv_keywords).replace(chr(10), ', ') or '-'}",
            f"  model: {conf.model_label or 'their default model'}",
            f"  research context: {len(conf.research_context)} characters",
            f"  folder: {config.user_root(user.pk) / conf.folder}",
        ]
        if not instance_settings().digest_enabled:
            lines.append("Note: the digest is off for this instance (--instance --enable).")
        return "\n".join(lines)

    # --- run

    def run(self, options: dict) -> None:
        force = options["force"]
        if not force and not instance_settings().digest_enabled:
            self.stdout.write(DISABLED)
            return
        if options["user"]:
            user = user_named(options["user"])
            if not may_run_digest(user=user):
                raise CommandError(
                    f"{user.username} does not have the permission to run the paper digest "
                    "(an admin adds them to a group with “Can run the paper digest”)"
                )
            conf = digest_settings_for(user=user)
            if not force and (conf is None or not conf.enabled):
                self.stdout.write(
                    f"{user.username}'s digest is switched off or not set up; nothing fetched. "
                    f"Set it up with: manage.py digest configure --user {user.username} --enable "
                    "--arxiv CAT:LIMIT ...  (or run once with --force)"
                )
                return
            users = [user]
        else:
            users = digest_users()
            if not users:
                message = "Nobody's digest is switched on and set up; nothing fetched."
                self.stdout.write("[]" if options["json"] else message)
                return
        outcomes, failed = [], 0
        for user in users:
            try:
                outcome = self._run_one(user)
            except DigestFailed as exc:
                failed += 1
                outcome = {"user": user.username, "error": str(exc)}
                if not options["json"]:
                    self.stderr.write(f"{user.username}: the digest failed: {exc}")
            outcomes.append(outcome)
        if options["json"]:
            data = outcomes[0] if options["user"] else outcomes
            if options["user"] and "user" in data and "error" not in data:
                data = {k: v for k, v in data.items() if k != "user"}
            self.stdout.write(json.dumps(data, indent=2))
        if failed:
            raise CommandError(f"{failed} digest(s) failed")

    def _run_one(self, user) -> dict:
        with job_run("digest_run", user_id=user.pk, trigger="command") as run:
            result = digest_run(user=user, trigger=Digest.Trigger.COMMAND)
            if not result.ran:
                run.summary = f"{user.username}: not run ({result.reason})"
                if not self._json:
                    self.stdout.write(run.summary)
                return {"user": user.username, "skipped": result.reason}
            run.summary = f"{user.username}: {result.digest.title}"
        data = summary_json(result.digest)
        if not self._json:
            self._print(user, result.digest, data)
        return {"user": user.username, **data}

    def _print(self, user, digest: Digest, data: dict) -> None:
        tiers = data["tiers"]
        self.stdout.write(
            f"{user.username}: {digest.title}\n"
            f"  fetched {data['fetched']}, {data['deduplicated']} after removing duplicates, "
            f"{data['scored']} scored\n"
            f"  must read {tiers['must']}, worth reading {tiers['worth']}, skim {tiers['skim']}\n"
            f"  full text {data['full_text']}, summary entries {data['summaries']}, "
            f"failed batches {data['failed_batches']}\n"
            f"  file: {data['digest_path']}"
        )
        for warning in digest.warnings:
            self.stdout.write(f"  warning: {warning}")

    def execute(self, *args, **options) -> str | None:
        self._json = bool(options.get("json"))
        return super().execute(*args, **options)
