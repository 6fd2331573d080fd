"""The project registry on the shared benchmark's project questions.

The version-aware-rag vault (default `../shared/benchmarks/version-aware-rag`)
is one cloud-allowed source in a throwaway Jarvis, with `projects/` marked as
its projects folder and `personal/` private (as the benchmark's config.yaml
marks it). `manage.py projects refresh` builds the registry (no model is
configured, so by frontmatter and rules alone). Then the MCP server is started
the way an app starts it (`manage.py mcp --user bench` over stdio, the SDK's
client) and every `status_aggregation` question is answered from it:

- each project the question's key facts name is asked with
  `get_project_status(name)`, and its status must be the one the question's
  expected answer gives (ABANDONED is the registry's "dropped");
- a "which projects are <status>?" question is also asked with
  `list_projects(status)`, which must return exactly the expected projects.

    .venv/bin/python bench/project_status.py [BENCHMARK_DIR] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _support import DEFAULT_BENCHMARK, ROOT, Instance
from mcp import Client, StdioServerParameters

WORDS = {"paused": "paused", "done": "done", "active": "active", "abandoned": "dropped"}


def expected_statuses(question: dict) -> tuple[str | None, dict[str, str]]:
    """(the status a "which projects are X" question asks for, {project: status})."""
    asked = next(
        (WORDS[w] for w in WORDS if re.search(rf"\b{w}\b", question["question"], re.I)), None
    )
    if asked is not None:
        return asked, {fact: asked for fact in question["key_facts"]}
    pairs = dict(re.findall(r"(\w+):\s*([A-Z]+)", question["expected_answer"]))
    named = {name.lower(): WORDS[status.lower()] for name, status in pairs.items()}
    return None, {fact: named[fact] for fact in question["key_facts"]}


def body(answer) -> dict:
    return answer.structured_content or {}


async def ask(instance: Instance, questions: list[dict]) -> list[dict]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "mcp", "--user", "bench"],
        env=instance.env,
        cwd=str(ROOT),
    )
    rows = []
    async with Client(params, read_timeout_seconds=120) as client:
        for question in questions:
            asked, expected = expected_statuses(question)
            got = {}
            for name in expected:
                answer = await client.call_tool("get_project_status", {"name": name})
                matches = body(answer).get("matches") or []
                got[name] = matches[0]["status"] if matches else None
            listed = None
            if asked is not None:
                answer = await client.call_tool("list_projects", {"status": asked})
                listed = sorted(p["name"].lower() for p in body(answer).get("projects", []))
            ok = got == expected and (listed is None or listed == sorted(expected))
            rows.append(
                {
                    "id": question["id"],
                    "question": question["question"],
                    "expected": expected,
                    "get_project_status": got,
                    "list_projects": listed,
                    "ok": ok,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmark", nargs="?", type=Path, default=DEFAULT_BENCHMARK)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    questions = json.loads((args.benchmark / "golden_questions.json").read_text())
    questions = [q for q in questions if q["category"] == "status_aggregation"]

    vaults = Path(tempfile.mkdtemp(prefix="jarvis-bench-vaults-"))
    shutil.copytree(args.benchmark / "vault", vaults / "arjun")
    instance = Instance(vaults_root=vaults)
    instance.setup("bench")
    instance.manage(
        "kb", "sources", "add", "--owner", "bench", "--name", "arjun",
        "--path", str(vaults / "arjun"), "--cloud", "allowed",
        "--private-dir", "personal", "--unversioned-dir", "personal",
        "--projects-dir", "projects",
    )  # fmt: skip
    instance.manage("kb", "sync", "--owner", "bench")
    started = time.perf_counter()
    refreshed = instance.manage("projects", "refresh").strip()
    seconds = time.perf_counter() - started
    rows = asyncio.run(ask(instance, questions))
    passed = sum(r["ok"] for r in rows)
    if args.json:
        print(json.dumps({"refresh": refreshed, "passed": passed, "questions": rows}, indent=2))
        return
    print(f"registry: {refreshed} ({seconds:.1f} s, rules only: no model configured)")
    for row in rows:
        mark = "ok  " if row["ok"] else "MISS"
        print(f"{mark} #{row['id']} {row['question']}")
        for name, status in row["expected"].items():
            print(f"       {name:<11} expected {status:<8} got {row['get_project_status'][name]}")
        if row["list_projects"] is not None:
            print(f"       list_projects → {', '.join(row['list_projects']) or '(none)'}")
    print(
        f"\nget_project_status answered {passed}/{len(rows)} project questions with the right status"
    )
    shutil.rmtree(vaults, ignore_errors=True)
    shutil.rmtree(instance.data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
