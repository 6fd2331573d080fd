"""run_command against a real sshd: a fresh shell per call, cwd as a parameter,
capped output, and a timeout that really ends the remote process."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.agents import ssh
from apps.agents.errors import CommandTimeout, SSHError
from tests.agents.conftest import run, with_connection
from tests.fakes.sshd import processes_matching


def run_remote(target, command, **kwargs) -> ssh.CommandResult:
    async def work(conn):
        return await ssh.run_command(conn, command, **kwargs)

    return run(with_connection(target, work))


def test_exit_code_stdout_and_stderr_come_back_apart(target):
    result = run_remote(target, "echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.signal is None and result.stdout_cut == 0


def test_the_command_runs_in_cwd_even_with_spaces_and_quotes(target, sshd):
    folder = sshd.workdir('it\'s a "dir" with $HOME and `x`')
    (folder / "marker.txt").write_text("here")
    result = run_remote(target, "pwd; cat marker.txt", cwd=str(folder))
    assert result.stdout == f"{folder}\nhere"
    assert result.exit_code == 0


def test_each_call_is_a_fresh_shell(target, sshd):
    folder = sshd.workdir("fresh")

    async def work(conn):
        await ssh.run_command(conn, "cd /; export JARVIS_X=1", cwd=str(folder))
        return await ssh.run_command(conn, 'pwd; echo "[${JARVIS_X:-unset}]"', cwd=str(folder))

    assert run(with_connection(target, work)).stdout == f"{folder}\n[unset]\n"


def test_a_missing_cwd_fails_the_command_not_the_connection(target):
    result = run_remote(target, "echo should-not-run", cwd="/no/such dir")
    assert result.exit_code == 126
    assert "should-not-run" not in result.stdout
    assert "/no/such dir" in result.stderr


def test_the_command_text_reaches_bash_untouched(target):
    command = "printf '%s|' \"a b\" 'c'\"'\"'d' \\$HOME; echo; [[ 1 == 1 ]] && echo bash"
    result = run_remote(target, command)
    assert result.stdout == "a b|c'd|$HOME|\nbash\n"


def test_stdin_is_closed_so_a_reader_does_not_hang(target):
    assert run_remote(target, "cat; echo done", timeout=10).stdout == "done\n"


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]),
        max_size=40,
    )
)
def test_quote_survives_any_text_in_sh_and_bash(text):
    for shell in ("/bin/sh", "/bin/bash"):
        line = f"printf %s {ssh.quote(text)}"
        out = subprocess.run([shell, "-c", line], capture_output=True, timeout=10).stdout
        assert out.decode("utf-8", errors="surrogateescape") == text


def test_text_no_shell_can_receive_is_refused_before_anything_runs(target):
    for bad in ("echo a\0b", "echo \ud800"):
        with pytest.raises(SSHError, match=r"NUL byte|valid Unicode"):
            run_remote(target, bad)


def test_a_command_past_its_timeout_is_killed_on_the_server(target):
    marker = f"{secrets.randbelow(10**6) + 10**6}.5"  # sleep 1234567.5: unique argv

    async def work(conn):
        task = asyncio.create_task(
            ssh.run_command(conn, f"echo started; sleep {marker}; echo never", timeout=2)
        )
        # The check below can see the process: it is there while it runs.
        for _ in range(100):
            if processes_matching(f"sleep {marker}"):
                break
            await asyncio.sleep(0.02)
        running = processes_matching(f"sleep {marker}")
        with pytest.raises(CommandTimeout) as caught:
            await task
        return running, caught.value

    running, timeout = run(with_connection(target, work))
    assert running, "the remote sleep never showed up"
    assert timeout.partial.stdout == "started\n" and timeout.partial.exit_code is None
    assert "longer than 2 s" in str(timeout)
    deadline = time.monotonic() + 5
    while processes_matching(f"sleep {marker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_matching(f"sleep {marker}") == []


def test_fifty_megabytes_of_output_are_cut_with_a_note_and_never_held(target):
    tracemalloc.start()
    try:
        result = run_remote(target, "yes | head -c 52428800", timeout=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0
    assert result.stdout_bytes == 52_428_800
    kept = ssh.MAX_OUTPUT
    assert result.stdout_cut == 52_428_800 - kept
    assert f"[… {52_428_800 - kept:,} bytes cut: the output was 52,428,800 bytes …]" in (
        result.stdout
    )
    assert result.stdout.startswith("y\ny\n") and result.stdout.endswith("y\ny\n")
    assert len(result.stdout) < kept + 200
    assert peak < 20 * 1024 * 1024, f"peak Python memory {peak:,} bytes"


def test_the_end_of_a_long_output_is_kept_where_errors_usually_are(target):
    result = run_remote(target, "seq 1 200000; echo 'error: the last line' >&2", max_output=1000)
    assert result.stdout.startswith("1\n2\n3\n") and result.stdout.endswith("199999\n200000\n")
    assert result.stderr == "error: the last line\n"


def test_binary_output_is_decoded_with_replacement(target):
    result = run_remote(target, r"printf 'ok\377\376\000end'")
    assert result.stdout == "ok\ufffd\ufffd\x00end"
    assert result.stdout_bytes == 8
