"""The sandbox children untrusted work runs in (apps.core.sandbox), with real
processes: each limit stops what a hostile file could make a parser do, and
the caller gets a verdict instead of a stuck or dead worker.

The tasks are tests.support.sandboxed's: they sleep, spin, allocate, crash,
reach for the database, flood the result, as a parser on a hostile file might.
"""

from __future__ import annotations

import itertools
import os
import threading
import time

import pytest
from django.conf import settings
from django.db import connection

from apps.core.sandbox import ChildLimits, run_in_child

LIMITS = ChildLimits(wall_seconds=20, cpu_seconds=10, memory_mb=200)


def test_a_child_runs_the_task_and_answers_in_json():
    outcome = run_in_child("test.echo", params={"word": "quince"}, blobs=[b"abc"], limits=LIMITS)
    assert outcome.ok
    assert outcome.value["params"] == {"word": "quince"}
    assert outcome.blobs == [b"cba"]
    assert outcome.value["pid"] != os.getpid()


def test_a_child_past_its_wall_clock_limit_is_stopped():
    outcome = run_in_child(
        "test.sleep", params={"seconds": 60}, limits=ChildLimits(1, cpu_seconds=10, memory_mb=200)
    )
    assert outcome.failure == "timeout"  # stopped: a sleep that ran its 60 s would be ok


def test_a_child_past_its_cpu_limit_is_stopped():
    outcome = run_in_child(
        "test.spin", params={"seconds": 60}, limits=ChildLimits(120, cpu_seconds=1, memory_mb=200)
    )
    assert outcome.failure == "cpu"


def test_a_child_past_its_memory_limit_gets_no_more_memory():
    too_much = run_in_child("test.allocate", params={"mb": 400}, limits=LIMITS)
    assert too_much.failure == "memory"
    within = run_in_child("test.allocate", params={"mb": 20}, limits=LIMITS)
    assert within.ok and within.value["allocated"] == 20 * 1024 * 1024


def test_a_stopped_child_takes_the_programs_it_started_with_it(tmp_path):
    """An OCR engine the parser runs must not outlive a parse past its limit."""
    marker = tmp_path / "pid"
    script = f"echo $$ > {marker}; exec sleep 60"
    outcome = run_in_child(
        "test.run_program",
        params={"argv": ["sh", "-c", script]},
        limits=ChildLimits(2, cpu_seconds=10, memory_mb=200),
    )
    assert outcome.failure == "timeout"
    program = int(marker.read_text())
    deadline = time.monotonic() + 10
    while _running(program):
        assert time.monotonic() < deadline, "the program outlived its parse"
        time.sleep(0.1)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_a_crashing_child_is_reported_and_the_next_request_still_works():
    outcome = run_in_child("test.segfault", params={}, limits=LIMITS)
    assert (outcome.failure, outcome.detail) == ("crashed", "SIGSEGV")
    assert run_in_child("test.echo", params={}, limits=LIMITS).ok


@pytest.mark.django_db
def test_a_child_cannot_open_the_database(owner):
    outcome = run_in_child("test.database", params={}, limits=LIMITS)
    assert outcome.failure == "error"
    assert "never opens the database" in outcome.detail


@pytest.mark.django_db
def test_a_child_holds_no_file_of_jarvis_open():
    connection.ensure_connection()  # this process has the database open
    outcome = run_in_child("test.open_files", params={}, limits=LIMITS)
    files = outcome.value["files"]
    assert not [f for f in files if str(settings.DATA_DIR) in f]
    # stdin, stdout, stderr and its own result socket; nothing else.
    assert len(files) == 4 and sum(f.startswith("socket:") for f in files) == 1


def test_a_child_that_floods_its_answer_is_cut_off():
    outcome = run_in_child(
        "test.flood", params={"mb": 8}, limits=LIMITS, max_result_bytes=1024 * 1024
    )
    assert outcome.failure == "oversized" and outcome.blobs == []


def test_a_cancelled_child_is_stopped_at_once():
    asked = threading.Event()
    timer = threading.Timer(0.5, asked.set)
    timer.start()
    outcome = run_in_child(
        "test.sleep", params={"seconds": 60}, limits=LIMITS, cancelled=asked.is_set
    )
    assert outcome.failure == "cancelled"  # a sleep that ran its 60 s would be ok


def test_children_run_side_by_side():
    outcomes = []

    def one() -> None:
        outcomes.append(run_in_child("test.sleep", params={"seconds": 2}, limits=LIMITS))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [o.ok for o in outcomes] == [True, True, True]
    # Each child says when it slept: one after another, no sleep would start
    # before the last one ended; side by side, each overlaps the one before.
    spans = sorted((o.value["started"], o.value["ended"]) for o in outcomes)
    assert all(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))


def test_a_dead_zygote_is_replaced_on_the_next_request():
    zygote = run_in_child("test.echo", params={}, limits=LIMITS).value["parent"]
    os.kill(zygote, 9)
    again = run_in_child("test.echo", params={"again": True}, limits=LIMITS)
    assert again.ok and again.value["parent"] != zygote
