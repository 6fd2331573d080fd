"""Retrieval quality on three corpora, each ingested into its own throwaway Jarvis.

**seed**: the external version-aware-rag benchmark (a fictional vault and 45
golden questions; see its SCORING.md). The vault is one source (`personal/`
private and unversioned, as the benchmark's config.yaml marks it; `skip/` is
skipped by Jarvis's own rule); every question runs through `kb search
--limit 5` in auto mode. Prints:

- source found@5: a question is a hit when any returned passage's path equals
  one of its expected sources exactly (duplicate copies do not count);
  should_refuse questions are not scored (denominator 39), as upstream;
- the same per category;
- for current-state questions, in auto mode (the product's default) and in
  `present` mode: whether a latest version of an expected source is in the top
  5 and every family's latest version outranks every older version of it.

**household**: our own corpus, `bench/corpora/household/` (three people, a
shared household folder, generated PDFs with highlights; see its README.md).
The people, their household membership and their sources are created with
`manage.py users add` and `kb sources add` (each person's vault local-only
with private dir `private`, shared as the corpus says), synced with `kb sync`,
and each question is searched as the person who asks it (`kb search --user`,
auto mode, the product's default). Prints:

- source found@5 overall and per category (questions with no expected source
  are scored for leaks only);
- latest-first, on questions with superseded sources: a hit whose best-ranked
  expected source is above every superseded (older) version in the top 5;
  and on how many an older version was in the top 5 at all;
- leaked passages: any passage from a document the asking person may not see
  by the corpus's own rules (another person's private folder, Hana's unshared
  vault), which includes every `forbidden_sources` entry. Must be 0;
- the misses.

**third**: a real Obsidian vault nobody here wrote, the Obsidian Tasks
plugin's documentation (`bench/corpora/tasks-docs/`, MIT, see its
PROVENANCE.md), with 50 questions in users' own words written before any
search of it. One source, every question searched in auto mode with `--limit
5`. Prints found@1 and found@5 (a hit: a returned path is one of the
question's expected notes) and the misses.

**german**: a German household's notes, a real recipe collection kept in
Markdown (skoenig/kochbuch; `bench/corpora/german/PROVENANCE.md` says which
commit and folder), with our questions written in German before any search of
it and each also in English (its `en`). The notes are not in this repository:
copy them to `bench/corpora/german/vault/` (ignored by git) or give
`--german-vault DIR`; without them the corpus is skipped with a message. One
source, one ingest; the German questions and then the English ones are
searched as in **third**, and found@1 and found@5 are printed for each
language separately (issue 23 item 7: German notes asked in German and in
English). Not part of "all".

**With a reranker** (`--reranker-url URL [--reranker-api jina|tei]
[--reranker-model ID]` for a /rerank endpoint, `--reranker-dir DIR` for a
cross-encoder ONNX export, or `--fake-reranker` for the word-overlap stand-in
of tests/fakes/rerank.py, which measures the pipeline and an HTTP round trip,
not a model's quality): the same figures, plus the reranker's added
milliseconds per search (mean and p95).

    .venv/bin/python bench/retrieval_eval.py [BENCHMARK_DIR] [--corpus seed|household|both|third|all|german]
                                             [--verbose] [--json] [reranker options]
                                             [--embedding-model NAME] [--variants NAME ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from _support import DEFAULT_BENCHMARK, ROOT, Instance, percentile

HOUSEHOLD = ROOT / "bench" / "corpora" / "household"
THIRD = ROOT / "bench" / "corpora" / "tasks-docs"
GERMAN = ROOT / "bench" / "corpora" / "german"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmark", nargs="?", type=Path, default=DEFAULT_BENCHMARK)
    parser.add_argument(
        "--corpus", choices=["seed", "household", "both", "third", "all", "german"], default="both"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="print each miss with what came back"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument(
        "--german-vault",
        type=Path,
        default=GERMAN / "vault",
        help="the German corpus's notes (see bench/corpora/german/PROVENANCE.md)",
    )
    parser.add_argument("--reranker-url", help="a /rerank endpoint's base URL")
    parser.add_argument("--reranker-api", choices=["jina", "tei"], default="jina")
    parser.add_argument("--reranker-model", default="")
    parser.add_argument("--reranker-dir", help="a cross-encoder ONNX export")
    parser.add_argument(
        "--fake-reranker",
        action="store_true",
        help="the word-overlap stand-in of tests/fakes/rerank.py (pipeline and ms, not quality)",
    )
    parser.add_argument(
        "--embedding-model",
        default="",
        help="the instance's embedding model (JARVIS_EMBEDDING_MODEL), e.g. use-multilingual-v3",
    )
    parser.add_argument(
        "--variants",
        nargs="*",
        default=[],
        choices=sorted(VARIANTS),
        help="search-time options to measure beside the shipped search (third corpus)",
    )
    args = parser.parse_args()
    VARIANTS_WANTED.extend(args.variants)
    if args.embedding_model:
        MODEL_ENV["JARVIS_EMBEDDING_MODEL"] = args.embedding_model
    global RERANKER
    fake = None
    if args.fake_reranker:
        sys.path.insert(0, str(ROOT))
        from tests.fakes.rerank import FakeRerank

        fake = FakeRerank().start()
        args.reranker_url = fake.base_url
    if args.reranker_url:
        RERANKER = ("endpoint", args.reranker_url, args.reranker_api, args.reranker_model)
    elif args.reranker_dir:
        RERANKER = ("directory", str(Path(args.reranker_dir).resolve()), "", "")

    say = (lambda *a, **k: None) if args.json else print
    report = {}
    if args.corpus in ("seed", "both", "all"):
        say("== seed benchmark (version-aware-rag) ==")
        report["seed"] = seed_eval(args.benchmark, limit=args.limit, verbose=args.verbose, say=say)
    if args.corpus in ("household", "both", "all"):
        say("\n== household corpus (bench/corpora/household) ==")
        report["household"] = household_eval(limit=args.limit, verbose=args.verbose, say=say)
    if args.corpus in ("third", "all"):
        say("\n== third corpus: a real Obsidian vault (bench/corpora/tasks-docs) ==")
        report["third"] = third_eval(limit=args.limit, verbose=args.verbose, say=say)
    if args.corpus == "german":
        say("\n== german corpus: a household's German recipe notes (bench/corpora/german) ==")
        report["german"] = german_eval(
            args.german_vault, limit=args.limit, verbose=args.verbose, say=say
        )
    if args.json:
        print(json.dumps(report, indent=2))
    if fake is not None:
        fake.stop()


RERANKER: tuple[str, str, str, str] | None = None
MODEL_ENV: dict[str, str] = {}  # --embedding-model, set in every throwaway instance


def configure_reranker(instance: Instance) -> None:
    """Choose the reranker in the throwaway instance's settings, as an admin would."""
    if RERANKER is None:
        return
    kind, where, api, model = RERANKER
    code = (
        "from apps.instance.models import Connection\n"
        "from apps.instance.selectors import instance_settings\n"
        "row = instance_settings()\n"
        f"row.reranker = {kind!r}\n"
    )
    if kind == "endpoint":
        code += (
            f"row.reranker_connection = Connection.objects.create(name='reranker', "
            f"base_url={where!r}, location='local')\n"
            f"row.reranker_api, row.reranker_model = {api!r}, {model!r}\n"
        )
    else:
        code += f"row.reranker_dir = {where!r}\n"
    code += "row.save()\n"
    instance.manage("shell", "-c", code)


