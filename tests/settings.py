"""Settings for the test suite: the real settings, pointed at a throwaway data dir.

Child processes the tests start (daphne, the Huey consumer, manage.py) import
this module too and must land in the same directory, so the directory is
chosen once and passed down in JARVIS_TEST_ROOT. Each xdist worker gets its
own subdirectory (and so its own database, Huey file and uploads).
"""

import os
import tempfile
from pathlib import Path

_root = os.environ.get("JARVIS_TEST_ROOT")
if not _root:
    _root = tempfile.mkdtemp(prefix="jarvis-tests-")
    os.environ["JARVIS_TEST_ROOT"] = _root
_data = Path(_root) / os.environ.get("PYTEST_XDIST_WORKER", "main")
os.environ["JARVIS_DATA_DIR"] = str(_data)
os.environ.setdefault("JARVIS_HTTPS", "false")
# A developer's shell may export these for their own instance; the suite ignores
# them. Processes the suite starts (JARVIS_TEST_CHILD=1) get them set on purpose.
if os.environ.get("JARVIS_TEST_CHILD") != "1":
    for _name in (
        "JARVIS_DB_FILE",
        "JARVIS_HUEY_FILE",
        "JARVIS_SECRET_KEY",
        "JARVIS_VAULTS_ROOT",
        "JARVIS_FERNET_KEYS",
    ):
        os.environ.pop(_name, None)

from jarvis_site.settings import *  # noqa: E402,F403
from jarvis_site.settings import HUEY, INSTALLED_APPS  # noqa: E402

INSTALLED_APPS = [*INSTALLED_APPS, "tests.support"]

# Argon2 stays the hasher (a test checks it); its cost drops so fixtures are quick.
PASSWORD_HASHERS = ["tests.support.hashers.QuickArgon2PasswordHasher"]

# Most tests run tasks inline; tests of the worker start a real consumer, which
# gets JARVIS_TEST_HUEY_IMMEDIATE=0 (tests.support.processes.huey_consumer).
HUEY = {**HUEY, "immediate": os.environ.get("JARVIS_TEST_HUEY_IMMEDIATE", "1") == "1"}

# A real consumer asks its schedules which periodic tasks are due as it starts
# and then once a minute (huey.consumer.Scheduler.periodic_task_seconds). A
# test of a schedule firing sets JARVIS_TEST_SCHEDULE_CHECK_SECONDS for the
# consumer it starts, so the next check comes in seconds rather than a minute;
# what each check enqueues is still the schedules' own answer.
if os.environ.get("JARVIS_TEST_SCHEDULE_CHECK_SECONDS"):
    from huey.consumer import Scheduler

    Scheduler.periodic_task_seconds = int(os.environ["JARVIS_TEST_SCHEDULE_CHECK_SECONDS"])

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
