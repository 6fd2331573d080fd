"""Real files nobody here wrote, through Jarvis's real upload parse path.

Every file under DIRECTORY (any depth) is typed by its bytes as an upload is
(`filetypes.sniff`), then parsed in a sandbox child exactly as the worker
parses an upload: the quick lane first, and the long lane (OCR, full limits)
for a file the quick lane hands on. Each file ends as one of

- **ready**: parsed, with N passages;
- **failed**: refused with a reason (at the door by `sniff`, or by a parser),
  grouped by reason with the numbers and quoted names folded, so one cause
  is one line;
- **crashed**: the parser child died (ParserCrashed);
- **hung**: over the long lane's wall-clock limit.

Beside that, for the PDFs, PyMuPDF's own count: how many it opens and finds
any text in with `page.get_text()` (in a separate process with a time limit,
since these are hostile files too). Nothing is fetched at run time: point it
at a folder of files (the vendored `bench/corpora/files/`, or the large
corpora fetched from the projects PROVENANCE.md names).

    .venv/bin/python bench/file_corpus.py bench/corpora/files
    .venv/bin/python bench/file_corpus.py /tmp/corpus [--long-seconds 120]
        [--ocr-pages 100] [--json out.json] [--compare before.json] [--examples 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from _support import django_in

SKIPPED_NAMES = {"MANIFEST.tsv", "MISSING.txt", "PROVENANCE.md", "README.md", ".gitattributes"}
PYMUPDF_SECONDS = 30
_OFFICE = (
    ".docx", ".docm", ".dotx", ".dotm", ".xlsx", ".xlsm", ".xlsb", ".xltx", ".xltm",
    ".pptx", ".pptm", ".ppsx", ".potx", ".potm", ".thmx", ".ooxml",
    ".doc", ".xls", ".ppt", ".odt", ".ods", ".odp", ".rtf",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory", type=Path)
    parser.add_argument(
        "--long-seconds",
        type=int,
        default=None,
        help="the long lane's wall-clock limit (JARVIS_PARSE_TIMEOUT_SECONDS; default 300)",
    )
    parser.add_argument(
        "--ocr-pages", type=int, default=None, help="scanned pages read by OCR per PDF"
    )
    parser.add_argument("--json", type=Path, help="write every file's outcome here")
    parser.add_argument("--compare", type=Path, help="a --json file of an earlier run")
    parser.add_argument("--examples", type=int, default=2, help="files named per reason")
    args = parser.parse_args()

    files = sorted(
        path
        for path in args.directory.rglob("*")
        if path.is_file() and path.name not in SKIPPED_NAMES
    )
    env = {}
    if args.long_seconds:
        env["JARVIS_PARSE_TIMEOUT_SECONDS"] = str(args.long_seconds)
        env["JARVIS_PARSE_CPU_SECONDS"] = str(args.long_seconds)
    if args.ocr_pages is not None:
        env["JARVIS_OCR_MAX_PAGES"] = str(args.ocr_pages)
    django_in(Path(tempfile.mkdtemp(prefix="jarvis-bench-files-")), **env)

    from apps.core.sandbox import sandbox_warm_up

    sandbox_warm_up()
    started = time.perf_counter()
    outcomes: dict[str, dict] = {}
    for number, path in enumerate(files, start=1):
        name = str(path.relative_to(args.directory))
        outcomes[name] = parse_file(path)
        outcomes[name]["group"] = group_of(path, outcomes[name].get("kind", ""))
        if number % 50 == 0:
            print(f"… {number}/{len(files)} files, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
    wall = time.perf_counter() - started
    pdfs = [
        path for path in files if outcomes[str(path.relative_to(args.directory))]["group"] == "pdf"
    ]
    baseline = pymupdf_counts(pdfs)

    report(outcomes, baseline, wall=wall, examples=args.examples)
    if args.compare:
        compare(json.loads(args.compare.read_text()), outcomes)
    if args.json:
        args.json.write_text(json.dumps(outcomes, indent=1, sort_keys=True))


def parse_file(path: Path) -> dict:
    """One file as an upload: sniffed, then the quick lane, then the long lane."""
    from django.conf import settings

    from apps.library.formats import kind_for_upload
    from apps.library.ingest.filetypes import UnsupportedFile, sniff
    from apps.library.ingest.isolated import (
        LONG,
        QUICK,
        ParseFailed,
        ParseItem,
        ParserCrashed,
        ParseTooSlow,
        parse_one,
    )
    from apps.library.ingest.parsing.types import ParseOptions, UnreadableDocument

    data = path.read_bytes()
    started = time.perf_counter()
    try:
        sniffed = sniff(data, path.name)
    except UnsupportedFile as exc:
        return {"outcome": "failed", "reason": str(exc), "at": "sniff", "seconds": 0.0}
    kind = kind_for_upload(sniffed, path.name)
    item = ParseItem(
        data=data,
        kind=kind,
        filename=path.name,
        options=ParseOptions(ocr_max_pages=settings.OCR_MAX_PAGES),
    )
    result: dict = {"kind": kind}
    try:
        try:
            parsed = parse_one(item, lane=QUICK)
            result["lane"] = QUICK
        except ParseTooSlow as slow:
            result["lane"] = LONG
            parsed = parse_one(item, lane=LONG, ocr_pages=slow.ocr_pages)
    except ParserCrashed as exc:
        result.update(outcome="crashed", reason=str(exc))
    except ParseFailed as exc:
        hung = str(exc).startswith("parsing took longer than")
        result.update(outcome="hung" if hung else "failed", reason=str(exc))
    except UnreadableDocument as exc:
        result.update(outcome="failed", reason=str(exc))
    else:
        result.update(
            outcome="ready",
            passages=len(parsed.chunks),
            ocr_pages=len(parsed.ocr_pages),
            warnings=parsed.warnings[:5],
        )
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def group_of(path: Path, kind: str) -> str:
    suffix = path.suffix.lower()
    if kind in ("pdf", "paper") or suffix == ".pdf":
        return "pdf"
    if suffix in _OFFICE or kind in ("docx", "pptx", "xlsx", "odt", "ods", "rtf"):
        return "office"
    return "other"


_NUMBERS = re.compile(r"\d[\d,.]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”")


def reason_key(reason: str) -> str:
    """One line per cause: numbers and quoted names folded, long tails cut."""
    folded = _QUOTED.sub("'…'", _NUMBERS.sub("N", reason))
    return folded if len(folded) <= 110 else folded[:107] + "…"


def pymupdf_counts(pdfs: list[Path]) -> dict[str, int]:
    """How many of `pdfs` PyMuPDF alone opens and finds text in, each in a
    worker process with a time limit (a hang or crash counts as neither)."""
    counts = Counter()
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
    for path in pdfs:
        future = pool.submit(_pymupdf_reads, str(path))
        try:
            opened, text = future.result(timeout=PYMUPDF_SECONDS)
        except FutureTimeout:
            counts["hung"] += 1
            _kill(pool)
            pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
            continue
        except Exception:  # the worker died on this file; a fresh one for the next
            counts["crashed"] += 1
            _kill(pool)
            pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
            continue
        counts["opened"] += opened
        counts["with text"] += text
    _kill(pool)
    counts["files"] = len(pdfs)
    return dict(counts)


def _kill(pool: ProcessPoolExecutor) -> None:
    for process in list(getattr(pool, "_processes", {}).values()):
        process.kill()
    pool.shutdown(wait=False, cancel_futures=True)


def _pymupdf_reads(path: str) -> tuple[bool, bool]:
    import pymupdf

    try:
        with pymupdf.open(path) as doc:
            if doc.needs_pass:
                return True, False
            # A page that raises is a page without text, as for any reader.
            return True, any(_page_has_text(page) for page in doc)
    except Exception:  # not openable is a count here, not an error
        return False, False


def _page_has_text(page) -> bool:
    try:
        return bool(page.get_text().strip())
    except Exception:  # a broken page counts as one without text
        return False


def report(
    outcomes: dict[str, dict], baseline: dict[str, int], *, wall: float, examples: int
) -> None:
    by_group: dict[str, Counter] = defaultdict(Counter)
    reasons: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for name, outcome in outcomes.items():
        by_group[outcome["group"]][outcome["outcome"]] += 1
        if outcome["outcome"] != "ready":
            reasons[(outcome["group"], outcome["outcome"], reason_key(outcome["reason"]))].append(
                name
            )
    print(f"{len(outcomes)} files in {wall:.0f} s")
    for group in sorted(by_group):
        counts = by_group[group]
        total = sum(counts.values())
        print(
            f"\n== {group}: {total} files: ready {counts['ready']}, failed {counts['failed']}, "
            f"crashed {counts['crashed']}, hung {counts['hung']}"
        )
        if group == "pdf" and baseline:
            print(
                f"   PyMuPDF alone: opens {baseline.get('opened', 0)}, finds text in "
                f"{baseline.get('with text', 0)} (hung {baseline.get('hung', 0)}, "
                f"crashed {baseline.get('crashed', 0)})"
            )
        rows = sorted(
            ((key, names) for key, names in reasons.items() if key[0] == group),
            key=lambda item: (-len(item[1]), item[0]),
        )
        for (_, outcome, reason), names in rows:
            shown = ", ".join(names[:examples]) + (", …" if len(names) > examples else "")
            print(f"   {len(names):4d} {outcome}: {reason}  [{shown}]")
    slowest = sorted(outcomes.items(), key=lambda item: -item[1]["seconds"])[:5]
    print("\nslowest: " + ", ".join(f"{name} {o['seconds']:.1f} s" for name, o in slowest))


def compare(before: dict[str, dict], after: dict[str, dict]) -> None:
    """Files whose outcome (or reason) changed since the earlier run."""
    changed = []
    for name in sorted(set(before) & set(after)):
        old, new = before[name], after[name]
        if (old["outcome"], old.get("reason")) != (new["outcome"], new.get("reason")):
            changed.append((name, old, new))
    print(f"\n{len(changed)} files changed since the earlier run:")
    for name, old, new in changed:
        print(f"   {name}: {_said(old)}  ->  {_said(new)}")


def _said(outcome: dict) -> str:
    if outcome["outcome"] == "ready":
        return f"ready ({outcome.get('passages', 0)} passages)"
    return f"{outcome['outcome']}: {outcome.get('reason', '')[:100]}"


if __name__ == "__main__":
    main()