def rerank_ms(answers) -> dict | None:
    values = [a.get("rerank_ms", 0.0) for a in answers]
    if RERANKER is None or not values:
        return None
    return {
        "mean": round(sum(values) / len(values), 1),
        "p95": round(percentile(values, 95), 1),
    }


# --- seed ----------------------------------------------------------------------


def seed_eval(benchmark: Path, *, limit: int, verbose: bool, say) -> dict:
    vault = (benchmark / "vault").resolve()
    if not vault.is_dir():
        raise SystemExit(f"no benchmark vault at {vault}: give BENCHMARK_DIR or --corpus household")
    questions = json.loads((benchmark / "golden_questions.json").read_text())
    instance = Instance(vaults_root=vault.parent)
    instance.env.update(MODEL_ENV)
    try:
        instance.setup()
        _choose_model(instance)
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
        say(
            f"ingested {sync['seen']} files ({sync['added']} added, {len(sync['failed'])} failed), "
            f"{sync['chunks_embedded']} chunks in {sync['seconds']:.1f}s"
        )
        configure_reranker(instance)
        queries = _queries_file(instance, "seed", [q["question"] for q in questions])
        common = ["kb", "search", "--user", "bench", "--limit", str(limit), "--queries-file"]
        auto = instance.json_lines(*common, str(queries))
        present = instance.json_lines(*common, str(queries), "--mode", "present")
    finally:
        shutil.rmtree(instance.data_dir, ignore_errors=True)

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
    say(
        f"\nsource found@{limit}: {sum(scored)}/{len(scored)} = {100 * sum(scored) / len(scored):.1f}%"
    )
    for category, values in sorted(hits.items()):
        say(
            f"  {category:<24} {sum(values)}/{len(values)} = {100 * sum(values) / len(values):.1f}%"
        )

    say(
        "\ncurrent-state questions: a latest expected source in the top "
        f"{limit}, above every older version (auto mode | present mode)"
    )
    all_ok = True
    current_state = []
    for question, answer, strict_answer in zip(questions, auto, present, strict=True):
        if question["category"] != "current_state_temporal":
            continue
        expected = question["expected_sources"]
        ok, detail = latest_outranks_older(answer["results"], expected)
        ok_present, detail_present = latest_outranks_older(strict_answer["results"], expected)
        all_ok &= ok and ok_present
        current_state.append(
            {"id": question["id"], "ok": ok, "ok_present": ok_present, "detail": detail}
        )
        say(
            f"  Q{question['id']:<3} {'yes' if ok else 'NO '} | {'yes' if ok_present else 'NO '}"
            f"  {detail if not ok else detail_present}  — {question['question']}"
        )
    say(f"  all: {'yes' if all_ok else 'no'}")

    modes = defaultdict(int)
    for answer in auto:
        modes[answer["mode"]] += 1
    timing = rerank_ms(auto)
    if timing:
        say(f"\nreranker added per search: mean {timing['mean']} ms, p95 {timing['p95']} ms")
    say(f"\nauto mode chose: {dict(modes)}")
    misclassified = []
    for question, answer in zip(questions, auto, strict=True):
        expected = {"current_state_temporal": "present", "historical_change": "history"}.get(
            question["category"]
        )
        if expected and answer["mode"] != expected:
            misclassified.append(question["id"])
            say(f"  Q{question['id']} ({question['category']}) classified {answer['mode']}")

    if misses:
        say("\nmisses:")
        for question, answer in misses:
            say(f"  Q{question['id']} [{question['category']}] {question['question']}")
            say(f"      expected {question['expected_sources']} (mode {answer['mode']})")
            if verbose:
                for r in answer["results"]:
                    say(
                        f"      got {r['rank']}. {r['path']} › {r['section']} [{'+'.join(r['legs'])}]"
                    )
    return {
        "found_at_k": _rate(scored),
        "per_category": {c: _rate(v) for c, v in sorted(hits.items())},
        "current_state_latest_first": {"all": all_ok, "questions": current_state},
        "auto_modes": dict(modes),
        "rerank_ms": timing,
        "misclassified": misclassified,
        "misses": [
            {"id": q["id"], "category": q["category"], "paths": [r["path"] for r in a["results"]]}
            for q, a in misses
        ],
    }


