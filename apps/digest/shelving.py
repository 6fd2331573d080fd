"""Putting a digest and its papers into a person's library, through the
library's own services (apps.library.services.adding, apps.library.services.documents).

Everything goes into the person's Papers collection (cloud-allowed, like every
paper they add themselves):

- the digest itself, a Markdown note titled "Paper digest — DATE", tagged
  `paper-digest`, so every paper it mentions is searchable;
- papers scoring 9 and above in full text: the arXiv PDF, exactly as if the
  person had added it on the Add page (`adding.add_paper`);
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

import hashlib
import logging
from datetime import date

from apps.core.errors import JarvisError
from apps.core.fetch import FetchError
from apps.digest.formatting import summary_entry
from apps.digest.papers import Paper
from apps.library.index.embeddings import Embedder
from apps.library.ingest.storage import safe_filename, store
from apps.library.models import Document
from apps.library.services import adding
from apps.library.services.documents import document_ingest, document_remove

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
    owner,
    *,
    path: str,
    title: str,
    text: str,
    embedder: Embedder | None,
    url: str = "",
    arxiv_id: str = "",
    doi: str = "",
    authors: str = "",
    site: str = "",
    published: date | None = None,
) -> Document:
    """A Markdown note in the owner's Papers collection, indexed before this
    returns. Raises NotShelved (the document removed again) when it fails."""
    data = text.encode("utf-8")
    source = adding.papers_source(owner)
    filename = safe_filename(path.rsplit("/", 1)[-1], fallback="entry.md")
    relative = store(area="papers", owner_id=owner.pk, data=data, filename=filename)
    document = Document.objects.create(
        source=source,
        path=adding.free_path(source, path),
        title=title[:500],
        kind=Document.Kind.NOTE,
        content_hash=hashlib.sha256(data).hexdigest(),
        size=len(data),
        original=relative,
        url=url[:2000],
        arxiv_id=arxiv_id[:40],
        doi=doi[:200],
        authors=authors[:1000],
        site=site[:200],
        status=Document.Status.PENDING,
    )
    override = (published, Document.DateSource.PUBLISHED) if published else None
    try:
        document = document_ingest(
            document=document,
            embedder=embedder,
            title=title,
            authors=authors,
            doi=doi,
            date_override=override,
        )
    except Exception as exc:
        _discard(owner, document)
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
        title=title,
        text=markdown,
        embedder=embedder,
        published=day,
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
        title=paper.title,
        text=summary_entry(paper, digest_day=digest_day, warning=warning),
        embedder=embedder,
        url=paper.link,
        arxiv_id=paper.arxiv_id,
        doi=paper.doi,
        authors=paper.authors_text,
        site=_site(paper),
        published=paper.published,
    )


def shelve_full_text(owner, paper: Paper, *, embedder=None) -> Document | None:
    """The paper's PDF in full text, through the library's add-paper flow.
    None when the library already has it (added since the digest looked);
    NotShelved with the reason when there is no PDF to be had or it fails."""
    if paper.origin != "arxiv" or not paper.arxiv_id:
        raise NotShelved("bioRxiv gives no PDF address for a preprint")
    try:
        outcome = adding.paper_add(owner=owner, text=paper.arxiv_id)
    except (JarvisError, FetchError) as exc:
        raise NotShelved(f"the PDF could not be fetched: {exc}") from exc
    if not isinstance(outcome, adding.PaperPlan):
        return None
    options = adding.paper_ingest_options(outcome.meta)
    try:
        document = document_ingest(
            document=outcome.document, embedder=embedder, replaces=outcome.replaces, **options
        )
    except Exception as exc:
        _discard(owner, outcome.document)
        raise NotShelved(f"the PDF could not be indexed: {exc}") from exc
    if document.status != Document.Status.READY:
        reason = document.error or "it could not be read"
        _discard(owner, document)
        raise NotShelved(f"the PDF could not be read: {reason}")
    return document
