"""A finished or failed digest tells its owner with a notice (a toast on
their open pages); nobody else hears of it."""

from __future__ import annotations

from apps.core.models import Notice
from apps.digest.models import Digest
from apps.digest.tasks import enqueue_run
from tests.digest.conftest import NOW


def test_a_finished_digest_tells_its_owner_only(reader, member, fake_arxiv, fake_biorxiv, llm):
    enqueue_run(reader, trigger=Digest.Trigger.MANUAL, at=NOW)

    digest = Digest.objects.get(owner=reader)
    assert digest.status == Digest.Status.OK, digest.error
    notice = Notice.objects.get()
    assert notice.user == reader
    assert notice.level == Notice.Level.OK
    assert notice.text == f"Your paper digest is ready: {digest.title}."
    assert notice.url == f"/digests/{digest.pk}/"


def test_a_failed_digest_says_why(reader, fake_biorxiv, llm, settings):
    settings.ARXIV_API_URL = "http://127.0.0.1:9/api"  # nothing listens there
    settings.FETCH_ALLOW_HOSTS = [*settings.FETCH_ALLOW_HOSTS, "127.0.0.1:9"]
    enqueue_run(reader, trigger=Digest.Trigger.MANUAL, at=NOW)  # the task's error is logged
    digest = Digest.objects.get(owner=reader)
    assert digest.status == Digest.Status.FAILED
    notice = Notice.objects.get(user=reader)
    assert notice.level == Notice.Level.ERROR
    assert notice.text == f"Your paper digest could not be made: {digest.error}."
