"""Sandbox tasks that exist only in the test suite, for exercising the limits
of apps.core.sandbox with behaviour a hostile file could cause."""

from __future__ import annotations

import ctypes
import os
import subprocess
import time

from django.contrib.auth import get_user_model

from apps.core.sandbox import sandbox_task


@sandbox_task("test.echo")
def echo(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    return {"params": params, "pid": os.getpid(), "parent": os.getppid()}, [
        blob[::-1] for blob in blobs
    ]


@sandbox_task("test.sleep")
def sleep(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    started = time.time()  # wall clock: comparable between children
    time.sleep(float(params["seconds"]))
    return {"slept": True, "started": started, "ended": time.time()}, []


@sandbox_task("test.spin")
def spin(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    deadline = time.process_time() + float(params["seconds"])
    while time.process_time() < deadline:
        pass
    return {"spun": True}, []


@sandbox_task("test.allocate")
def allocate(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    hoard = bytearray(int(params["mb"]) * 1024 * 1024)
    return {"allocated": len(hoard)}, []


@sandbox_task("test.segfault")
def segfault(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    ctypes.string_at(0)  # reads address 0: SIGSEGV, as a crashing C library would
    return {}, []


@sandbox_task("test.database")
def database(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    return {"users": get_user_model().objects.count()}, []


@sandbox_task("test.open_files")
def open_files(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    targets = []
    for name in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{name}"))
        except OSError:
            continue
    return {"files": targets}, []


@sandbox_task("test.flood")
def flood(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    return {}, [b"x" * (int(params["mb"]) * 1024 * 1024)]


@sandbox_task("test.run_program")
def run_program(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """Starts a program and waits for it, as an OCR task would run tesseract."""
    process = subprocess.Popen(params["argv"])
    return {"pid": process.pid, "code": process.wait()}, []
