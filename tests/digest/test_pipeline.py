"""The digest end to end: fake arXiv, fake bioRxiv, fake scoring model, the
real library ingest (and embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.digest import scoring
from apps.digest.models import Digest
from apps.digest.papers import DigestFailed
from apps.digest.services import digest_run, summary_json
from apps.library.models import Document
from apps.library.services.adding import papers_source
from tests.digest.conftest import NOW, library_titles, papers_in, scorer
from tests.fakes.llm import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def known_paper(reader):
    """A paper the reader already has (added by hand earlier)."""
    return Document.objects.create(
        source=papers_source(reader),
        path="arXiv 2602.10005",
        title="Already Read: Attention Over Receipts",
        kind=Document.Kind.PAPER,
        arxiv_id="2602.10005",
        url="https://arxiv.org/abs/2602.10005",
        content_hash="0" * 64,
        status=Document.Status.READY,
    )


def run(user, **options) -> Digest:
    result = digest_run(user=user, trigger=Digest.Trigger.COMMAND, now=NOW, **options)
    assert result.ran
    return result.digest


def test_a_digest_end_to_end(reader, known_paper, fake_arxiv, fake_biorxiv, llm, real_embedder):
    digest = run(reader)

    assert digest.status == Digest.Status.OK
    data = summary_json(digest)
    assert data == {
        "digest_path": data["digest_path"],
        "document_id": digest.document_id,
        # arXiv cs.LG 4 + cs.CL 2, bioRxiv bioinformatics 4 + "cytometry" 2
        "fetched": 12,
        # one arXiv paper in two categories, one preprint found by category and keyword,
        # one preprint with an arXiv paper's title, one with an arXiv paper's DOI,
        # one paper already in the library
        "deduplicated": 7,
        "scored": 7,
        "tiers": {"must": 2, "worth": 2, "skim": 3},
        "full_text": 1,
        "summaries": 3,
        "failed_batches": 0,
    }

    # Only papers of the week, each once, the known one not at all, were scored.
    scored = [p["title"] for r in llm.chat_requests for p in papers_in(r.json)]
    assert len(scored) == 7
    assert "An Old Paper From Last Month" not in scored
    assert "Already Read: Attention Over Receipts" not in scored
    assert "Sparse gating for mixture models" not in scored  # the bioRxiv twin
    # The research context reached the prompt.
    assert (
        "I build cytometry foundation models."
        in llm.chat_requests[0].json["messages"][0]["content"]
    )

    # The file, in tiers, with links.
    path = Path(data["digest_path"])
    assert path.name == "digest-2026-03-02.md" and path.parent.name == str(reader.pk)
    text = path.read_text()
    assert text == digest.markdown
    must, worth, skim = (text.index(h) for h in ("## Must read", "## Worth reading", "## Skim"))
    assert must < text.index("A Cytometry Foundation Model") < worth
    assert must < text.index("A Spatial Atlas") < worth
    assert worth < text.index("Sparse Gating for Mixture Models") < skim
    assert skim < text.index("Noise in Benchmarks")
    assert "(<https://arxiv.org/abs/2602.10001>)" in text
    assert "(<https://doi.org/10.1101/2026.02.27.000001>)" in text
    assert not list(path.parent.glob(".*.partial"))

    # The library: the digest, the must-read in full text, the rest as summary entries.
    titles = library_titles(reader)
    assert titles["Paper digest — 2026-03-02"] == "note"
    assert titles["A Cytometry Foundation Model for Every Panel"] == "paper"
    assert titles["A Spatial Atlas of the Developing Gut"] == "note"
    assert titles["Sparse Gating for Mixture Models"] == "note"
    assert titles["Single-Cell Tokens for Transformers"] == "note"
    assert "Noise in Benchmarks, Revisited" not in titles  # only in the digest document
    assert len(fake_arxiv.pdf_requests) == 1

    document = digest.document
    assert document.status == Document.Status.READY
    assert document.source == papers_source(reader)
    assert "paper-digest" in set(document.tag_rows.values_list("tag", flat=True))
    assert "Noise in Benchmarks" in " ".join(document.chunks.values_list("text", flat=True))

    full = Document.objects.get(source__owner=reader, arxiv_id="2602.10001")
    assert full.status == Document.Status.READY and full.chunks.exists()
    summary = Document.objects.get(source__owner=reader, arxiv_id="2602.10002")
    assert summary.url == "https://arxiv.org/abs/2602.10002"
    assert "Summary of Sparse Gating" in " ".join(summary.chunks.values_list("text", flat=True))

    # A bioRxiv must-read has no PDF: a summary entry, with a warning saying so.
    assert any("A Spatial Atlas" in w and "summary entry" in w for w in digest.warnings)
    atlas = next(i for i in digest.items if i["title"].startswith("A Spatial Atlas"))
    assert atlas["library_mode"] == "summary" and atlas["tier"] == "must"


def test_a_pdf_that_cannot_be_fetched_falls_back_to_a_summary_entry(
    reader, fake_arxiv, fake_biorxiv, llm
):
    fake_arxiv.fail_next(None, status=404, target="pdf")
    digest = run(reader)
    assert digest.status == Digest.Status.OK
    assert digest.stats["full_text"] == 0
    entry = Document.objects.get(source__owner=reader, arxiv_id="2602.10001")
    assert entry.kind == Document.Kind.NOTE and entry.status == Document.Status.READY
    assert any(
        "A Cytometry Foundation" in w and "full text not added" in w for w in digest.warnings
    )
    # No failed half-entry of the PDF stays behind.
    assert not Document.objects.filter(source__owner=reader, kind="paper").exists()


def test_a_malformed_answer_twice_fails_that_batch_and_the_digest_lists_the_rest(
    reader, known_paper, fake_arxiv, fake_biorxiv, llm, monkeypatch
):
    monkeypatch.setattr(scoring, "MAX_BATCH", 4)  # 7 papers: batches of 4 and 3
    llm.queue(Reply(text="Sure! Here are the scores: 9, 8, 7"), Reply(text='{"papers": ['))
    digest = run(reader)

    assert digest.status == Digest.Status.OK
    assert len(llm.chat_requests) == 3  # the first batch twice, the second once
    retry = llm.chat_requests[1].json["messages"]
    assert "could not be used" in retry[-1]["content"] and retry[-2]["role"] == "assistant"
    assert summary_json(digest)["failed_batches"] == 1
    failure = digest.failed_batches[0]
    assert failure["number"] == 1 and len(failure["papers"]) == 4
    assert "malformed twice" in failure["reason"]
    unscored = [i for i in digest.items if i["tier"] == "unscored"]
    assert len(unscored) == 4 and all(i["score"] is None for i in unscored)
    assert digest.stats["scored"] == 3
    text = digest.markdown
    assert "## Not scored" in text and "Batch 1 (4 papers) could not be scored" in text
    for item in unscored:
        assert item["title"].split(":")[0] in text


def test_every_batch_malformed_fails_the_digest(reader, fake_arxiv, fake_biorxiv, llm):
    llm.default = Reply(text="not json")
    with pytest.raises(DigestFailed, match="no batch could be scored"):
        digest_run(user=reader, trigger=Digest.Trigger.COMMAND, now=NOW)
    assert not Document.objects.filter(source__owner=reader).exists()


@pytest.mark.parametrize("fault", ["fail", "garbage"])
def test_arxiv_down_fails_the_digest_with_no_digest_document(
    reader, fake_arxiv, fake_biorxiv, llm, fault
):
    getattr(fake_arxiv, f"{fault}_next")(None)
    with pytest.raises(DigestFailed, match=r"arXiv cs\.LG") as failure:
        digest_run(user=reader, trigger=Digest.Trigger.COMMAND, now=NOW)
    assert "tried 3 times" in str(failure.value)
    digest = Digest.objects.get(owner=reader)
    assert digest.status == Digest.Status.FAILED and "arXiv" in digest.error
    assert digest.document is None and not digest.file_path
    assert not Document.objects.filter(source__owner=reader).exists()
    assert llm.chat_requests == []
    assert len(fake_arxiv.api_requests) == 3


def test_biorxiv_down_fails_the_digest(reader, fake_arxiv, fake_biorxiv, llm):
    fake_biorxiv.fail_next(None)
    with pytest.raises(DigestFailed, match=r"bioRxiv bioinformatics.*503"):
        digest_run(user=reader, trigger=Digest.Trigger.COMMAND, now=NOW)
    assert not Document.objects.filter(source__owner=reader).exists()


def test_arxiv_glitches_are_retried(reader, fake_arxiv, fake_biorxiv, llm):
    fake_arxiv.empty_next()
    fake_arxiv.fail_next(status=503)
    fake_arxiv.malformed_next()
    digest = run(reader)
    assert digest.stats["fetched"] == 12
    assert len(fake_arxiv.api_requests) >= 4


def test_the_scoring_model_unreachable_fails_the_digest(reader, fake_arxiv, fake_biorxiv, llm):
    llm.default = Reply(status=401)
    with pytest.raises(DigestFailed, match="scoring model failed"):
        digest_run(user=reader, trigger=Digest.Trigger.COMMAND, now=NOW)
    assert not Document.objects.filter(source__owner=reader).exists()


def test_a_second_run_finds_the_papers_in_the_library(reader, fake_arxiv, fake_biorxiv, llm):
    first = run(reader)
    llm.reset()
    llm.default = scorer
    second = run(reader)
    # Every must/worth paper is in the library now; only the skim ones come back.
    assert second.stats["deduplicated"] == first.stats["tiers"]["skim"]
    assert second.file_path != first.file_path  # a second file for the same day
    assert second.document_id != first.document_id


def test_the_digest_json_is_what_the_command_prints(reader, fake_arxiv, fake_biorxiv, llm):
    digest = run(reader)
    data = json.loads(json.dumps(summary_json(digest)))
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
