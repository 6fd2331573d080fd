"""Large request bodies against a real daphne: what they cost the server.

Starts a throwaway Jarvis (daphne on loopback), then sends `--posts`
concurrent multipart POSTs of `--size-mb` each to /accounts/login/ (signed
out, as anyone on the network could), streaming each body in 1 MB writes
until the server answers or closes. Meanwhile it samples daphne's resident
memory every 20 ms and asks /healthz every 50 ms. Prints daphne's peak RSS
above its idle RSS, /healthz p50/p95/max while the flood lasted, what each
POST got back, and the load average.

Targets (issue 22): peak RSS +100 MB at most, /healthz p95 < 200 ms for
4 x 200 MB.

    .venv/bin/python bench/body_flood.py [--posts 4] [--size-mb 200] [--cookie]

`--cookie` sends a (forged) session cookie, so the upload bound applies
instead of the signed-out one; with `--size-mb` under JARVIS_UPLOAD_MAX_MB
that shows what a body the server does read costs it.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time

from _support import ROOT, Instance, percentile

CHUNK = 1024 * 1024


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def serve(instance: Instance, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
         "jarvis_site.asgi:application"],
        env={**instance.env, "JARVIS_ALLOWED_HOSTS": "127.0.0.1,localhost"},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=None if os.environ.get("BENCH_SHOW_SERVER") else subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if healthz_ms(port) is not None:
                return process
        except OSError:
            time.sleep(0.3)
    process.terminate()
    raise SystemExit("daphne did not start")


def healthz_ms(port: int) -> float | None:
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
    if not reply.startswith(b"HTTP/1.1 "):
        return None
    return (time.perf_counter() - started) * 1000


def flood_one(port: int, size: int, cookie: bool, outcome: list[str]) -> None:
    boundary = "benchboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(head) + size + len(tail)
    lines = [
        "POST /accounts/login/ HTTP/1.1",
        "Host: 127.0.0.1",
        f"Content-Type: multipart/form-data; boundary={boundary}",
        f"Content-Length: {length}",
    ]
    if cookie:
        lines.append("Cookie: sessionid=forged; csrftoken=" + "a" * 32)
    block = b"\0" * CHUNK
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        try:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + head)
            while sent < size:
                piece = block[: min(CHUNK, size - sent)]
                sock.sendall(piece)
                sent += len(piece)
            sock.sendall(tail)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            reply = sock.recv(4096)
        except (ConnectionResetError, TimeoutError) as error:
            reply = repr(error).encode()
    status = reply.split(b"\r\n", 1)[0].decode(errors="replace") or "closed, no reply"
    outcome.append(f"{status} after {sent // CHUNK} MB sent")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--posts", type=int, default=4)
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--cookie", action="store_true", help="send a forged session cookie")
    parser.add_argument("--port", type=int, default=8793)
    args = parser.parse_args()

    instance = Instance()
    instance.setup()
    # The refusal pages (CSRF, 413 from Django) render with hashed static names.
    instance.manage("collectstatic", "--noinput", "-v", "0")
    server = serve(instance, args.port)
    try:
        time.sleep(2)  # let start-up allocations settle
        idle = rss_kb(server.pid)
        peak = idle
        done = threading.Event()
        latencies: list[float] = []

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, rss_kb(server.pid))
                time.sleep(0.02)

        def probe() -> None:
            while not done.is_set():
                took = healthz_ms(args.port)
                if took is not None:
                    latencies.append(took)
                time.sleep(0.05)

        outcome: list[str] = []
        helpers = [threading.Thread(target=sample), threading.Thread(target=probe)]
        posts = [
            threading.Thread(
                target=flood_one,
                args=(args.port, args.size_mb * 1024 * 1024, args.cookie, outcome),
            )
            for _ in range(args.posts)
        ]
        for thread in helpers + posts:
            thread.start()
        started = time.monotonic()
        for thread in posts:
            thread.join()
        time.sleep(1)  # what the server still does after the last reply
        done.set()
        for thread in helpers:
            thread.join()
        took = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=20)

    who = "forged session cookie" if args.cookie else "signed out"
    print(f"{args.posts} x {args.size_mb} MB multipart POST to /accounts/login/ ({who})")
    for line in sorted(outcome):
        print(f"  {line}")
    print(f"flood lasted {took:.1f} s")
    print(f"daphne RSS idle {idle / 1024:.0f} MB, peak {peak / 1024:.0f} MB, "
          f"delta +{(peak - idle) / 1024:.0f} MB (target <= +100 MB)")  # fmt: skip
    print(
        f"/healthz during the flood: n={len(latencies)} p50 {percentile(latencies, 50):.1f} ms, "
        f"p95 {percentile(latencies, 95):.1f} ms, max {max(latencies, default=float('nan')):.1f} ms "
        "(target p95 < 200 ms)"
    )
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
