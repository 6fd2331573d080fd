"""Every write a person or a job triggers: sources and collections
(`sources`), documents (`documents`: ingest, metadata, removal, reprocess) and
adding uploads, web pages and papers (`adding`).

This package is also the library's front door for other apps: they import
from `apps.library.services` itself, never from its modules or from the
library's internals (an import-linter contract in pyproject.toml). Adding
bytes is `document_add` (or `upload_add` for a person's upload: the size
limit, then the same bytes kept once), with known metadata as a
`DocumentMeta`; queuing the ingest is `apps.library.tasks.ingest_queue`,
indexing inline (a job that must know the outcome) `document_ingest`.
"""

from apps.library.index.embeddings import Embedder, get_embedder
from apps.library.ingest.arxiv import (
    PaperMeta,
    PaperSourceDown,
    parse_arxiv_id,
)
from apps.library.ingest.arxiv import search_category as arxiv_category_search
from apps.library.ingest.storage import read_original, safe_filename
from apps.library.ingest.sync import SyncReport, source_sync
from apps.library.services.adding import (
    Added,
    PaperPlan,
    document_add,
    normalise_title,
    paper_add,
    papers_source,
    upload_add,
    upload_refusal,
    web_page_add,
)
from apps.library.services.documents import (
    document_ingest,
    document_metadata_update,
    document_remove,
)
from apps.library.services.meta import DocumentMeta
from apps.library.services.sources import source_register

__all__ = [
    "Added",
    "DocumentMeta",
    "Embedder",
    "PaperMeta",
    "PaperPlan",
    "PaperSourceDown",
    "SyncReport",
    "arxiv_category_search",
    "document_add",
    "document_ingest",
    "document_metadata_update",
    "document_remove",
    "get_embedder",
    "normalise_title",
    "paper_add",
    "papers_source",
    "parse_arxiv_id",
    "read_original",
    "safe_filename",
    "source_register",
    "source_sync",
    "upload_add",
    "upload_refusal",
    "web_page_add",
]
