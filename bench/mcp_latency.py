"""MCP `search_notes` latency on the demo household, measured through the SDK's
client, the way Claude Desktop or Cursor sees it.

A throwaway Jarvis gets the demo household (`manage.py seed_demo`: Alice and
Bob with their demo vaults); their collections are made cloud-allowed (the
MCP server returns nothing else). The server is then started as an app starts
it (`manage.py mcp --user alice`, stdio) — or, with `--http`, reached at
/mcp/ on a real daphne with Alice's bearer token — and `search_notes` is
called `--queries` times (questions built from the demo notes' headings,
cycling through the current, history and any modes) after a few warm-up calls.
Prints p50, p95, p99 and max of each call's round trip (request written →
result parsed by the client). Target: p95 ≤ 100 ms.

    .venv/bin/python bench/mcp_latency.py [--queries 200] [--http]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from _support import ROOT, Instance, percentile
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

DEMO_VAULTS = ROOT / "apps" / "demo" / "demo_vaults"
MODES = ("current", "history", "any")
WARM_UP = 5

ALLOW_CLOUD = (
    "from apps.library.models import Source; "
    "Source.objects.filter(kind='vault').update(cloud='allowed')"
)
NEW_TOKEN = (
    "from apps.accounts.models import User; from apps.mcp.tokens import token_create; "
    "print(token_create(owner=User.objects.get(username='alice'), name='bench')[1])"
)


def questions(count: int) -> list[str]:
    """Headings and titles of the demo notes, turned into short questions."""
    found = []
    for path in sorted(DEMO_VAULTS.rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            heading = re.match(r"^#{1,3}\s+(.+)$", line)
            if heading:
                found.append(f"what about {heading.group(1).strip()}")
    return [found[i % len(found)] for i in range(count)]


async def measure(client: Client, asked: list[str]) -> list[float]:
    for question in asked[:WARM_UP]:
        await client.call_tool("search_notes", {"query": question})
    times = []
    for n, question in enumerate(asked):
        started = time.perf_counter()
        answer = await client.call_tool(
            "search_notes", {"query": question, "mode": MODES[n % len(MODES)]}
        )
        times.append((time.perf_counter() - started) * 1000)
        if answer.is_error:
            raise SystemExit(f"search_notes failed: {answer.content}")
    return times


async def over_stdio(instance: Instance, asked: list[str]) -> list[float]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "mcp", "--user", "alice"],
        env=instance.env,
        cwd=str(ROOT),
    )
    async with Client(params, read_timeout_seconds=120) as client:
        return await measure(client, asked)


async def over_http(url: str, token: str, asked: list[str]) -> list[float]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        return await measure(client, asked)


def serve(instance: Instance, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
         "jarvis_site.asgi:application"],
        env={**instance.env, "JARVIS_ALLOWED_HOSTS": "127.0.0.1,localhost"},
        cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx2.get(f"http://127.0.0.1:{port}/", timeout=1)
            return process
        except httpx2.HTTPError:
            time.sleep(0.3)
    process.terminate()
    raise SystemExit("daphne did not start")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--http", action="store_true", help="over HTTP at /mcp/ (daphne)")
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()

    vaults = Path(tempfile.mkdtemp(prefix="jarvis-bench-vaults-"))
    instance = Instance(vaults_root=vaults)
    instance.manage("migrate", "--noinput", "-v", "0")
    instance.manage("seed_demo")
    instance.manage("shell", "-c", ALLOW_CLOUD)
    chunks = instance.manage("kb", "stats", "--user", "alice").strip().splitlines()[-1]
    asked = questions(args.queries)
    if args.http:
        token = instance.manage("shell", "-c", NEW_TOKEN).strip().splitlines()[-1]
        daphne = serve(instance, args.port)
        try:
            url = f"http://127.0.0.1:{args.port}/mcp/"
            times = asyncio.run(over_http(url, token, asked))
        finally:
            daphne.terminate()
            daphne.wait()
        how = "Streamable HTTP /mcp/ (daphne, bearer token)"
    else:
        times = asyncio.run(over_stdio(instance, asked))
        how = "stdio (manage.py mcp --user alice)"
    library = library_search_times(instance, asked)
    print(f"demo household, as alice: {chunks}")
    print(f"search_notes through the MCP client over {how}, {len(times)} calls")
    print(
        f"p50 {percentile(times, 50):.1f} ms · p95 {percentile(times, 95):.1f} ms · "
        f"p99 {percentile(times, 99):.1f} ms · max {max(times):.1f} ms   (target p95 ≤ 100 ms)"
    )
    print(
        f"for comparison, search() alone in one process (kb search --cloud-only): "
        f"p50 {percentile(library, 50):.1f} ms · p95 {percentile(library, 95):.1f} ms"
    )
    shutil.rmtree(vaults, ignore_errors=True)
    shutil.rmtree(instance.data_dir, ignore_errors=True)


def library_search_times(instance: Instance, asked: list[str]) -> list[float]:
    """The same questions through the library's search() alone (no MCP), timed
    inside one process: what the MCP round trip adds is the difference."""
    listing = instance.data_dir / "questions.txt"
    listing.write_text("\n".join(asked[:WARM_UP] + asked), encoding="utf-8")
    rows = instance.json_lines(
        "kb", "search", "--user", "alice", "--cloud-only", "--limit", "8",
        "--queries-file", str(listing),
    )  # fmt: skip
    return [row["elapsed_ms"] for row in rows[WARM_UP:]]


if __name__ == "__main__":
    main()
