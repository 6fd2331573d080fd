"""Helpers the benchmark scripts share: a throwaway Jarvis instance driven
through its own `manage.py` commands, exactly as a person would."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BENCHMARK = ROOT.parent / "shared" / "benchmarks" / "version-aware-rag"
BENCH_PASSWORD = "benchmark passphrase"


class Instance:
    """A Jarvis with its own data dir; commands run as subprocesses."""

    def __init__(self, data_dir: Path | None = None, vaults_root: Path | None = None) -> None:
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="jarvis-bench-"))
        self.env = {
            key: value for key, value in os.environ.items() if not key.startswith("JARVIS_")
        }
        self.env.update(
            {
                "DJANGO_SETTINGS_MODULE": "jarvis_site.settings",
                "JARVIS_DATA_DIR": str(self.data_dir),
                "JARVIS_HTTPS": "false",
                "JARVIS_LOG_LEVEL": "WARNING",
            }
        )
        if vaults_root is not None:
            self.env["JARVIS_VAULTS_ROOT"] = str(vaults_root)

    def manage(self, *args: str, input: str | None = None) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            input=input,
            capture_output=True,
            text=True,
            env=self.env,
            cwd=ROOT,
        )
        if result.returncode != 0:
            raise SystemExit(f"manage.py {' '.join(args)} failed:\n{result.stderr}")
        return result.stdout

    def setup(self, user: str = "bench") -> None:
        self.manage("migrate", "--noinput", "-v", "0")
        self.add_user(user)

    def add_user(self, user: str) -> None:
        """A household member (`users add` puts people in the household group)."""
        self.manage("users", "add", user, "--password-stdin", input=BENCH_PASSWORD + "\n")

    def json_lines(self, *args: str) -> list[dict]:
        return [json.loads(line) for line in self.manage(*args).splitlines() if line.strip()]


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * pct / 100
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def django_in(data_dir: Path, **env: str) -> None:
    """Set Django up in this process against a throwaway data dir, migrated."""
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "jarvis_site.settings",
            "JARVIS_DATA_DIR": str(data_dir),
            "JARVIS_HTTPS": "false",
            "JARVIS_LOG_LEVEL": "WARNING",
            **env,
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def corpus_paragraphs(limit: int, min_chars: int = 200, max_chars: int = 900) -> list[str]:
    """Real English prose for synthetic benchmarks: docstrings of the Python
    standard library (always installed), deduplicated, in a stable order."""
    import ast
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    seen: dict[str, None] = {}
    for path in sorted(stdlib.rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node)
                if doc and min_chars <= len(doc):
                    seen.setdefault(" ".join(doc.split())[:max_chars])
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


class Operator:
    """Registers folders as the server's operator does (every permission)."""

    def has_perm(self, perm: str) -> bool:
        return True


def bench_user_with_vault(folder: Path):
    """A user owning `folder` as a registered vault source (Django must be set up)."""
    from apps.accounts.services import user_create
    from apps.library.services.sources import source_register

    user = user_create(username="bench", password="x" * 12, validate=False)
    source = source_register(actor=Operator(), owner=user, name="bench", path=str(folder))
    return user, source


WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


async def websocket_open(
    port: int, path: str, headers: dict[str, str], *, limit: int = 2**16
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A websocket client handshake by hand (the benches read frames themselves,
    to time them without a client library's buffering)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=limit)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()  # noqa: S324 (the protocol's)
    if not head.startswith("HTTP/1.1 101") or accept not in head:
        writer.close()
        raise ConnectionError(f"websocket handshake refused: {head.splitlines()[0]}")
    return reader, writer


def daphne_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a daphne child on `data_dir` (no JARVIS_ setting of
    the caller's leaks in)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("JARVIS_")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "jarvis_site.settings",
            "JARVIS_DATA_DIR": str(data_dir),
            "JARVIS_HTTPS": "false",
            "JARVIS_LOG_LEVEL": "WARNING",
            "JARVIS_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
            **extra,
        }
    )
    return env


def daphne_start(env: dict[str, str], log: Path, cpus: set[int] | None = None):
    """A real daphne serving jarvis_site.asgi in a session of its own (so
    Linux's autogroup scheduler does not lump it with the load generator),
    optionally pinned to `cpus`; returns (process, port) once it listens."""
    sys.path.insert(0, str(ROOT))
    from tests.support.processes import free_port, wait_for_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
         "jarvis_site.asgi:application"],
        env=env, cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    if cpus:
        os.sched_setaffinity(process.pid, cpus)
    wait_for_port(port, process)
    return process, port
