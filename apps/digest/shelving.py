"""Putting a digest and its papers into a person's library, through the
library's front door (apps.library.services: `document_add`, `paper_add`,
`document_ingest` with a `DocumentMeta`).

Everything goes into the person's Papers collection (cloud-allowed, like every
paper they add themselves):

- the digest itself, a Markdown note titled "Paper digest — DATE", tagged
  `paper-digest`, so every paper it mentions is searchable;
- papers scoring 9 and above in full text: the arXiv PDF, exactly as if the
  person had added it on the Add page (`paper_add`);
- papers scoring 8 to 9, and any full text that could not be had, as summary
  entries: a Markdown note with the paper's title, authors, link, DOI and
  arXiv id set on the document, tagged `paper-summary`, holding the scoring
  run's summary and reason and the abstract (no extra model call). Adding the
  paper from the Add page later finds the entry and offers to replace it.

Summary entries are notes rather than papers because the library parses a
paper's original as a PDF (reprocessing would fail them); their metadata
still makes the library's duplicate checks find them.
"""

from __future__ import annotations

import logging
from datetime import date

from apps.core.errors import JarvisError
from apps.core.fetch import FetchError
from apps.digest.formatting import summary_entry
from apps.digest.papers import Paper
from apps.library.models import Document
from apps.library.services import (
    DocumentMeta,
    Embedder,
    PaperPlan,
    document_add,
    document_ingest,
    document_remove,
    paper_add,
    papers_source,
    safe_filename,
)

logger = logging.getLogger(__name__)

DIGEST_FOLDER = "Paper digests"
SUMMARY_FOLDER = "Paper summaries"


class NotShelved(JarvisError):
    """A document could not be added; the message says why."""


def _discard(owner, document: Document) -> None:
    """Take out a document this module just created and could not index, so
    no half-made entry stays in the library."""
    try:
        document_remove(user=owner, document=document)
    except Exception:  # the caller is already reporting the first failure
        logger.exception("digest: could not remove the unindexed document %s", document.pk)


def _add_markdown(
    owner, *, path: str, text: str, meta: DocumentMeta, embedder: Embedder | None
) -> Document:
    """A Markdown note in the owner's Papers collection, indexed before this
    returns. Raises NotShelved (the document removed again) when it fails."""
    added = document_add(
        owner=owner,
        source=papers_source(owner),
        name=path,
        data=text.encode("utf-8"),
        meta=meta,
        kind=Document.Kind.NOTE,
    )
    if added.document is None:
        raise NotShelved(added.error or "it could not be added")
    try:
        document = document_ingest(document=added.document, embedder=embedder, meta=meta)
    except Exception as exc:
        _discard(owner, added.document)
        raise NotShelved(f"indexing failed: {exc}") from exc
    if document.status != Document.Status.READY:
        reason = document.error or "it could not be indexed"
        _discard(owner, document)
        raise NotShelved(reason)
    return document


def shelve_digest(owner, *, markdown: str, title: str, day: date, embedder=None) -> Document:
    """The digest as a document in the owner's library. NotShelved on failure
    (nothing left behind)."""
    return _add_markdown(
        owner,
        path=f"{DIGEST_FOLDER}/{day.isoformat()}.md",
        text=markdown,
        meta=DocumentMeta(title=title, published=day),
        embedder=embedder,
    )


def _site(paper: Paper) -> str:
    return "arxiv.org" if paper.origin == "arxiv" else "biorxiv.org"


def shelve_summary(
    owner, paper: Paper, *, digest_day: date, warning: str = "", embedder=None
) -> Document:
    """A summary entry for `paper` (see the module docstring). NotShelved on failure."""
    key = paper.arxiv_id or paper.doi or paper.title
    return _add_markdown(
        owner,
        path=f"{SUMMARY_FOLDER}/{safe_filename(key.replace('/', '_'), fallback='paper')}.md",
        text=summary_entry(paper, digest_day=digest_day, warning=warning),
        meta=DocumentMeta(
            title=paper.title,
            authors=paper.authors_text,
            doi=paper.doi,
            published=paper.published or "",
            url=paper.link,
            arxiv_id=paper.arxiv_id,
            site=_site(paper),
        ),
        embedder=embedder,
    )


def shelve_full_text(owner, paper: Paper, *, embedder=None) -> Document | None:
    """The paper's PDF in full text, through the library's add-paper flow.
    None when the library already has it (added since the digest looked);
    NotShelved with the reason when there is no PDF to be had or it fails."""
    if paper.origin != "arxiv" or not paper.arxiv_id:
        raise NotShelved("bioRxiv gives no PDF address for a preprint")
    try:
        outcome = paper_add(owner=owner, text=paper.arxiv_id)
    except (JarvisError, FetchError) as exc:
        raise NotShelved(f"the PDF could not be fetched: {exc}") from exc
    if not isinstance(outcome, PaperPlan):
        return None
    try:
        document = document_ingest(
            document=outcome.document, embedder=embedder, meta=outcome.document_meta
        )
    except Exception as exc:
        _discard(owner, outcome.document)
        raise NotShelved(f"the PDF could not be indexed: {exc}") from exc
    if document.status != Document.Status.READY:
        reason = document.error or "it could not be read"
        _discard(owner, document)
        raise NotShelved(f"the PDF could not be read: {reason}")
    return document
