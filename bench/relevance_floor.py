"""Calibrating the relevance floor (apps/library/search/relevance.py).

Ingests both retrieval corpora (the seed benchmark's vault and
bench/corpora/household, as bench/retrieval_eval.py does) and asks, through
`kb search --json`:

- every golden question with an expected source: the best-ranked passage of
  an expected source, whether a keyword/record leg found it, and its cosine
  similarity to the question (the floor must let these through);
- nonsense strings and general-knowledge questions the notes do not answer:
  the highest similarity among their passages and whether any had a keyword
  hit (the floor should say "nothing relevant" for the nonsense).

Prints the distributions and, for each candidate floor, how many expected
passages would pass and how many nonsense/general questions would still get a
relevant passage.

    .venv/bin/python bench/relevance_floor.py [BENCHMARK_DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from _support import DEFAULT_BENCHMARK, Instance, percentile
from retrieval_eval import _corpus_path, _queries_file, load_household_corpus

NONSENSE = [
    "qwxzv",
    "zzkrptl vbnm",
    "asdfgh jkl",
    "xqzj wvpk",
    "blorf snizzle",
    "lorem ipsum dolor",
    "kjhgf",
    "ploof",
]
GENERAL = [
    "What is the capital of France?",
    "How many legs does a spider have?",
    "Who wrote Hamlet?",
    "What is the boiling point of water in Fahrenheit?",
    "Explain photosynthesis in one sentence.",
    "What is 17 times 23?",
]
FLOORS = [0.25, 0.30, 0.35, 0.40, 0.45, 0.50]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("benchmark", nargs="?", type=Path, default=DEFAULT_BENCHMARK)
    args = parser.parse_args()
    expected, probes = [], {"nonsense": [], "general": []}
    for name, answers, golden in (seed(args.benchmark), household()):
        for question, answer in zip(golden, answers[: len(golden)], strict=True):
            best = _best_expected(question, answer, name)
            if best is not None:
                expected.append(best)
        extra = answers[len(golden) :]
        probes["nonsense"] += extra[: len(NONSENSE)]
        probes["general"] += extra[len(NONSENSE) :]
    show(expected, probes)


def seed(benchmark: Path):
    vault = (benchmark / "vault").resolve()
    golden = [
        q
        for q in json.loads((benchmark / "golden_questions.json").read_text())
        if q.get("expected_sources")
    ]
    instance = Instance(vaults_root=vault.parent)
    try:
        instance.setup()
        instance.manage(
            "kb", "sources", "add", "--owner", "bench", "--name", "vault", "--path", str(vault),
            "--private-dir", "personal", "--unversioned-dir", "personal",
        )  # fmt: skip
        instance.manage("kb", "sync", "--json")
        questions = [q["question"] for q in golden] + NONSENSE + GENERAL
        queries = _queries_file(instance, "floor", questions)
        answers = instance.json_lines(
            "kb", "search", "--user", "bench", "--limit", "5", "--queries-file", str(queries)
        )
    finally:
        shutil.rmtree(instance.data_dir, ignore_errors=True)
    return "seed", answers, golden


def household():
    corpus = load_household_corpus()
    person = corpus.PEOPLE[0]
    golden = [q for q in corpus.questions() if q["expected_sources"] and q["user"] == person]
    workdir = Path(tempfile.mkdtemp(prefix="jarvis-floor-"))
    vaults = corpus.materialise(workdir / "vaults")
    instance = Instance(vaults_root=vaults)
    try:
        instance.manage("migrate", "--noinput", "-v", "0")
        for name in corpus.PEOPLE:
            instance.add_user(name)
        for folder in corpus.FOLDERS:
            instance.manage(
                "kb", "sources", "add", "--owner", folder.owner, "--name", folder.name,
                "--path", str(vaults / folder.name), "--share", folder.sharing,
                "--cloud", "local-only", "--private-dir", corpus.PRIVATE_DIR,
            )  # fmt: skip
        instance.manage("kb", "sync", "--json")
        questions = [q["question"] for q in golden] + NONSENSE + GENERAL
        queries = _queries_file(instance, "floor", questions)
        answers = instance.json_lines(
            "kb", "search", "--user", person, "--limit", "5", "--queries-file", str(queries)
        )
    finally:
        shutil.rmtree(instance.data_dir, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
    return "household", answers, golden


def _best_expected(question: dict, answer: dict, corpus: str) -> dict | None:
    for result in answer["results"]:
        path = result["path"] if corpus == "seed" else _corpus_path(result)
        if path in question["expected_sources"]:
            return result
    return None


def _matched(result: dict) -> bool:
    return bool({"keyword", "record"} & set(result["legs"]))


def show(expected: list[dict], probes: dict[str, list[dict]]) -> None:
    sims = [r["similarity"] for r in expected if r["similarity"] is not None]
    by_words = sum(_matched(r) for r in expected)
    print(f"expected passages found in the top 5: {len(expected)}")
    print(f"  found by a keyword/record leg: {by_words}")
    only_vector = [r["similarity"] for r in expected if not _matched(r)]
    print(
        f"  similarity p5 / p25 / p50: {percentile(sims, 5):.3f} / "
        f"{percentile(sims, 25):.3f} / {percentile(sims, 50):.3f}"
    )
    print(f"  similarity of those found by the vector leg alone: {sorted(only_vector)}")
    for kind, answers in probes.items():
        tops = [max((r["similarity"] or 0.0 for r in a["results"]), default=0.0) for a in answers]
        keyword = sum(any(_matched(r) for r in a["results"]) for a in answers)
        print(
            f"{kind}: {len(answers)} questions, max similarity {max(tops):.3f}, "
            f"median of each question's best {percentile(tops, 50):.3f}; "
            f"{keyword} with a keyword/record hit"
        )
    print("\nfloor  expected passing  nonsense with a relevant passage  general with one")
    for floor in FLOORS:
        passing = sum(_matched(r) or (r["similarity"] or 0) >= floor for r in expected)
        counts = [
            sum(
                any(_matched(r) or (r["similarity"] or 0) >= floor for r in a["results"])
                for a in probes[kind]
            )
            for kind in ("nonsense", "general")
        ]
        print(
            f"{floor:.2f}   {passing}/{len(expected)}            "
            f"{counts[0]}/{len(probes['nonsense'])}                              "
            f"{counts[1]}/{len(probes['general'])}"
        )


if __name__ == "__main__":
    main()
