"""manage.py kb: the headless interface to the library.

Later features and the benchmarks depend on these names and JSON fields:
keep them stable.

  kb sources add --owner USER --name NAME --path DIR [--share owner|household]
                 [--share-group G ...] [--cloud local-only|allowed]
                 [--private-dir D ...] [--unversioned-dir D ...] [--skip-dir D ...]
                 [--projects-dir D ...]
  kb sources list [--json]
  kb sync [--source ID | --owner USER] [--json]
  kb add --owner USER PATH_URL_OR_ARXIV_ID [--replace] [--refresh]
      (a local PATH must lie under JARVIS_VAULTS_ROOT and not in Jarvis's data dir)
  kb schema [KEY] [--user USER]
  kb search --user USER [--mode auto|present|history|lookup] [--cloud-only]
            [--latest-only] [--limit N] [--json] [--queries-file FILE] QUERY
  kb show DOC_ID --user USER
  kb stats [--user USER]
  kb doctor [--fix]
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.db import connection

from apps.accounts.commands import user_named
from apps.core.commands import SubcommandCommand
from apps.library import doctor
from apps.library.index.embeddings import EmbeddingUnavailable
from apps.library.index.tables import index_state
from apps.library.ingest import arxiv
from apps.library.ingest.sync import SyncReport, source_sync
from apps.library.models import Document, Source
from apps.library.schema import schema_keys, schema_values
from apps.library.search import search
from apps.library.selectors import chunks_visible_to, visible_to
from apps.library.services import adding
from apps.library.services.adding import file_add
from apps.library.services.documents import document_ingest
from apps.library.services.sources import private_dir_notes, source_register
from apps.library.stats import library_stats
from apps.library.versions import timemode


class _Operator:
    """The shell user registering folders is the server's operator."""

    def has_perm(self, perm: str) -> bool:
        return True


def _source_dict(source: Source) -> dict:
    return {
        "id": source.pk,
        "name": source.name,
        "owner": source.owner.username,
        "kind": source.kind,
        "path": source.root_path,
        "sharing": source.sharing,
        "cloud": source.cloud,
    }


