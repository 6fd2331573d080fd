"""Retrieval on the external version-aware-rag benchmark (a fictional vault and
45 golden questions; see its SCORING.md).

Ingests the vault into a throwaway Jarvis (`personal/` private and unversioned,
as the benchmark's config.yaml marks it; `skip/` is skipped by Jarvis's own
rule), runs every question through `kb search --limit 5` in auto mode, and
prints:

- source found@5: a question is a hit when any returned passage's path equals
  one of its expected sources exactly (duplicate copies do not count);
  should_refuse questions are not scored (denominator 39), as upstream;
- the same per category;
- for current-state questions, in `present` mode: whether the latest version of
  every family outranks every older version of it.

    .venv/bin/python bench/retrieval_eval.py [BENCHMARK_DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from _support import DEFAULT_BENCHMARK, Instance


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmark", nargs="?", type=Path, default=DEFAULT_BENCHMARK)
    parser.add_argument(
        "--verbose", action="store_true", help="print each miss with what came back"
    )
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()

    vault = (args.benchmark / "vault").resolve()
    questions = json.loads((args.benchmark / "golden_questions.json").read_text())
    instance = Instance(vaults_root=vault.parent)
    instance.setup()
    instance.manage(
        "kb",
        "sources",
        "add",
        "--owner",
        "bench",
        "--name",
        "vault",
        "--path",
        str(vault),
        "--private-dir",
        "personal",
        "--unversioned-dir",
        "personal",
    )
    sync = json.loads(instance.manage("kb", "sync", "--json"))
    print(
        f"ingested {sync['seen']} files ({sync['added']} added, {len(sync['failed'])} failed), "
        f"{sync['chunks_embedded']} chunks in {sync['seconds']:.1f}s"
    )

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(q["question"] for q in questions) + "\n")
        queries = handle.name
    common = [
        "kb",
        "search",
        "--user",
        "bench",
        "--limit",
        str(args.limit),
        "--queries-file",
        queries,
    ]
    auto = instance.json_lines(*common)
    present = instance.json_lines(*common, "--mode", "present")

    hits: dict[str, list[bool]] = defaultdict(list)
    misses = []
    for question, answer in zip(questions, auto, strict=True):
        if question["category"] == "should_refuse":
            continue
        paths = [r["path"] for r in answer["results"]]
        hit = any(p in question["expected_sources"] for p in paths)
        hits[question["category"]].append(hit)
        if not hit:
            misses.append((question, answer))

    scored = [h for values in hits.values() for h in values]
    print(
        f"\nsource found@{args.limit}: {sum(scored)}/{len(scored)} = {100 * sum(scored) / len(scored):.1f}%"
    )
    for category, values in sorted(hits.items()):
        print(
            f"  {category:<24} {sum(values)}/{len(values)} = {100 * sum(values) / len(values):.1f}%"
        )

    print("\ncurrent-state questions, present mode: latest outranks every older version")
    all_ok = True
    for question, answer in zip(questions, present, strict=True):
        if question["category"] != "current_state_temporal":
            continue
        ok, detail = latest_outranks_older(answer["results"])
        all_ok &= ok
        print(f"  Q{question['id']:<3} {'yes' if ok else 'NO '} {detail}  — {question['question']}")
    print(f"  all: {'yes' if all_ok else 'no'}")

    modes = defaultdict(int)
    for answer in auto:
        modes[answer["mode"]] += 1
    print(f"\nauto mode chose: {dict(modes)}")
    for question, answer in zip(questions, auto, strict=True):
        expected = {"current_state_temporal": "present", "historical_change": "history"}.get(
            question["category"]
        )
        if expected and answer["mode"] != expected:
            print(f"  Q{question['id']} ({question['category']}) classified {answer['mode']}")

    if misses:
        print("\nmisses:")
        for question, answer in misses:
            print(f"  Q{question['id']} [{question['category']}] {question['question']}")
            print(f"      expected {question['expected_sources']} (mode {answer['mode']})")
            if args.verbose:
                for r in answer["results"]:
                    print(
                        f"      got {r['rank']}. {r['path']} › {r['section']} [{'+'.join(r['legs'])}]"
                    )


def latest_outranks_older(results: list[dict]) -> tuple[bool, str]:
    """In each family present in the results, no older version is ranked above
    (or, in present mode, at all alongside) the family's latest version."""
    older = [r for r in results if not r["is_latest"]]
    if older:
        return False, f"older version returned: {older[0]['path']}"
    families = {r["family"] for r in results}
    return True, f"{len(results)} passages from {len(families)} families, all latest"


if __name__ == "__main__":
    main()
