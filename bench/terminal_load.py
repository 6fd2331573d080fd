"""Terminals under a flood: N agent-chat terminals streaming `yes`-style output
at once through a real daphne, from Debian's real sshd, with one deliberately
slow viewer.

Sets up a throwaway Jarvis (a person allowed agent chats, one SSH profile
with its host key pinned, N agent chats), starts Debian's sshd the way the
test suite does (tests/fakes/sshd.py; needs root) and a real daphne in a
session of its own. Then N viewers, one per terminal, each a websocket client
in this process doing what the browser's panel does (binary frames in,
`ack` every 64 kB), and one more, slow, viewer on terminal 0 that takes one
frame every 100 ms. Each terminal is told to run a flood of `--mb` MB:

    python3 -c '…'   # `y\\n` in 16 kB blocks, each block led by a stamp @T<time>@

Definitions:
- frame delay: for every stamp, the moment the viewer received the frame
  holding it minus the stamp (the time the program asked to write the block;
  one clock, one machine). It covers the whole way: the PTY, sshd, the SSH
  channel's window, daphne's fan-out and the websocket. A program writing
  faster than the chain drains waits in write(), and that wait counts.
- frame gap: for every viewer, the time between two frames arriving while its
  flood runs (first stamp to the end). A viewer held up by another (the slow
  one, or the pump waiting for it) would show it here as a long gap.
- dropped: a viewer closed with 4408 (too far behind). A fast viewer that is
  dropped reconnects at once, as the panel does, and is counted.
- daphne RSS: VmRSS of the daphne process sampled every 100 ms: before the
  run (idle, terminals open), its peak, and after the terminals closed.

Target (issue 12): other viewers' p99 frame delay ≤ 100 ms, daphne RSS
bounded, the slow viewer dropped. Both readings of "frame delay" are printed:
the gap between frames (what the slow viewer could add) and the lag from
write to screen (which under N simultaneous floods is the buffered bytes
divided by each terminal's share of the throughput: CPU-bound, and the same
without the slow viewer, which `--no-slow` shows).

    sudo .venv/bin/python bench/terminal_load.py [--terminals 20] [--mb 50] [--no-slow] [--pin]

`--pin` puts daphne on CPU 0 and this process on the others (sshd and the
producers are not pinned).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _support import ROOT, daphne_env, daphne_start, django_in, percentile, websocket_open

sys.path.insert(0, str(ROOT))

ACK_STEP = 32 * 1024
STAMP = re.compile(rb"@T(\d+\.\d+)@")
SLOW_READ_INTERVAL = 1.0  # the slow viewer takes one frame a second
PRODUCER = (
    "import sys,time\n"
    "w=sys.stdout.buffer.write\n"
    "block=(b'y'*{width}+b'\\n')*({block}//({width}+1))\n"
    "n=0\n"
    "while n<{size}:\n"
    "    w(b'@T%.6f@\\n' % time.time()); w(block); sys.stdout.flush(); n+=len(block)\n"
)


# --- a minimal websocket client (RFC 6455): binary and text in, masked frames out -----


class Socket:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.close_code: int | None = None

    @classmethod
    async def open(cls, port: int, path: str, headers: dict[str, str]) -> Socket:
        reader, writer = await websocket_open(port, path, headers, limit=2**22)
        return cls(reader, writer)

    async def receive(self) -> bytes | str | None:
        """The next message: bytes (binary), str (text), None once closed."""
        parts: list[bytes] = []
        kind = None
        while True:
            first, second = await self.reader.readexactly(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
            payload = await self.reader.readexactly(length)
            if opcode == 0x8:
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                return None
            if opcode == 0x9:
                self._send(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode in (0x1, 0x2):
                kind = opcode
            parts.append(payload)
            if first & 0x80:
                data = b"".join(parts)
                return data.decode() if kind == 0x1 else data

    def _send(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(head + mask + masked)

    def send_text(self, text: str) -> None:
        self._send(0x1, text.encode())

    def send_bytes(self, data: bytes) -> None:
        self._send(0x2, data)

    async def close(self) -> None:
        try:
            self._send(0x8, struct.pack("!H", 1000))
            self.writer.close()
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass  # the server hung up first (a dropped viewer): nothing left to close


# --- viewers -----------------------------------------------------------------------------


@dataclass
class Viewer:
    terminal: int
    slow: bool = False
    delays: list[float] = field(default_factory=list)  # seconds, one per stamp
    gaps: list[float] = field(default_factory=list)  # seconds between frames during the flood
    last_frame: float | None = None
    received: int = 0
    dropped: int = 0
    reconnects: int = 0
    finished: bool = False
    ended: str = ""  # how the server ended the slow viewer's socket
    first_stamp: float | None = None
    last_stamp: float | None = None


async def view(viewer: Viewer, port: int, path: str, headers: dict, end: bytes, deadline: float,
               started: asyncio.Event | None = None) -> None:  # fmt: skip
    """Follow one terminal until `end` shows up (fast) or until dropped (slow)."""
    tail = b""
    while time.monotonic() < deadline:
        sock = await Socket.open(port, path, headers)
        received_here = acked = 0
        ready = False
        try:
            while time.monotonic() < deadline:
                try:
                    message = await asyncio.wait_for(sock.receive(), deadline - time.monotonic())
                except (ConnectionError, asyncio.IncompleteReadError):
                    # The server hung up without a close frame reaching us: it
                    # gives a dropped viewer a moment to read the close, then
                    # cuts the connection (the page reconnects either way).
                    sock.close_code = -1
                    break
                now = time.time()
                if message is None:
                    break
                if isinstance(message, str):
                    kind = json.loads(message)["type"]
                    if kind == "ready":
                        ready = True
                        if started is not None:
                            started.set()
                    elif kind in ("error", "closed"):
                        raise RuntimeError(f"terminal {viewer.terminal}: {message}")
                    continue
                received_here += len(message)
                viewer.received += len(message)
                if ready and not viewer.slow:
                    arrived = time.monotonic()
                    if viewer.first_stamp is not None and viewer.last_frame is not None:
                        viewer.gaps.append(arrived - viewer.last_frame)
                    viewer.last_frame = arrived
                    data = tail + message
                    for match in STAMP.finditer(data):
                        stamp = float(match.group(1))
                        if viewer.first_stamp is None:
                            viewer.first_stamp = stamp
                        if viewer.last_stamp is None or stamp > viewer.last_stamp:
                            viewer.last_stamp = stamp
                            viewer.delays.append(now - stamp)
                    if end in data:
                        viewer.finished = True
                        return
                    tail = data[-64:]
                if received_here - acked >= ACK_STEP:
                    acked = received_here
                    sock.send_text(json.dumps({"type": "ack", "bytes": acked}))
                if viewer.slow:
                    await asyncio.sleep(SLOW_READ_INTERVAL)
        finally:
            await sock.close()
        if sock.close_code in (4408, -1):
            viewer.dropped += 1
            viewer.ended = "close 4408" if sock.close_code == 4408 else "connection cut"
            if viewer.slow:
                return  # shown: the slow viewer was dropped
            viewer.reconnects += 1
            viewer.last_frame = None  # the time to reconnect is not a gap between frames
            tail = b""
            continue
        raise RuntimeError(f"terminal {viewer.terminal}: socket closed ({sock.close_code})")


async def sampler(
    pid: int, samples: list[int], uid: int, remote: dict[int, float], stop: asyncio.Event
) -> None:
    while not stop.is_set():
        samples.append(rss_kb(pid))
        remote_cpu(uid, remote)
        await asyncio.sleep(0.1)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def remote_cpu(uid: int, seen: dict[int, float]) -> None:
    """CPU of the far side so far: sshd's sessions and the programs they run
    (the test account's processes), by pid, so one that ends keeps its last
    reading (sampled often, the flood's programs end before the run does)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    seen[int(entry.name)] = cpu_seconds(int(entry.name))
            except (OSError, ValueError):
                continue  # it ended while we looked


def machine_busy_seconds() -> float:
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return sum(fields[:3] + fields[5:8]) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# --- setup -------------------------------------------------------------------------------


def make_chats(server, count: int) -> tuple[list[int], str]:
    """A person allowed agent chats, a pinned profile for `server`, `count`
    agent chats; returns their ids and the person's session cookie."""
    from django.conf import settings
    from django.contrib.auth.models import Group, Permission
    from django.test import Client, override_settings

    from apps.accounts import permissions
    from apps.accounts.services import user_create
    from apps.agents import services

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        user = user_create(username="bench", password="x" * 12, validate=False)
    group = Group.objects.create(name="agents")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.USE_AGENT_CHATS))
    )
    user.groups.add(group)
    user = type(user).objects.get(pk=user.pk)
    profile = services.profile_create(
        owner=user, name="box", host=server.host, port=server.port,
        username=server.user, key_text=server.client_key,
    )  # fmt: skip
    services.profile_pin_host_key(profile=profile, key_line=server.host_key_line)
    workdir = server.workdir("bench")
    chats = [
        services.agent_chat_create(owner=user, profile=profile, project_dir=str(workdir)).pk
        for _ in range(count)
    ]
    client = Client()
    client.force_login(user)
    return chats, client.cookies[settings.SESSION_COOKIE_NAME].value


