"""`manage.py serve` (what `make run` ends with): web and worker together,
and Ctrl-C stops both."""

import signal
import subprocess
import sys
import threading

import httpx
import pytest

from tests.support.processes import ROOT, child_env, free_port, wait_for_port


@pytest.mark.django_db(transaction=True)
def test_serve_runs_web_and_worker_and_ctrl_c_stops_both():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--port", str(port)],
        env=child_env(JARVIS_TEST_HUEY_IMMEDIATE="0"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    worker_up = threading.Event()

    def read() -> None:
        # Ctrl-C is pressed only once the worker says it is up: on a loaded
        # machine its imports can outlast the web server's.
        for line in process.stdout:
            lines.append(line)
            if "Huey consumer started" in line:
                worker_up.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_for_port(port, process)
        response = httpx.get(f"http://127.0.0.1:{port}/accounts/login/")
        assert response.status_code == 200
        assert "Sign in to Jarvis" in response.text
        worker_up.wait(timeout=120)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        reader.join(timeout=10)
    output = "".join(lines)
    assert process.returncode == 0, output
    assert "(web, worker)" in output
    assert "Huey consumer started" in output
    assert "did not stop in time" not in output
    assert output.rstrip().endswith("stopped")