class Command(SubcommandCommand):
    help = "Manage and query the knowledge base."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="noun", required=True)

        sources = sub.add_parser("sources", help="register and list sources")
        ssub = sources.add_subparsers(dest="action", required=True)
        add = ssub.add_parser("add", help="register a folder under JARVIS_VAULTS_ROOT")
        add.add_argument("--owner", required=True)
        add.add_argument("--name", required=True)
        add.add_argument("--path", required=True)
        add.add_argument("--kind", choices=["vault", "inbox"], default="vault")
        add.add_argument("--share", choices=["owner", "household"], default="owner")
        add.add_argument("--share-group", action="append", default=[], dest="share_groups")
        add.add_argument("--cloud", choices=["local-only", "allowed"], default="local-only")
        add.add_argument("--private-dir", action="append", dest="private_dirs")
        add.add_argument("--unversioned-dir", action="append", default=[], dest="unversioned_dirs")
        add.add_argument("--skip-dir", action="append", default=[], dest="skip_dirs")
        add.add_argument("--projects-dir", action="append", default=[], dest="project_dirs")
        listing = ssub.add_parser("list", help="list sources")
        listing.add_argument("--json", action="store_true")

        sync = sub.add_parser("sync", help="sync folder sources")
        which = sync.add_mutually_exclusive_group()
        which.add_argument("--source", type=int)
        which.add_argument("--owner")
        sync.add_argument("--json", action="store_true")

        addf = sub.add_parser(
            "add", help="add a file under the vaults root, a web page or an arXiv paper"
        )
        addf.add_argument("--owner", required=True)
        addf.add_argument("--replace", action="store_true", help="replace a paper already there")
        addf.add_argument("--refresh", action="store_true", help="fetch a known URL again")
        addf.add_argument("path", metavar="PATH_URL_OR_ARXIV_ID")

        schema = sub.add_parser("schema", help="metadata keys with counts, or one key's values")
        schema.add_argument("key", nargs="?")
        schema.add_argument("--user")

        find = sub.add_parser("search", help="search as a user")
        find.add_argument("--user", required=True)
        find.add_argument("--mode", choices=list(timemode.MODES), default=timemode.AUTO)
        find.add_argument("--cloud-only", action="store_true")
        find.add_argument(
            "--latest-only", action="store_true", help="leave out older versions entirely"
        )
        find.add_argument("--limit", type=int, default=10)
        find.add_argument("--json", action="store_true")
        find.add_argument("--queries-file", type=Path)
        find.add_argument("query", nargs="?", default="")

        show = sub.add_parser("show", help="a document's chunks in reading order")
        show.add_argument("doc_id", type=int)
        show.add_argument("--user", required=True)

        stats = sub.add_parser("stats", help="what the library holds")
        stats.add_argument("--user")

        doctor = sub.add_parser("doctor", help="check the index; --fix applies the safe fixes")
        doctor.add_argument("--fix", action="store_true")
        doctor.add_argument("--probe-vectors", nargs=3, help=argparse.SUPPRESS)

    plain_errors = (EmbeddingUnavailable,)

    # --- sources -----------------------------------------------------------

    def sources_add(self, options: dict) -> None:
        sharing = "groups" if options["share_groups"] else options["share"]
        source = source_register(
            actor=_Operator(),
            owner=user_named(options["owner"]),
            name=options["name"],
            path=options["path"],
            kind=options["kind"],
            sharing=sharing,
            groups=options["share_groups"],
            cloud=options["cloud"],
            private_dirs=options["private_dirs"],
            unversioned_dirs=options["unversioned_dirs"],
            skip_dirs=options["skip_dirs"],
            project_dirs=options["project_dirs"],
        )
        self.stdout.write(str(source.pk))
        # On stderr: scripts read the id from stdout.
        for note in private_dir_notes(source):
            self.stderr.write(note)

    def sources_list(self, options: dict) -> None:
        rows = [_source_dict(s) for s in Source.objects.select_related("owner").order_by("id")]
        if options["json"]:
            self.stdout.write(json.dumps(rows))
            return
        if not rows:
            self.stdout.write(
                "no sources yet: `manage.py kb sources add --owner USER --name NAME --path DIR`"
            )
        for row in rows:
            self.stdout.write(
                f"{row['id']:>4}  {row['name']:<20} {row['owner']:<10} {row['kind']:<8} "
                f"{row['sharing']:<10} {row['cloud']:<10} {row['path']}"
            )

    # --- sync --------------------------------------------------------------

    def sync(self, options: dict) -> None:
        sources = Source.objects.filter(kind__in=[Source.Kind.VAULT, Source.Kind.INBOX])
        if options["source"] is not None:
            sources = sources.filter(pk=options["source"])
            if not sources.exists():
                raise CommandError(f"no folder source with id {options['source']}")
        elif options["owner"]:
            sources = sources.filter(owner=user_named(options["owner"]))
        total = SyncReport()
        for source in sources.order_by("id"):
            report = source_sync(source=source)
            total.merge(report)
            if not options["json"]:
                self.stdout.write(f"{source.name} (#{source.pk}): {self._summary(report)}")
        if options["json"]:
            data = total.as_dict()
            self.stdout.write(json.dumps(data))
        elif sources.count() != 1:
            self.stdout.write(f"total: {self._summary(total)}")
        if not options["json"]:
            for failure in total.failed:
                self.stdout.write(f"  failed: {failure['path']}: {failure['reason']}")

    @staticmethod
    def _summary(report: SyncReport) -> str:
        return (
            f"{report.seen} seen, {report.added} added, {report.updated} updated, "
            f"{report.unchanged} unchanged, {report.removed} removed, {len(report.failed)} failed; "
            f"{report.chunks_embedded} chunks embedded, {report.rows_written} rows written "
            f"in {report.seconds:.2f}s"
        )

    # --- add, search, show, stats ------------------------------------------

    def add(self, options: dict) -> None:
        owner = user_named(options["owner"])
        target = options["path"].strip()
        if arxiv.parse_arxiv_id(target) is not None and not Path(target).exists():
            document = self._add_paper(owner, target, replace=options["replace"])
        elif target.lower().startswith(("http://", "https://")) or "://" in target:
            document = self._add_page(owner, target, refresh=options["refresh"])
        else:
            document = file_add(owner=owner, path=Path(target))
        if document.status == Document.Status.FAILED:
            raise CommandError(f"{document.path}: {document.error}")
        chunks = document.chunks.count()
        self.stdout.write(f"{document.pk}  {document.title}  ({chunks} chunks, {document.status})")

    def _add_page(self, owner, url: str, *, refresh: bool) -> Document:
        added = adding.web_page_add(owner=owner, url=url, refresh=refresh)
        if added.unchanged is not None:
            self.stdout.write(f"{url} has not changed since it was fetched: no new version")
            return added.unchanged
        if added.document is None:
            known = ", ".join(f"#{d.pk}" for d in added.existing)
            raise CommandError(
                f"{url} is already in the library ({known}); pass --refresh to fetch it again"
            )
        return document_ingest(document=added.document)

    def _add_paper(self, owner, text: str, *, replace: bool) -> Document:
        outcome = adding.paper_add(owner=owner, text=text, replace=replace)
        if isinstance(outcome, adding.Added):
            known = ", ".join(f"#{d.pk} “{d.title}”" for d in outcome.existing)
            raise CommandError(f"already in the library: {known}; pass --replace to replace it")
        return document_ingest(document=outcome.document, meta=outcome.document_meta)

    def schema(self, options: dict) -> None:
        user = user_named(options["user"]) if options["user"] else None
        if options["key"]:
            values = schema_values(options["key"], user=user)
            if not values:
                raise CommandError(
                    f"no document has {options['key']!r}; see `kb schema` for the keys"
                )
            for value, count in values:
                self.stdout.write(f"{count:>6}  {value}")
            return
        for key, count in schema_keys(user=user):
            self.stdout.write(f"{count:>6}  {key}")

    def search(self, options: dict) -> None:
        user = user_named(options["user"])
        if options["queries_file"]:
            queries = [
                q.strip() for q in options["queries_file"].read_text().splitlines() if q.strip()
            ]
            for query in queries:
                self.stdout.write(json.dumps(self._search_json(user, query, options)))
            return
        if not options["query"].strip():
            raise CommandError("give a QUERY or --queries-file FILE")
        if options["json"]:
            self.stdout.write(json.dumps(self._search_json(user, options["query"], options)))
            return
        response = search(
            user=user,
            query=options["query"],
            mode=options["mode"],
            limit=options["limit"],
            cloud_only=options["cloud_only"],
            latest_only=options["latest_only"],
        )
        self.stdout.write(f"mode: {response.mode}  ({len(response.results)} results)")
        for r in response.results:
            badge = "latest" if r.is_latest else f"older version (superseded by {r.superseded_by})"
            if r.note:
                badge += f" · {r.note}"
            where = f"{r.path}" + (f" › {r.section}" if r.section else "")
            self.stdout.write(
                f"\n[{r.rank}] {r.title} — {where}\n    {r.date or 'undated'} · {badge} · "
                f"{'+'.join(r.legs)}"
            )
            self.stdout.write("    " + r.text[:300].replace("\n", "\n    "))

    def _search_json(self, user, query: str, options: dict) -> dict:
        started = time.perf_counter()
        response = search(
            user=user,
            query=query,
            mode=options["mode"],
            limit=options["limit"],
            cloud_only=options["cloud_only"],
            latest_only=options["latest_only"],
        )
        elapsed = (time.perf_counter() - started) * 1000
        fields = [
            "rank",
            "score",
            "document_id",
            "title",
            "source_id",
            "source",
            "path",
            "duplicate_paths",
            "date",
            "date_source",
            "family",
            "is_latest",
            "superseded_by",
            "note",
            "section",
            "text",
            "legs",
            "page",
            "annotation",
            "sharing",
            "cloud",
            "similarity",
            "relevant",
        ]
        data = {
            "query": query,
            "mode": response.mode,
            "results": [{k: getattr(r, k) for k in fields} for r in response.results],
        }
        if options["queries_file"]:
            data["elapsed_ms"] = round(elapsed, 2)
            data["rerank_ms"] = response.rerank_ms
        return data

    def show(self, options: dict) -> None:
        user = user_named(options["user"])
        document = visible_to(user).filter(pk=options["doc_id"]).select_related("source").first()
        if document is None:
            raise CommandError(f"no document {options['doc_id']} visible to {user.username}")
        date = document.shown_date.isoformat() if document.shown_date else "undated"
        self.stdout.write(f"{document.title}\n{document.source.name}: {document.path}")
        self.stdout.write(
            f"{document.kind} · {date} ({document.get_date_source_display()}) · "
            f"{'latest' if document.is_latest else 'older version'} · {document.status}"
        )
        if document.error:
            self.stdout.write(f"error: {document.error}")
        for warning in document.warnings:
            self.stdout.write(f"warning: {warning}")
        for chunk in chunks_visible_to(user, document):
            label = chunk.section or (f"page {chunk.page}" if chunk.page else "")
            self.stdout.write(f"\n--- #{chunk.ordinal} {label}".rstrip())
            self.stdout.write(chunk.text)

    def doctor(self, options: dict) -> None:
        if options["probe_vectors"]:
            database, generation, code_bits = options["probe_vectors"]
            self.stdout.write(doctor.probe_vectors(database, int(generation), int(code_bits)))
            return
        findings = [self._probe_in_child()]
        vectors_ok = findings[0].ok
        model = doctor.check_model()
        findings += model
        if vectors_ok:
            findings += doctor.check_index()
        findings += doctor.check_sources() + doctor.check_stuck() + doctor.check_languages()
        problems = 0
        for finding in findings:
            mark = "ok     " if finding.ok else "PROBLEM"
            self.stdout.write(f"{mark} [{finding.check}] {finding.message}")
            if finding.ok:
                continue
            rebuild_blocked = finding.check == "index" and not model[0].ok
            if options["fix"] and finding.apply is not None and not rebuild_blocked:
                self.stdout.write(f"        fixed: {finding.apply()}")
            else:
                problems += 1
                self.stdout.write(f"        fix: {finding.fix}")
        if problems:
            raise CommandError(f"{problems} problem(s) need attention")
        self.stdout.write("the library is healthy")

    def _probe_in_child(self) -> doctor.Finding:
        """Touch the vector tables in a child process first: a crash inside the
        native extension then becomes a finding instead of killing this shell."""
        state = index_state()
        database = str(connection.settings_dict["NAME"])
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        command = [
            sys.executable, manage, "kb", "doctor", "--probe-vectors",
            database, str(state.generation), str(state.code_bits),
        ]  # fmt: skip
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return doctor.Finding(
                "vectors", False, "the vector probe hung", "run `manage.py reindex`"
            )
        if result.returncode < 0:
            name = signal.Signals(-result.returncode).name
            return doctor.Finding(
                "vectors",
                False,
                f"reading the vector index crashed the checker ({name})",
                "run `manage.py reindex` to rebuild it from the stored text",
            )
        if result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
            return doctor.Finding(
                "vectors",
                False,
                f"the vector index cannot be read: {reason}",
                "run `manage.py reindex`",
            )
        return doctor.Finding("vectors", True, result.stdout.strip())

    def stats(self, options: dict) -> None:
        user = user_named(options["user"]) if options["user"] else None
        stats = library_stats(user)
        self.stdout.write(
            f"{stats['documents']} documents, {stats['chunks']} chunks "
            f"({stats['annotations']} from PDF annotations)"
        )
        self.stdout.write(f"by status: {stats['by_status']}")
        self.stdout.write(f"by kind: {stats['by_kind']}")
        if stats["categories"]:
            self.stdout.write(f"records: {stats['categories']}")
        for s in stats["sources"]:
            self.stdout.write(
                f"  #{s['id']} {s['name']} ({s['owner']}, {s['kind']}): "
                f"{s['documents']} documents, {s['latest']} latest, {s['failed']} failed"
            )
        sys.stdout.flush()
