"""Concurrent chat streams: N websocket clients following N replies at once.

Starts a real daphne (a child process) on a throwaway data dir, a fake
OpenAI-compatible model in a process of its own (tests/fakes/llm.py, so the
fake never competes with the clients for one GIL) streaming every reply at
`--rate` tokens per second, and N clients in this process. Each client is a
person (own user, own session cookie, own chat) with the chat page's socket
open (`ws/chats/<id>/`, with the Origin a browser sends); it sends its question
through the same POST the composer uses (`/chat/<id>/send/`, CSRF token and
all), so the reply runs as a task in daphne exactly as it does for the
browser. Starts are spread over `--ramp` seconds. One short warm-up reply runs
first so imports and template compilation are not measured.

Every token of the fake's reply is a numbered word (`t0000 t0001 …`, one token
per streamed piece) and the fake records when it wrote each one to the socket
(`time.monotonic()`, which is the same clock in every process on Linux). Each
client stores every frame with its arrival time; the frames are parsed after
the run.

Definitions:
- frame: one websocket message (a few whole rendered blocks, frames.py).
- token frame: a frame whose answer block holds more tokens than the
  client had seen so far.
- added latency (per token frame): arrival at the client minus the moment the
  fake emitted the newest token that frame contains. The runner publishes
  what has arrived every FRAME_INTERVAL (66 ms), so this throttle is not
  counted: the newest token of a frame is at most one token interval old
  when the frame is made (under 20 ms at 50 tokens/s). An infinitely fast
  server therefore scores between 0 and one token interval (p99 ≈ 19.8 ms at
  50 tokens/s; an idle server measures about 21 ms); everything above that is
  the server's own delay: reading the model's stream, the event loop's lag,
  rendering, the socket send. Reported for the whole run and for the frames
  that arrived while every reply was streaming (after the last reply's first
  token, before the first reply's last), which leaves out the burst of sends.
- token → screen (reported beside it): for every token, arrival of the first
  frame showing it minus its emission; this one includes the throttle (up to
  66 ms by design) and is not the target's figure.
- dropped frames: frames a client should have had and lost or could not use:
  a message that is not a frame (no status or answer block), a frame whose
  answer is not exactly `t0000 … tK` (a gap or corrupt text), a frame older
  than one already shown (its answer has fewer tokens than an earlier
  frame's), and, for a client that never got the reply's final frame (status
  done; the connection closed, failed or timed out), one.
- lost tokens: tokens of the reply that the client's final rendered answer
  does not hold.
- fps: token frames per second per client while its reply streamed (the
  runner's ceiling is about 15).
- last token → final frame: the final frame's arrival minus the last token's
  emission (the last save and indexing come first). send: the POST's round
  trip, and the time from the POST to the reply's first frame.
- CPU: CPU seconds of each process from the first send to the last final
  frame divided by that wall time (100 % is one core; daphne can pass it with
  its thread pool), its event loop's (main) thread on its own, and what other
  processes on the machine used meanwhile: figures taken while other work
  runs are not daphne's. daphne and the fake run in sessions of their own, so
  Linux's autogroup scheduler does not lump them with the clients.
- fake lag (sanity check): how late the fake wrote tokens against its own
  schedule; client loop lag: how late this process's event loop woke up.
  Both should be a few ms, or the figures measure the load generator.

The target (issue 13), on 2 cores: 100 streams started within one second,
0 dropped, p99 added latency ≤ 50 ms and the send's round trip p99 ≤ 500 ms;
10 streams p99 ≤ 25 ms. The load average is printed beside the figures: the
machine is shared, and a run taken with it above the CPU count measures the
machine rather than daphne.

    .venv/bin/python bench/stream_load.py [--clients 100] [--tokens 200] [--rate 50]
        [--ramp 1.0] [--pin]

`--pin` puts daphne on CPU 0 and this process and the fake on the others
(needs at least 2 CPUs), to see daphne without the load generator in its way.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import multiprocessing
import os
import random
import re
import secrets
import shutil
import string
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from _support import ROOT, daphne_env, daphne_start, django_in, percentile, websocket_open

WARM_UP_CLIENT = 0  # client numbers of the measured clients start at 1
WARM_UP_TOKENS = 20
TOKEN_RE = re.compile(r"t(\d{4})")
STATUS_RE = re.compile(r'id="msg-\d+-status"[^>]*?data-status="([a-z]+)"')
# A whole answer block runs from its element to the next block of the frame (or its end).
ANSWER_RE = re.compile(
    r'<div id="msg-\d+-answer"[^>]*>(.*?)(?=<[a-z]+ id="msg-\d+-(?:sources|notes|actions|meta)"|$)',
    re.S,
)
# While the answer streams, frames append text to its open block (apps/chats/streaming.py).
APPEND_RE = re.compile(r'<span data-append="msg-\d+-open" data-at="(\d+)">([^<]*)</span>')
OPEN_RE = re.compile(r'<div id="msg-\d+-open"[^>]*>([^<]*)</div>')
TAG_RE = re.compile(r"<[^>]+>")
FINAL = ("done", "error", "stopped", "interrupted")


def token_text(count: int) -> str:
    return "".join(f"t{i:04d} " for i in range(count))


# --- the fake model, in a process of its own ----------------------------------------------


def serve_fake(conn, tokens: int, rate: float) -> None:
    """Run FakeOpenAI until told to stop; record when each token was written."""
    os.setsid()  # its own scheduling group (autogroup), apart from the clients and daphne
    sys.path.insert(0, str(ROOT))
    from tests.fakes.llm import FakeOpenAI, Reply

    client_re = re.compile(rb"stream-load client (\d+)")
    piece_re = re.compile(rb'"content": "t(\d{4}) ')
    emitted: dict[int, dict[int, float]] = {}

    class RecordingFake(FakeOpenAI):
        def stream(self, handler, seen, reply, *args, **kwargs):
            match = client_re.search(seen.raw)
            times = emitted.setdefault(int(match.group(1)) if match else -1, {})
            write = handler.write_chunk

            def write_and_record(data: bytes) -> None:
                write(data)
                piece = piece_re.search(data)
                if piece:
                    times[int(piece.group(1))] = time.monotonic()

            handler.write_chunk = write_and_record
            super().stream(handler, seen, reply, *args, **kwargs)

    def reply_for(body) -> Reply:
        warm_up = f"stream-load client {WARM_UP_CLIENT} " in str(body)
        count = WARM_UP_TOKENS if warm_up else tokens
        # One token per streamed piece: "t0042 " is six characters.
        return Reply(text=token_text(count), chunk_chars=6, delay=1.0 / rate)

    fake = RecordingFake(models=["fake-model"], default=reply_for)
    with fake:
        conn.send(fake.port)
        conn.recv()  # "stop"
        conn.send(emitted)


# --- a minimal websocket client (RFC 6455, text frames in, close out) ---------------------


class Socket:
    """Just enough websocket for a frame follower: it reads text messages,
    answers pings, and closes. Kept tiny so the load generator stays cheap."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int, path: str, headers: dict[str, str]) -> Socket:
        reader, writer = await websocket_open(port, path, headers)
        return cls(reader, writer)

    async def receive(self) -> str | None:
        """The next text message, or None when the server closes."""
        parts: list[bytes] = []
        while True:
            first, second = await self.reader.readexactly(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
            if second & 0x80:
                raise ConnectionError("the server masked a frame")
            payload = await self.reader.readexactly(length)
            if opcode == 0x8:
                return None
            if opcode == 0x9:
                self._send(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            parts.append(payload)
            if first & 0x80:
                return b"".join(parts).decode()

    def _send(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked)

    async def close(self) -> None:
        try:
            self._send(0x8, struct.pack("!H", 1000))
            await self.writer.drain()
        except (ConnectionError, RuntimeError):
            pass
        self.writer.close()


# --- the clients ---------------------------------------------------------------------------


@dataclass
class Person:
    number: int
    chat_id: int
    session: str


@dataclass
class Run:
    number: int
    frames: list[tuple[float, str]] = field(default_factory=list)
    sent_at: float = 0.0
    send_ms: float | None = None  # the POST's round trip
    error: str = ""


async def send_question(http, base: str, person: Person, csrf: str, cookies: dict) -> None:
    response = await http.post(
        f"{base}/chat/{person.chat_id}/send/",
        data={"text": f"stream-load client {person.number} please answer"},
        headers={
            "Origin": base,
            "X-CSRFToken": csrf,
            "Cookie": f"{cookies['session']}={person.session}; {cookies['csrf']}={csrf}",
        },
    )
    if response.status_code != 302:
        raise RuntimeError(f"send answered HTTP {response.status_code}: {response.text[:200]}")


async def follow(
    ports: tuple[int, int],
    person: Person,
    cookies: dict,
    connected: asyncio.Barrier,
    start_at: float | None,
    deadline: float,
    run: Run,
    http,
) -> None:
    port, send_port = ports  # the socket's process, and the one the question is sent to
    base = f"http://127.0.0.1:{port}"
    csrf = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    sock = None
    try:
        sock = await Socket.open(
            port,
            f"/ws/chats/{person.chat_id}/",
            {"Origin": base, "Cookie": f"{cookies['session']}={person.session}"},
        )
    except (OSError, ConnectionError, asyncio.IncompleteReadError) as exc:
        run.error = f"connect: {exc!r}"
    await connected.wait()
    if sock is None:
        return
    reader = None
    try:
        if start_at is not None:
            await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        # Read from the start: the first frame may come before the POST's answer.
        reader = asyncio.create_task(read_until_final(sock, run, deadline))
        run.sent_at = time.monotonic()
        await send_question(http, f"http://127.0.0.1:{send_port}", person, csrf, cookies)
        run.send_ms = (time.monotonic() - run.sent_at) * 1000
        await reader
    except TimeoutError:
        run.error = "timed out before the final frame"
    except (OSError, ConnectionError, asyncio.IncompleteReadError, RuntimeError) as exc:
        run.error = repr(exc)
    finally:
        if reader is not None and not reader.done():
            reader.cancel()
        await sock.close()


async def read_until_final(sock: Socket, run: Run, deadline: float) -> None:
    while True:
        message = await asyncio.wait_for(sock.receive(), deadline - time.monotonic())
        if message is None:
            run.error = "closed by the server before the final frame"
            return
        run.frames.append((time.monotonic(), message))
        status = STATUS_RE.search(message)
        if status and status.group(1) in FINAL:
            return


async def loop_lag(samples: list[float], stop: asyncio.Event) -> None:
    """How late this process's event loop wakes up (the clients' own delay)."""
    while not stop.is_set():
        before = time.monotonic()
        await asyncio.sleep(0.01)
        samples.append((time.monotonic() - before - 0.01) * 1000)


def _cpu_seconds(stat_path: str) -> float:
    """utime + stime from a /proc/…/stat file."""
    with open(stat_path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_busy_seconds() -> float:
    """user + nice + system + irq + softirq of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU of each process (and of daphne's event loop thread, and of the whole
    machine) between `start()` and `stop()`, as % of one core (Linux /proc)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids

    def _read(self) -> dict[str, float]:
        values = {name: _cpu_seconds(f"/proc/{pid}/stat") for name, pid in self.pids.items()}
        # With several daphnes, "daphne" and its loop are the first one's.
        daphne = self.pids["daphne"]
        values["daphne loop"] = _cpu_seconds(f"/proc/{daphne}/task/{daphne}/stat")
        values["machine"] = _machine_busy_seconds()
        values["wall"] = time.monotonic()
        return values

    def start(self) -> None:
        self.before = self._read()

    def stop(self) -> dict[str, float]:
        after = self._read()
        wall = after.pop("wall") - self.before["wall"]
        usage = {name: (value - self.before[name]) / wall * 100 for name, value in after.items()}
        ours = sum(usage[name] for name in self.pids)
        usage["others"] = max(0.0, usage["machine"] - ours)
        return usage


def ports_of(ports: list[int], number: int) -> tuple[int, int]:
    """Person `number`'s socket process and the process its question is sent
    to: with several, always another one, so every reply is followed from a
    process that does not run it."""
    return ports[number % len(ports)], ports[(number + 1) % len(ports)]


async def drive(
    ports: list[int], people: list[Person], cookies: dict, args
) -> tuple[list[Run], dict]:
    limits = httpx.Limits(max_connections=len(people) + 1, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        # Warm-up: one short reply, not measured.
        warm = Run(WARM_UP_CLIENT)
        await follow(
            ports_of(ports, 0),
            people[0],
            cookies,
            asyncio.Barrier(1),
            None,
            time.monotonic() + 30,
            warm,
            http,
        )
        if warm.error:
            raise SystemExit(f"the warm-up reply failed: {warm.error}")

        runs = [Run(p.number) for p in people[1:]]
        barrier = asyncio.Barrier(len(runs))
        lag: list[float] = []
        stop = asyncio.Event()
        lag_task = asyncio.create_task(loop_lag(lag, stop))
        deadline = time.monotonic() + args.ramp + args.tokens / args.rate + 60
        # Every socket is open before the first question; starts are then
        # spread uniformly over the ramp. CPU is counted from the first start
        # to the last final frame.
        start = time.monotonic() + 1.0 + len(people) * 0.01
        rng = random.Random(5)
        meter = CpuMeter(args.pids)

        async def start_meter() -> None:
            await asyncio.sleep(start - time.monotonic())
            meter.start()

        await asyncio.gather(
            start_meter(),
            *(
                follow(
                    ports_of(ports, person.number),
                    person,
                    cookies,
                    barrier,
                    start + rng.uniform(0, args.ramp),
                    deadline,
                    run,
                    http,
                )
                for person, run in zip(people[1:], runs, strict=True)
            ),
        )
        usage = meter.stop()
        stop.set()
        await lag_task
    return runs, {"cpu": usage, "client_lag": lag}


# --- setup ---------------------------------------------------------------------------------


def make_people(count: int, fake_port: int) -> list[Person]:
    """`count` people, each with a chat and a signed-in session, and the fake
    model as the instance default (a local connection, no tools)."""
    from django.conf import settings
    from django.test import Client, override_settings

    from apps.accounts.services import user_create
    from apps.chats.models import Chat
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="fake", kind="openai", base_url=f"http://127.0.0.1:{fake_port}/v1", location="local"
    )
    model_add(connection=connection, model_id="fake-model", default=True)
    people = []
    # Sessions are made directly, so no password is ever checked: a cheap hash
    # keeps setup fast (argon2 at 100 MB a hash would take most of a minute).
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        for number in range(count):
            user = user_create(username=f"person{number}", password="x" * 12, validate=False)
            chat = Chat.objects.create(owner=user, title=f"stream load {number}")
            client = Client()
            client.force_login(user)
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            people.append(Person(number=number, chat_id=chat.pk, session=session))
    return people


# --- figures -------------------------------------------------------------------------------


@dataclass
class Figures:
    frames: int = 0
    token_frames: int = 0
    bad: int = 0
    gaps: int = 0
    stale: int = 0
    unfinished: int = 0
    lost_tokens: int = 0
    added: list[float] = field(default_factory=list)
    steady: list[float] = field(default_factory=list)  # added, while every reply streamed
    to_screen: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    fps: list[float] = field(default_factory=list)
    fake_lag: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def dropped(self) -> int:
        return self.bad + self.gaps + self.stale + self.unfinished


def analyse(runs: list[Run], emitted: dict[int, dict[int, float]], args) -> Figures:
    figures = Figures()
    interval = 1.0 / args.rate
    measured = [emitted.get(run.number) for run in runs]
    spans = [(min(t.values()), max(t.values())) for t in measured if t]
    # The window in which every measured reply was streaming (empty if none).
    steady_from = max((first for first, _ in spans), default=0.0)
    steady_to = min((last for _, last in spans), default=0.0)
    for run in runs:
        times = emitted.get(run.number, {})
        if times:  # against its own schedule, anchored on its most punctual token
            anchor = min(at - index * interval for index, at in times.items())
            figures.fake_lag += [
                (at - anchor - index * interval) * 1000 for index, at in times.items()
            ]
        seen = -1
        finished = False
        run_token_frames = 0
        shown = ""  # the answer's text as the page shows it, rebuilt as chat.js does
        for arrival, message in run.frames:
            figures.frames += 1
            status = STATUS_RE.search(message)
            answer = ANSWER_RE.search(message)
            appends = APPEND_RE.findall(message)
            if status is None and answer is None and not appends:
                figures.bad += 1
                continue
            if status and status.group(1) in FINAL:
                finished = True
            if answer is not None:
                # Streaming, the text ends with the open block (where appends go).
                block = answer.group(1)
                open_block = OPEN_RE.search(block)
                if open_block is not None:
                    block = block[: open_block.start()] + open_block.group(1)
                shown = html.unescape(TAG_RE.sub("", block))
            gap = False
            for at, text in appends:
                at, text = int(at), html.unescape(text)
                if at > len(shown):
                    gap = True  # the page would ask for the whole reply again
                    continue
                shown += text[len(shown) - at :]
            if gap:
                figures.gaps += 1
                continue
            if answer is None and not appends:
                continue
            numbers = [int(n) for n in TOKEN_RE.findall(shown)]
            if numbers != list(range(len(numbers))):
                figures.gaps += 1
                continue
            newest = len(numbers) - 1
            if newest < seen:
                figures.stale += 1
                continue
            if newest > seen:
                if newest not in times:
                    figures.gaps += 1  # shows a token the fake never sent: corrupt
                    continue
                figures.token_frames += 1
                figures.added.append((arrival - times[newest]) * 1000)
                if steady_from <= arrival <= steady_to:
                    figures.steady.append(figures.added[-1])
                figures.to_screen += [
                    (arrival - times[n]) * 1000 for n in range(seen + 1, newest + 1) if n in times
                ]
                run_token_frames += 1
                seen = newest
            if finished and times:
                figures.done.append((arrival - max(times.values())) * 1000)
        if not finished:
            figures.unfinished += 1
            figures.errors.append(f"client {run.number}: {run.error or 'no final frame'}")
        figures.lost_tokens += args.tokens - (seen + 1)
        if len(times) > 1:
            span = max(times.values()) - min(times.values())
            figures.fps.append(run_token_frames / span)
    return figures


def report(figures: Figures, runs: list[Run], extra: dict, args) -> None:
    def p(values: list[float], pct: float) -> str:
        return f"{percentile(values, pct):.1f}" if values else "-"

    cpu = extra["cpu"]
    fps = sum(figures.fps) / len(figures.fps) if figures.fps else 0.0
    print()
    print(
        f"{'N':>4} {'frames':>7} {'fps':>5} {'dropped':>8} {'lost tok':>9}"
        f"   added latency ms: {'p50':>6} {'p95':>6} {'p99':>6} {'max':>6}"
    )
    print(
        f"{len(runs):>4} {figures.frames:>7} {fps:>5.1f} {figures.dropped:>8}"
        f" {figures.lost_tokens:>9}   {'':>17} {p(figures.added, 50):>6}"
        f" {p(figures.added, 95):>6} {p(figures.added, 99):>6} {p(figures.added, 100):>6}"
    )
    print()
    print(
        f"dropped = {figures.bad} not frames + {figures.gaps} gaps/corrupt"
        f" + {figures.stale} out of order + {figures.unfinished} clients without the final frame"
        f" ({figures.token_frames} token frames)"
    )
    print(
        f"added latency while all {len(runs)} replies streamed ({len(figures.steady)} frames):"
        f" p50 {p(figures.steady, 50)}  p99 {p(figures.steady, 99)} ms"
    )
    print(
        f"token → screen (throttle included): p50 {p(figures.to_screen, 50)}"
        f"  p99 {p(figures.to_screen, 99)} ms;"
        f" last token → final frame: p50 {p(figures.done, 50)}  p99 {p(figures.done, 99)} ms"
    )
    sends = [run.send_ms for run in runs if run.send_ms is not None]
    firsts = [(run.frames[0][0] - run.sent_at) * 1000 for run in runs if run.frames and run.sent_at]
    print(
        f"send (the POST's round trip): p50 {p(sends, 50)}  p99 {p(sends, 99)} ms;"
        f" send → first frame: p50 {p(firsts, 50)}  p99 {p(firsts, 99)} ms"
    )
    print(
        f"CPU over the run (100 % = one core of {os.cpu_count()}): daphne {cpu['daphne']:.0f} %"
        f" (its event loop thread {cpu['daphne loop']:.0f} %),"
        + "".join(f" {name} {cpu[name]:.0f} %," for name in cpu if name[7:].isdigit())
        + f" fake model {cpu['fake']:.0f} %, clients {cpu['clients']:.0f} %,"
        f" other processes {cpu['others']:.0f} %"
    )
    print(
        f"load generator: fake lag p50 {p(figures.fake_lag, 50)}  p99 {p(figures.fake_lag, 99)} ms,"
        f" client loop lag p50 {p(extra['client_lag'], 50)}  p99 {p(extra['client_lag'], 99)} ms;"
        f" the added-latency floor at {args.rate:g} tokens/s is p99 ≈"
        f" {0.99 * 1000 / args.rate:.1f} ms"
    )
    before, after = extra["load"]
    print(
        "load average (1/5/15 min) before the run "
        + " ".join(f"{x:.2f}" for x in before)
        + ", after "
        + " ".join(f"{x:.2f}" for x in after)
        + f" on {os.cpu_count()} CPUs: figures taken above ~{os.cpu_count()} measure the machine"
    )
    for line in figures.errors[:5]:
        print(f"  {line}")
    # The targets: 0 dropped; per-frame p99 ≤ 50 ms and the send's
    # round trip p99 ≤ 500 ms with 100 streams; per-frame p99 ≤ 25 ms with 10.
    frame_limit = 25 if len(runs) <= 10 else 50
    met = (
        figures.dropped == 0
        and figures.lost_tokens == 0
        and figures.added
        and percentile(figures.added, 99) <= frame_limit
        and sends
        and percentile(sends, 99) <= 500
    )
    print(
        f"target (0 dropped, per-frame p99 ≤ {frame_limit} ms, send p99 ≤ 500 ms)"
        f" with {len(runs)} streams: {'met' if met else 'NOT met'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--rate", type=float, default=50.0, help="tokens per second")
    parser.add_argument("--ramp", type=float, default=1.0, help="seconds over which starts spread")
    parser.add_argument("--pin", action="store_true", help="daphne on CPU 0, the load elsewhere")
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="daphne processes sharing a Redis channel layer (Debian's redis-server);"
        " each reply is followed from a process that does not run it",
    )
    args = parser.parse_args()
    if args.tokens > 9999:
        parser.error("--tokens is at most 9999")

    cpus = sorted(os.sched_getaffinity(0))
    load_cpus = set(cpus[1:]) if args.pin and len(cpus) > 1 else None
    if load_cpus:
        os.sched_setaffinity(0, load_cpus)

    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    fake = context.Process(target=serve_fake, args=(theirs, args.tokens, args.rate), daemon=True)
    fake.start()
    fake_port = ours.recv()

    data_dir = Path(tempfile.mkdtemp(prefix="jarvis-bench-stream-"))
    django_in(data_dir, JARVIS_ALLOWED_HOSTS="127.0.0.1,localhost")
    from django.conf import settings

    started = time.perf_counter()
    people = make_people(args.clients + 1, fake_port)  # person 0 runs the warm-up
    print(f"{args.clients} people with a chat each in {time.perf_counter() - started:.1f}s")

    redis = redis_start() if args.processes > 1 else None
    extra_env = {"JARVIS_CHANNEL_LAYER": redis.url} if redis else {}
    env = daphne_env(data_dir, **extra_env)
    log = data_dir / "daphne.log"
    daphnes = [
        daphne_start(
            env, data_dir / f"daphne-{n}.log" if n else log, {cpus[0]} if load_cpus else None
        )
        for n in range(args.processes)
    ]
    ports = [port for _, port in daphnes]
    cookies = {"session": settings.SESSION_COOKIE_NAME, "csrf": settings.CSRF_COOKIE_NAME}
    args.pids = {"daphne": daphnes[0][0].pid, "fake": fake.pid, "clients": os.getpid()}
    args.pids |= {f"daphne {n + 1}": d.pid for n, (d, _) in enumerate(daphnes) if n}
    print(
        f"{args.clients} clients x {args.tokens} tokens at {args.rate:g} tokens/s,"
        f" starts over {args.ramp:g} s{', daphne pinned to CPU 0' if load_cpus else ''}"
        + (f", {args.processes} daphnes sharing Redis" if redis else "")
        + "…",
        flush=True,
    )
    try:
        load_before = os.getloadavg()
        runs, extra = asyncio.run(drive(ports, people, cookies, args))
        extra["load"] = (load_before, os.getloadavg())
    finally:
        for daphne, _ in daphnes:
            stop_process(daphne)
        if redis:
            redis.stop()
        ours.send("stop")
        emitted = ours.recv() if ours.poll(10) else {}
        fake.join(timeout=5)
    figures = analyse(runs, emitted, args)
    report(figures, runs, extra, args)
    if figures.errors or "Traceback" in log.read_text():
        print(f"daphne's log: {log}")


def redis_start():
    """Debian's redis-server on a free loopback port, as the tests start it."""
    sys.path.insert(0, str(ROOT))
    from tests.support.redis_server import Redis  # the tests' helper, from the repository root

    if not shutil.which("redis-server"):
        raise SystemExit("--processes needs redis-server (apt-get install redis-server)")
    server = Redis()
    server.start()
    return server


def stop_process(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


if __name__ == "__main__":
    main()
