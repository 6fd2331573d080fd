"""1,000 websockets opened and left idle: does the site still answer, and what do they cost?

Starts a real daphne (a child process) on a throwaway data dir with one person
and their chat, then opens `--sockets` websockets and leaves them idle for
`--idle` seconds, in two shapes:

- anonymous: no session cookie, the Origin a browser sends (a stranger's
  flood): each should be refused at the handshake or closed at once, so they
  cost nothing that stays;
- signed in: the person's own session, to their chat's socket (`/ws/chats/<id>/`)
  and the notices socket (`/ws/ping/`), alternately: the worst a signed-in
  browser (or a script with a stolen session) can hold open.

While they are open it measures what a person notices: the time of a page
(`GET /accounts/login/`) and of a fresh chat socket's handshake, each `--probes` times;
and what the server pays: daphne's resident memory (RSS, from /proc) before,
with the sockets open, and after they close, and its CPU share while idle.

    .venv/bin/python bench/idle_sockets.py [--sockets 1000] [--idle 30] [--probes 20]

Prints the load average beside the figures: a run at load above 2 is reported
but does not count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from _support import daphne_env, daphne_start, django_in, percentile, websocket_open


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def person_with_chat() -> tuple[str, int]:
    """One person's chat, and the Cookie header of a signed-in session of theirs."""
    from django.conf import settings
    from django.test import Client

    from apps.accounts.services import user_create
    from apps.chats.models import Chat

    user = user_create(username="idle", password="x" * 12, validate=False)
    chat = Chat.objects.create(owner=user, title="idle sockets")
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}", chat.pk


async def open_many(port: int, paths: list[str], headers: dict[str, str]) -> tuple[list, int]:
    """Open every path (a few at a time, as a flood from one client would);
    returns the open writers and how many handshakes were refused."""
    opened, refused = [], 0
    gate = asyncio.Semaphore(50)

    async def one(path: str) -> None:
        nonlocal refused
        async with gate:
            try:
                reader, writer = await asyncio.wait_for(websocket_open(port, path, headers), 10)
            except (TimeoutError, ConnectionError, OSError, asyncio.IncompleteReadError):
                refused += 1
                return
            opened.append((reader, writer))

    await asyncio.gather(*(one(p) for p in paths))
    return opened, refused


async def still_open(sockets: list) -> int:
    """Sockets the server has not closed: reading returns nothing within 50 ms."""
    alive = 0
    for reader, _ in sockets:
        try:
            data = await asyncio.wait_for(reader.read(1), 0.05)
        except TimeoutError:
            alive += 1
            continue
        except (ConnectionError, OSError):
            continue
        if data and data[0] & 0x0F != 0x8:  # a frame that is not Close: still open
            alive += 1
    return alive


async def probes(port: int, chat_path: str, headers: dict[str, str], count: int) -> dict:
    page, handshake = [], []
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        for _ in range(count):
            started = time.perf_counter()
            response = await http.get("/accounts/login/")
            response.raise_for_status()
            page.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            _, writer = await websocket_open(port, chat_path, headers)
            handshake.append((time.perf_counter() - started) * 1000)
            writer.close()
            await asyncio.sleep(0.1)
    return {"page": page, "handshake": handshake}


def per_socket(grown_mib: float, alive: int) -> str:
    return f" ({grown_mib * 1024 / alive:.0f} KiB per open socket)" if alive else ""


def ms(values: list[float]) -> str:
    if not values:
        return "none"
    return f"median {statistics.median(values):.0f} ms, p95 {percentile(values, 95):.0f} ms"


async def run(port: int, pid: int, cookie: str, chat_id: int, args) -> None:
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    signed = {**origin, "Cookie": cookie}
    chat_path = f"/ws/chats/{chat_id}/"
    quiet = await probes(port, chat_path, signed, args.probes)
    print(f"before: RSS {rss_mib(pid):.0f} MiB; page {ms(quiet['page'])}; "
          f"chat socket handshake {ms(quiet['handshake'])}")  # fmt: skip

    for shape, headers, paths in (
        ("anonymous", origin, ["/ws/ping/"] * args.sockets),
        (
            "signed in",
            signed,
            [chat_path if i % 2 else "/ws/ping/" for i in range(args.sockets)],
        ),
    ):
        rss_before = rss_mib(pid)
        started = time.perf_counter()
        sockets, refused = await open_many(port, paths, headers)
        took = time.perf_counter() - started
        cpu_start, wall_start = cpu_seconds(pid), time.perf_counter()
        await asyncio.sleep(args.idle)
        idle_cpu = (cpu_seconds(pid) - cpu_start) / (time.perf_counter() - wall_start)
        alive = await still_open(sockets)
        rss_open = rss_mib(pid)
        loaded = await probes(port, chat_path, signed, args.probes)
        for _, writer in sockets:
            writer.close()
        await asyncio.sleep(3)
        print(
            f"{shape}: {len(sockets)} handshakes accepted, {refused} refused, in {took:.1f}s; "
            f"after {args.idle:g}s idle {alive} still open; daphne RSS {rss_before:.0f} → "
            f"{rss_open:.0f} MiB open{per_socket(rss_open - rss_before, alive)} → "
            f"{rss_mib(pid):.0f} MiB closed; idle CPU {idle_cpu:.0%} of a core; "
            f"page {ms(loaded['page'])}; chat socket handshake {ms(loaded['handshake'])}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--probes", type=int, default=20)
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="jarvis-bench-idle-"))
    django_in(data_dir, JARVIS_ALLOWED_HOSTS="127.0.0.1,localhost")
    from django.core.management import call_command

    call_command("collectstatic", "--noinput", verbosity=0)  # the page probe renders static URLs
    session, chat_id = person_with_chat()
    log = data_dir / "daphne.log"
    daphne, port = daphne_start(daphne_env(data_dir), log)
    try:
        load = os.getloadavg()[0]
        asyncio.run(run(port, daphne.pid, session, chat_id, args))
        print(f"load average {load:.2f} → {os.getloadavg()[0]:.2f}"
              f"{' (above 2: reported, does not count)' if load > 2 else ''}")  # fmt: skip
    finally:
        daphne.terminate()
        try:
            daphne.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daphne.kill()
    if "Traceback" in log.read_text():
        print(f"daphne's log has tracebacks: {log}")


if __name__ == "__main__":
    main()
