"""manage.py digest: the run form and `configure`."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.accounts import permissions
from apps.core.models import JobRun
from apps.digest.models import Digest, DigestSettings
from apps.digest.selectors import digest_settings_for
from apps.instance.selectors import instance_settings
from tests.digest.conftest import NOW, grant

pytestmark = pytest.mark.django_db


def digest(*args: str) -> str:
    out = StringIO()
    call_command("digest", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def frozen(monkeypatch):
    """The command runs on the real clock; the fixture papers are dated around NOW."""
    from django.utils import timezone

    monkeypatch.setattr(timezone, "now", lambda: NOW)


def test_when_disabled_it_explains_how_to_enable_and_fetches_nothing(
    reader, digest_on, fake_arxiv, fake_biorxiv, llm
):
    digest_on.digest_enabled = False
    digest_on.save()
    text = digest("--user", "olivia", "--json")
    assert "turned off" in text and "configure --instance --enable" in text and "--force" in text
    assert fake_arxiv.requests == [] and fake_biorxiv.requests == [] and llm.requests == []
    assert not Digest.objects.exists()


def test_json_output(reader, fake_arxiv, fake_biorxiv, llm, frozen):
    data = json.loads(digest("--user", "olivia", "--json"))
    assert set(data) == {
        "digest_path",
        "document_id",
        "fetched",
        "deduplicated",
        "scored",
        "tiers",
        "full_text",
        "summaries",
        "failed_batches",
    }
    assert data["fetched"] == 12 and data["tiers"] == {"must": 2, "worth": 2, "skim": 4}
    assert data["full_text"] == 1 and data["summaries"] == 3 and data["failed_batches"] == 0
    assert data["digest_path"].endswith("digest-2026-03-02.md")
    assert Digest.objects.get(owner=reader).document_id == data["document_id"]
    run = JobRun.objects.get(job="digest_run")
    assert run.user == reader and run.outcome == JobRun.Outcome.OK


def test_force_runs_even_when_disabled(reader, digest_on, fake_arxiv, fake_biorxiv, llm, frozen):
    digest_on.digest_enabled = False
    digest_on.save()
    text = digest("--force", "--user", "olivia")
    assert "Paper digest — 2026-03-02" in text and "must read 2" in text
    assert Digest.objects.filter(owner=reader, status="ok").count() == 1


def test_without_user_it_runs_everyone_whose_digest_is_on(
    reader, fake_arxiv, fake_biorxiv, llm, frozen
):
    data = json.loads(digest("--json"))
    assert [d["user"] for d in data] == ["olivia"]


def test_a_failed_digest_exits_non_zero_with_the_reason(reader, fake_arxiv, fake_biorxiv, llm):
    fake_arxiv.fail_next(None)
    err = StringIO()
    with pytest.raises(CommandError, match="1 digest"):
        call_command("digest", "--user", "olivia", stdout=StringIO(), stderr=err)
    assert "arXiv cs.LG" in err.getvalue()
    assert JobRun.objects.get(job="digest_run").outcome == JobRun.Outcome.ERROR


def test_configure_sets_what_the_page_sets(owner, local_model, digest_on, tmp_path):
    user = grant(owner, permissions.RUN_PAPER_DIGEST)
    context = tmp_path / "context.md"
    context.write_text("Cytometry and single-cell methods.\n")
    text = digest(
        "configure", "--user", "olivia", "--enable",
        "--arxiv", "cs.LG:50", "q-bio.GN:20",
        "--biorxiv", "bioinformatics:100",
        "--keyword", "spatial transcriptomics:30", "cytometry:50",
        "--model", "home:scorer-7b",
        "--context-file", str(context),
        "--folder", "weekly",
    )  # fmt: skip
    conf = digest_settings_for(user=user)
    assert conf.enabled
    assert conf.arxiv_categories == [["cs.LG", 50], ["q-bio.GN", 20]]
    assert conf.biorxiv_categories == [["bioinformatics", 100]]
    assert conf.biorxiv_keywords == [["spatial transcriptomics", 30], ["cytometry", 50]]
    assert conf.model_label == "home:scorer-7b"
    assert conf.research_context == "Cytometry and single-cell methods."
    assert conf.folder == "weekly"
    assert "arXiv: cs.LG:50, q-bio.GN:20" in text

    digest("configure", "--user", "olivia", "--disable")
    conf.refresh_from_db()
    assert not conf.enabled and conf.arxiv_categories  # the rest is kept


def test_configure_reports_bad_values_and_changes_nothing(owner, local_model, cloud_model):
    grant(owner, permissions.RUN_PAPER_DIGEST)
    with pytest.raises(CommandError) as failure:
        digest("configure", "--user", "olivia", "--arxiv", "cs.LG:9000", "--model", "cloud:big")
    assert "arxiv: “cs.LG:9000”" in str(failure.value)
    assert "model: you may not use cloud models" in str(failure.value)
    assert not DigestSettings.objects.exists()


def test_configure_needs_the_permission(owner):
    with pytest.raises(CommandError, match="permission"):
        digest("configure", "--user", "olivia", "--arxiv", "cs.LG:5")


def test_configure_the_instance_switch():
    assert "off" in digest("configure", "--instance")
    assert "now on" in digest("configure", "--instance", "--enable")
    assert instance_settings().digest_enabled
    digest("configure", "--instance", "--disable")
    assert not instance_settings().digest_enabled


@pytest.mark.parametrize(
    "args",
    [
        ("--arxiv", "cs.LG:5"),
        ("--enable",),
        ("configure", "--json", "--user", "olivia"),
        ("configure",),
        ("configure", "--instance", "--user", "olivia", "--enable"),
        ("configure", "--enable", "--disable", "--user", "olivia"),
    ],
)
def test_options_of_the_other_form_are_refused(owner, args):
    with pytest.raises(CommandError):
        digest(*args)


def test_an_unknown_user(digest_on):
    with pytest.raises(CommandError, match="no user named"):
        digest("--user", "nobody")


def test_nobody_set_up(digest_on, llm):
    assert json.loads(digest("--json")) == []
    assert "nothing fetched" in digest()
    assert llm.requests == []
