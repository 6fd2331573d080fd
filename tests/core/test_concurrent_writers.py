"""A web-side and a worker-side writer hammer the database at once: no
"database is locked", because transactions are IMMEDIATE and the busy timeout
lets each wait its turn."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from apps.core.models import JobRun
from tests.support.processes import ROOT, child_env

WRITER = r"""
import json, sys, time
import django
django.setup()
from django.db import OperationalError, transaction
from apps.core.models import JobRun

from pathlib import Path

role, count, gate = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
# Both writers start together, whatever their start-up took: each says it is
# ready, then waits for the other.
(gate / role).touch()
while len(list(gate.iterdir())) < 2:
    time.sleep(0.01)
written = locked = other = 0
for _ in range(count):
    try:
        # Read, then write, in one transaction: the pattern that fails with
        # "database is locked" when a deferred transaction tries to upgrade.
        with transaction.atomic():
            count = JobRun.objects.filter(job=role).count()
            run = JobRun.objects.create(job=role, summary=f"{role} #{count}")
            run.summary += " updated"
            run.save(update_fields=["summary"])
        written += 1
    except OperationalError as exc:
        if "locked" in str(exc):
            locked += 1
        else:
            other += 1
print(json.dumps({"written": written, "locked": locked, "other": other}))
"""


WRITES = 40


@pytest.mark.django_db(transaction=True)
def test_web_and_worker_writers_never_see_database_is_locked(tmp_path: Path):
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, role, str(WRITES), str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
            cwd=ROOT,
        )
        for role in ("web", "worker")
    ]
    results = {}
    for role, process in zip(("web", "worker"), writers, strict=True):
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        results[role] = json.loads(out.strip().splitlines()[-1])

    for role, result in results.items():
        assert result["locked"] == 0, (role, result)
        assert result["other"] == 0, (role, result)
        assert result["written"] == WRITES, (role, result)
    # Every committed write is in the database: nothing was lost to a retry.
    assert JobRun.objects.count() == results["web"]["written"] + results["worker"]["written"]