async def drive(port: int, chats: list[int], cookie: str, args, daphne_pid: int) -> dict:
    from django.conf import settings

    headers = {
        "Origin": f"http://127.0.0.1:{port}",
        "Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}",
    }
    size = "?cols=120&rows=40"
    fast = [Viewer(terminal=i) for i in range(len(chats))]
    slow = Viewer(terminal=0, slow=True)
    deadline = time.monotonic() + args.timeout
    end = f"END-{secrets.token_hex(4)}"
    end_line = f"\n{end}".encode()
    rss: list[int] = []
    stop = asyncio.Event()

    # Open every terminal (its shell starts), then the slow viewer on terminal 0.
    ready = [asyncio.Event() for _ in chats]
    tasks = [
        asyncio.create_task(
            view(v, port, f"/ws/terminal/{chat}/{size}", headers, end_line, deadline, ready[i])
        )
        for i, (v, chat) in enumerate(zip(fast, chats, strict=True))
    ]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ready)), 60)
    slow_task = None
    if not args.no_slow:
        slow_started = asyncio.Event()
        slow_path = f"/ws/terminal/{chats[0]}/{size}"
        slow_task = asyncio.create_task(
            view(slow, port, slow_path, headers, end_line, deadline, slow_started)
        )
        await asyncio.wait_for(slow_started.wait(), 30)
    await asyncio.sleep(1.0)  # prompts drawn
    rss_before = rss_kb(daphne_pid)
    cpu_before = cpu_seconds(daphne_pid)
    ours_before = os.times()
    remote_before: dict[int, float] = {}
    remote_cpu(args.remote_uid, remote_before)
    remote: dict[int, float] = dict(remote_before)
    busy_before = machine_busy_seconds()
    sampling = asyncio.create_task(sampler(daphne_pid, rss, args.remote_uid, remote, stop))

    # Each terminal gets its command typed in through a socket of its own, as
    # a second tab would (the viewers above only watch).
    # One line to type: the program's newlines travel as \n escapes inside exec().
    code = PRODUCER.format(size=args.mb * 1_000_000, width=args.line - 1, block=16384)
    producer = f"exec({code!r})"
    command = f"python3 -c {shlex_quote(producer)}; echo; echo {end[:4]}''{end[4:]}\r"
    started = time.monotonic()
    for chat in chats:
        typist = await Socket.open(port, f"/ws/terminal/{chat}/{size}", headers)
        while not isinstance(message := await typist.receive(), str) or '"ready"' not in message:
            pass
        typist.send_bytes(command.encode())
        await asyncio.sleep(0.05)
        await typist.close()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.monotonic() - started
    cpu = cpu_seconds(daphne_pid) - cpu_before
    ours_after = os.times()
    viewers_cpu = (ours_after.user + ours_after.system) - (ours_before.user + ours_before.system)
    busy = machine_busy_seconds() - busy_before
    stop.set()
    await sampling
    remote_used = sum(remote.values()) - sum(remote_before.values())
    if slow_task is not None:
        with contextlib.suppress(TimeoutError):  # never dropped: the report says so
            await asyncio.wait_for(slow_task, 10)
    return {
        "fast": fast,
        "slow": slow,
        "errors": [r for r in results if isinstance(r, BaseException)],
        "elapsed": elapsed,
        "rss_before": rss_before,
        "daphne_cpu": cpu / elapsed,
        "viewers_cpu": viewers_cpu / elapsed,
        "remote_cpu": remote_used / elapsed,
        "others_cpu": (busy - cpu - viewers_cpu - remote_used) / elapsed,
        "load": os.getloadavg(),
        "rss": rss,
    }