def latest_outranks_older(results: list[dict], expected: list[str]) -> tuple[bool, str]:
    """A latest version of an expected source is among the results, and in
    each family no older version is ranked above the family's latest."""
    if not any(r["is_latest"] and r["path"] in expected for r in results):
        return False, "no latest version of an expected source"
    first_latest: dict[str, int] = {}
    for rank, r in enumerate(results, start=1):
        if r["is_latest"]:
            first_latest.setdefault(r["family"], rank)
    for rank, r in enumerate(results, start=1):
        if not r["is_latest"] and first_latest.get(r["family"], rank + 1) > rank:
            return False, f"older version {r['path']} at {rank} above its latest"
    older = sum(not r["is_latest"] for r in results)
    return True, f"latest first ({older} older passages below their latest)"


# --- household -----------------------------------------------------------------


def load_household_corpus():
    """bench/corpora/household/corpus.py, which is not a package."""
    spec = importlib.util.spec_from_file_location("household_corpus", HOUSEHOLD / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def household_eval(*, limit: int, verbose: bool, say) -> dict:
    corpus = load_household_corpus()
    questions = corpus.questions()
    answers = household_answers(corpus, questions, limit=limit, say=say)
    return household_score(corpus, questions, answers, limit=limit, verbose=verbose, say=say)


def household_answers(corpus, questions: list[dict], *, limit: int, say) -> dict[str, dict]:
    """Lay the corpus out, create its people and sources, sync, and search each
    question as the person who asks it; returns `kb search` answers by id."""
    workdir = Path(tempfile.mkdtemp(prefix="jarvis-household-"))
    vaults = corpus.materialise(workdir / "vaults")
    instance = Instance(vaults_root=vaults)
    instance.env.update(MODEL_ENV)
    try:
        instance.manage("migrate", "--noinput", "-v", "0")
        _choose_model(instance)
        for person in corpus.PEOPLE:
            instance.add_user(person)  # household members, as `users add` makes them
        for folder in corpus.FOLDERS:
            instance.manage(
                "kb",
                "sources",
                "add",
                "--owner",
                folder.owner,
                "--name",
                folder.name,
                "--path",
                str(vaults / folder.name),
                "--share",
                folder.sharing,
                "--cloud",
                "local-only",
                "--private-dir",
                corpus.PRIVATE_DIR,
            )
        sync = json.loads(instance.manage("kb", "sync", "--json"))
        say(
            f"ingested {sync['seen']} files ({sync['added']} added, {len(sync['failed'])} failed), "
            f"{sync['chunks_embedded']} chunks in {sync['seconds']:.1f}s"
        )
        configure_reranker(instance)
        answers = {}
        for person in corpus.PEOPLE:
            asked = [q for q in questions if q["user"] == person]
            queries = _queries_file(instance, person, [q["question"] for q in asked])
            lines = instance.json_lines(
                "kb",
                "search",
                "--user",
                person,
                "--limit",
                str(limit),
                "--queries-file",
                str(queries),
            )
            answers.update({q["id"]: a for q, a in zip(asked, lines, strict=True)})
    finally:
        shutil.rmtree(instance.data_dir, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
    return answers


def household_score(
    corpus, questions: list[dict], answers: dict[str, dict], *, limit: int, verbose: bool, say
) -> dict:
    hits: dict[str, list[bool]] = defaultdict(list)
    misses, late, leaks, rows = [], [], [], []
    older_in_top = 0
    latest_first = []
    for question in questions:
        answer = answers[question["id"]]
        ranked = [_corpus_path(r) for r in answer["results"]]
        first_rank = {}
        for rank, path in enumerate(ranked, start=1):
            first_rank.setdefault(path, rank)
        expected = question["expected_sources"]
        hit = any(p in first_rank for p in expected) if expected else None
        if expected:
            hits[question["category"]].append(hit)
            if not hit:
                misses.append((question, answer))
        ok = None
        if question["superseded_sources"]:
            best = min((first_rank[p] for p in expected if p in first_rank), default=None)
            older = [first_rank[p] for p in question["superseded_sources"] if p in first_rank]
            older_in_top += bool(older)
            ok = best is not None and all(best < rank for rank in older)
            latest_first.append(ok)
            if not ok:
                late.append((question, answer, best, older))
        for rank, (path, result) in enumerate(zip(ranked, answer["results"], strict=True), 1):
            if not corpus.may_see(question["user"], path):
                leaks.append(
                    {
                        "id": question["id"],
                        "user": question["user"],
                        "rank": rank,
                        "path": path,
                        "forbidden": path in question["forbidden_sources"],
                        "section": result["section"],
                    }
                )
        rows.append(
            {
                "id": question["id"],
                "hit": hit,
                "latest_first": ok,
                "mode": answer["mode"],
                "paths": ranked,
            }
        )

    scored = [h for values in hits.values() for h in values]
    timing = rerank_ms(list(answers.values()))
    if timing:
        say(f"\nreranker added per search: mean {timing['mean']} ms, p95 {timing['p95']} ms")
    say(
        f"\nsource found@{limit}: {sum(scored)}/{len(scored)} = {100 * sum(scored) / len(scored):.1f}%"
        f"  ({len(questions) - len(scored)} questions scored for leaks only)"
    )
    for category, values in sorted(hits.items()):
        say(
            f"  {category:<24} {sum(values)}/{len(values)} = {100 * sum(values) / len(values):.1f}%"
        )

    say(
        f"\nlatest-first (questions with superseded versions): {sum(latest_first)}/{len(latest_first)}"
        f" = {100 * sum(latest_first) / len(latest_first):.1f}%;"
        f" an older version in the top {limit} on {older_in_top}"
    )
    for question, answer, best, older in late:
        where = f"latest at {best}" if best else f"latest not in top {limit}"
        say(
            f"  {question['id']} {where}, older at {older or '-'} (mode {answer['mode']}) — {question['question']}"
        )

    say(f"\nleaked passages (must be 0): {len(leaks)}")
    for leak in leaks:
        say(
            f"  {leak['id']} as {leak['user']}: rank {leak['rank']} {leak['path']}"
            f"{' (listed as forbidden)' if leak['forbidden'] else ''}"
        )

    if misses:
        say("\nmisses:")
        for question, answer in misses:
            say(
                f"  {question['id']} [{question['category']}] {question['user']}: {question['question']}"
            )
            say(f"      expected {question['expected_sources']} (mode {answer['mode']})")
            if verbose:
                for r in answer["results"]:
                    say(
                        f"      got {r['rank']}. {_corpus_path(r)} › {r['section']} [{'+'.join(r['legs'])}]"
                    )
    return {
        "questions": len(questions),
        "found_at_k": _rate(scored),
        "per_category": {c: _rate(v) for c, v in sorted(hits.items())},
        "latest_first": {
            **_rate(latest_first),
            "older_in_top_k": older_in_top,
            "failures": [q["id"] for q, *_ in late],
        },
        "leaked_passages": len(leaks),
        "rerank_ms": timing,
        "leaks": leaks,
        "misses": [q["id"] for q, _ in misses],
        "per_question": rows,
    }


def _corpus_path(result: dict) -> str:
    # Sources are named after their folder under the corpus root.
    return f"{result['source']}/{result['path']}"


# --- third: a real vault ---------------------------------------------------------


def third_eval(*, limit: int, verbose: bool, say) -> dict:
    questions = json.loads((THIRD / "questions.json").read_text())
    (answers,), variants = real_vault_answers(
        THIRD / "vault",
        "tasks",
        [("third", [q["question"] for q in questions])],
        limit=limit,
        say=say,
        with_variants=True,
    )
    return real_vault_score(
        questions, answers, variants, field="question", limit=limit, verbose=verbose, say=say
    )


def german_eval(vault: Path, *, limit: int, verbose: bool, say) -> dict:
    """The German questions and their English versions against the same
    German notes, on one ingest; scored as the third corpus, each language
    on its own."""
    if not any(vault.rglob("*.md")):
        say(
            f"skipped: no notes in {vault} (bench/corpora/german/PROVENANCE.md says where they are)"
        )
        return {}
    questions = json.loads((GERMAN / "questions.json").read_text())
    (german, english), _ = real_vault_answers(
        vault,
        "kochbuch",
        [
            ("german-de", [q["question"] for q in questions]),
            ("german-en", [q["en"] for q in questions]),
        ],
        limit=limit,
        say=say,
    )
    report = {}
    for key, label, field, answers in (
        ("de", "German questions (de → de)", "question", german),
        ("en", "the same questions in English (en → de)", "en", english),
    ):
        say(f"\n-- {label} --")
        report[key] = real_vault_score(
            questions, answers, {}, field=field, limit=limit, verbose=verbose, say=say
        )
    return report


def real_vault_answers(
    vault: Path,
    name: str,
    query_sets: list[tuple[str, list[str]]],
    *,
    limit: int,
    say,
    with_variants: bool = False,
) -> tuple[list[list[dict]], dict[str, list[dict]]]:
    """Ingest one vault as one source and search each set of questions in
    auto mode; with_variants, the wanted --variants on the first set too."""
    vault = vault.resolve()
    instance = Instance(vaults_root=vault.parent)
    instance.env.update(MODEL_ENV)
    try:
        instance.setup()
        _choose_model(instance)
        instance.manage(
            "kb", "sources", "add", "--owner", "bench", "--name", name, "--path", str(vault)
        )
        sync = json.loads(instance.manage("kb", "sync", "--json"))
        say(
            f"ingested {sync['seen']} files ({sync['added']} added, {len(sync['failed'])} failed), "
            f"{sync['chunks_embedded']} chunks in {sync['seconds']:.1f}s"
        )
        configure_reranker(instance)
        sets, first = [], None
        for set_name, texts in query_sets:
            queries = _queries_file(instance, set_name, texts)
            first = first or queries
            sets.append(
                instance.json_lines(
                    "kb",
                    "search",
                    "--user",
                    "bench",
                    "--limit",
                    str(limit),
                    "--queries-file",
                    str(queries),
                )
            )
        variants = {
            variant: variant_answers(instance, "bench", first, limit, patch)
            for variant, patch in VARIANTS.items()
            if with_variants and variant in VARIANTS_WANTED
        }
    finally:
        shutil.rmtree(instance.data_dir, ignore_errors=True)
    return sets, variants


def real_vault_score(
    questions: list[dict],
    answers: list[dict],
    variants: dict[str, list[dict]],
    *,
    field: str,
    limit: int,
    verbose: bool,
    say,
) -> dict:
    """found@1 and found@k (a returned path is one of the question's expected
    notes), the variants' figures, and the misses; `field` is the question's
    text that was searched."""
    at_1, at_k, misses = [], [], []
    for question, answer in zip(questions, answers, strict=True):
        paths = [r["path"] for r in answer["results"]]
        expected = question["expected_sources"]
        at_1.append(bool(paths) and paths[0] in expected)
        at_k.append(any(p in expected for p in paths))
        if not at_1[-1]:
            misses.append((question, answer, at_k[-1]))
    say(f"\nfound@1: {sum(at_1)}/{len(at_1)} = {100 * sum(at_1) / len(at_1):.1f}%")
    say(f"found@{limit}: {sum(at_k)}/{len(at_k)} = {100 * sum(at_k) / len(at_k):.1f}%")
    for name, lines in variants.items():
        first = sum(
            bool(a["results"]) and a["results"][0]["path"] in q["expected_sources"]
            for q, a in zip(questions, lines, strict=True)
        )
        top = sum(
            any(r["path"] in q["expected_sources"] for r in a["results"])
            for q, a in zip(questions, lines, strict=True)
        )
        say(
            f"  variant {name}: found@1 {first}/{len(questions)}, found@{limit} {top}/{len(questions)}"
        )
    timing = rerank_ms(answers)
    if timing:
        say(f"\nreranker added per search: mean {timing['mean']} ms, p95 {timing['p95']} ms")
    if misses:
        say("\nnot first (* = not in the top 5 either):")
        for question, answer, found in misses:
            say(f"  {question['id']}{'' if found else ' *'} {question[field]}")
            say(f"      expected {question['expected_sources']}")
            if verbose:
                for r in answer["results"]:
                    say(
                        f"      got {r['rank']}. {r['path']} › {r['section']} [{'+'.join(r['legs'])}]"
                    )
    return {
        "found_at_1": _rate(at_1),
        "found_at_k": _rate(at_k),
        "rerank_ms": timing,
        "misses": [
            {"id": q["id"], "in_top_k": found, "paths": [r["path"] for r in a["results"]]}
            for q, a, found in misses
        ],
    }


# --- shared --------------------------------------------------------------------

# Search-time options measured beside the shipped search on the same ingest
# (`--variants NAME ...`): Python run in the throwaway instance before its
# searches, patching the search modules.
VARIANTS = {
    "no-typo-fallback": "legs.with_corrections = lambda terms: terms",
    "title-weight-8": "legs.WEIGHTS = (8.0, 2.0, 2.0, 2.0, 1.0)",
    "headings-weight-4": "legs.WEIGHTS = (4.0, 4.0, 2.0, 2.0, 1.0)",
    "even-weights": "legs.WEIGHTS = (1.0, 1.0, 1.0, 1.0, 1.0)",
    # documents first (search/fusion.py) off, and each of its parts changed
    "no-documents-first": "engine.documents_first = lambda fused, *args: fused",
    "no-about-ranking": "fusion.DOC_WEIGHTS['about'] = 0.0",
    "no-passages-ranking": "fusion.DOC_WEIGHTS['passages'] = 0.0",
    "keyword-docs-weight-1": "fusion.DOC_WEIGHTS['keyword'] = 1.0",
    "doc-rrf-k-10": "fusion.DOC_RRF_K = 10",
}
VARIANTS_WANTED: list[str] = []


def variant_answers(instance: Instance, user: str, queries: Path, limit: int, patch: str):
    code = (
        "import json\n"
        "from django.contrib.auth import get_user_model\n"
        "User = get_user_model()\n"
        "from apps.library.search import engine, fusion, legs, search\n"
        f"{patch}\n"
        f"user = User.objects.get(username={user!r})\n"
        f"for q in open({str(queries)!r}).read().splitlines():\n"
        "    if q.strip():\n"
        f"        r = search(user=user, query=q.strip(), limit={limit})\n"
        "        print(json.dumps({'mode': r.mode, 'results': [x.as_dict() for x in r.results]}))\n"
    )
    lines = instance.manage("shell", "-c", code).splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def _choose_model(instance: Instance) -> None:
    """A fresh instance's index is made with the default model by its
    migrations; with --embedding-model it is switched (it is empty, so this
    re-embeds nothing) before anything is synced."""
    if MODEL_ENV:
        instance.manage("reindex")


def _queries_file(instance: Instance, name: str, questions: list[str]) -> Path:
    path = instance.data_dir / f"queries-{name}.txt"
    path.write_text("\n".join(questions) + "\n")
    return path


def _rate(values: list[bool]) -> dict:
    return {
        "hits": sum(values),
        "scored": len(values),
        "rate": round(sum(values) / len(values), 4) if values else None,
    }


if __name__ == "__main__":
    main()