def shlex_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def report(run: dict, args) -> bool:
    fast, slow = run["fast"], run["slow"]
    lag = [d * 1000 for v in fast for d in v.delays]
    gaps = [g * 1000 for v in fast for g in v.gaps]
    total = sum(v.received for v in fast)
    finished = sum(v.finished for v in fast)
    dropped_fast = sum(v.dropped for v in fast)
    peak = max(run["rss"], default=0)
    ms = lambda values, pct: f"{percentile(values, pct):.1f}"  # noqa: E731
    who = (
        "no slow viewer"
        if args.no_slow
        else (f"one slow viewer on terminal 0 ({SLOW_READ_INTERVAL * 1000:.0f} ms a frame)")
    )
    print(
        f"{len(fast)} terminals x {args.mb} MB of y in {args.line}-byte lines (the PTY adds a "
        f"\\r to each), {who}"
    )
    print(
        f"CPU over the flood, % of one core ({os.cpu_count()} CPUs): daphne "
        f"{run['daphne_cpu'] * 100:.0f}, the viewers (this process) {run['viewers_cpu'] * 100:.0f}, "
        f"sshd and the programs {run['remote_cpu'] * 100:.0f}, everything else on the machine "
        f"{run['others_cpu'] * 100:.0f} (load average {run['load'][0]:.1f} at the end)"
    )
    print(
        f"fast viewers: {finished}/{len(fast)} saw their whole stream; {total / 1e6:.0f} MB "
        f"in {run['elapsed']:.1f} s ({total / 1e6 / run['elapsed']:.1f} MB/s in all, "
        f"{total / 1e6 / run['elapsed'] / len(fast):.2f} MB/s per terminal); dropped "
        f"{dropped_fast} time(s)"
    )
    print(
        f"frame gap over {len(gaps)} frames: p50 {ms(gaps, 50)} ms, p99 {ms(gaps, 99)} ms, "
        f"max {max(gaps, default=0):.1f} ms"
    )
    print(
        f"lag, write to viewer, over {len(lag)} stamps: p50 {ms(lag, 50)} ms, "
        f"p99 {ms(lag, 99)} ms, max {max(lag, default=0):.1f} ms"
    )
    if not args.no_slow:
        print(
            f"slow viewer: {'dropped' if slow.dropped else 'NOT dropped'} after receiving "
            f"{slow.received / 1e6:.2f} MB ({slow.ended or 'still open'}); daphne logged "
            f"{run['drops_logged']} viewer(s) dropped for falling behind"
        )
    print(
        f"daphne RSS: {run['rss_before'] / 1024:.0f} MB with the terminals open, peak "
        f"{peak / 1024:.0f} MB during the flood, {run['rss_after'] / 1024:.0f} MB after it "
        f"(viewers gone, shells idle)"
    )
    for error in run["errors"]:
        print(f"error: {error!r}")
    met = (
        percentile(gaps, 99) <= 100
        and (args.no_slow or slow.dropped >= 1)
        and finished == len(fast)
        and peak - run["rss_before"] < 100 * 1024
        and not run["errors"]
    )
    print(
        "target (p99 frame gap ≤ 100 ms, slow viewer dropped, RSS growth < 100 MB, every "
        f"stream complete): {'met' if met else 'NOT met'}; p99 lag ≤ 100 ms: "
        f"{'met' if percentile(lag, 99) <= 100 else 'NOT met'}"
    )
    return met


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--terminals", type=int, default=20)
    parser.add_argument("--mb", type=int, default=50, help="MB of output per terminal")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--no-slow", action="store_true", help="leave out the slow viewer")
    parser.add_argument(
        "--line", type=int, default=2, help="bytes per output line, newline included (yes: 2)"
    )
    parser.add_argument(
        "--pin", action="store_true", help="daphne on CPU 0, this process elsewhere"
    )
    args = parser.parse_args()

    from tests.fakes.sshd import FakeSSHD

    cpus = sorted(os.sched_getaffinity(0))
    load_cpus = set(cpus[1:]) if args.pin and len(cpus) > 1 else None
    if load_cpus:
        os.sched_setaffinity(0, load_cpus)
    data_dir = Path(tempfile.mkdtemp(prefix="jarvis-bench-terminal-"))
    django_in(data_dir, JARVIS_ALLOWED_HOSTS="127.0.0.1,localhost")
    # INFO: the terminal's log lines say which viewers were dropped.
    env = daphne_env(data_dir, JARVIS_LOG_LEVEL="INFO")
    with FakeSSHD() as server:
        args.remote_uid = server.uid
        chats, cookie = make_chats(server, args.terminals)
        log = data_dir / "daphne.log"
        daphne, port = daphne_start(env, log, {cpus[0]} if load_cpus else None)
        try:
            run = asyncio.run(drive(port, chats, cookie, args, daphne.pid))
            # Every viewer has gone; the shells live on (until the idle reaper).
            time.sleep(1.0)
            run["rss_after"] = rss_kb(daphne.pid)
        finally:
            daphne.terminate()
            try:
                daphne.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daphne.kill()
    run["drops_logged"] = log.read_text().count("fell behind and was dropped")
    met = report(run, args)
    if "Traceback" in log.read_text():
        print(f"daphne's log has a traceback: {log}")
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
