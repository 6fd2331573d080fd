"""Adding things to a person's library: uploaded files, web pages, arXiv papers.

Each becomes a Document right away (status `pending`) holding a copy of its
bytes in the data dir; parsing and embedding run afterwards (in the worker for
the browser, inline for `kb add`), through `documents.document_ingest`. A
refusal (a bad file, a URL the SSRF guard refuses, a paper arXiv does not
have) stores nothing. `document_add` is the one way bytes become a document:
uploads, web pages and papers here, and other apps' too (chat attachments,
digest entries, the project overview).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from apps.core.datapaths import is_jarvis_data, vaults_root
from apps.core.errors import JarvisError, Refused
from apps.core.fetch import FetchError, check_url, fetch
from apps.core.locks import Busy
from apps.library.formats import kind_for_upload
from apps.library.index import tables
from apps.library.index.embeddings import Embedder
from apps.library.ingest import arxiv
from apps.library.ingest.filetypes import UnsupportedFile, sniff
from apps.library.ingest.pipeline import content_hash
from apps.library.ingest.storage import safe_filename, store
from apps.library.models import Document, Source
from apps.library.selectors import visible_to
from apps.library.services.documents import document_ingest
from apps.library.services.meta import DocumentMeta
from apps.library.services.queue import IN_FLIGHT, cli_ingest_lock, has_live_task

# What `sniff` says a file is → the document kind it becomes (the other kinds keep their name).
PAPERS_NAME = "Papers"
UPLOADS_NAME = "Uploads"
PDF_MAX_BYTES = 100 * 1024 * 1024


@dataclass
class Added:
    """The outcome of one add: the new document, or why not."""

    document: Document | None = None
    existing: list[Document] = field(default_factory=list)  # asks "replace / refresh?"
    error: str = ""
    name: str = ""
    # A refresh that fetched exactly what the latest version holds: no new
    # version (it would only add "replaced by the same page" to the timeline).
    unchanged: Document | None = None


def _own_source(owner, kind: str, name: str) -> Source:
    # Things a person hands to Jarvis on purpose start cloud-allowed.
    source, _ = Source.objects.get_or_create(
        owner=owner,
        kind=kind,
        name=name,
        defaults={"cloud": Source.Cloud.ALLOWED, "private_dirs": []},
    )
    return source


def uploads_source(owner) -> Source:
    """Uploads and web pages."""
    return _own_source(owner, Source.Kind.UPLOADS, UPLOADS_NAME)


def papers_source(owner) -> Source:
    return _own_source(owner, Source.Kind.PAPERS, PAPERS_NAME)


def free_path(source: Source, name: str) -> str:
    """`name`, or `name (2)`, `name (3)`… if the collection already holds it."""
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    candidate, n = name, 1
    taken = Document.objects.filter(source=source)
    while taken.filter(path=candidate).exists():
        n += 1
        candidate = f"{stem} ({n}).{suffix}" if suffix else f"{stem} ({n})"
    return candidate


def upload_refusal(size: int) -> str:
    """Why a file of `size` bytes cannot be uploaded (over UPLOAD_MAX_MB), or "".
    The one place the limit is checked: the add page and the chat composer ask
    before reading a file into memory, `upload_add` for everything else."""
    if size > settings.UPLOAD_MAX_MB * 1024 * 1024:
        return f"larger than the {settings.UPLOAD_MAX_MB} MB limit"
    return ""


def upload_add(*, owner, name: str, data: bytes) -> Added:
    """One uploaded file into the owner's Uploads. Typed by its bytes; over the
    size limit, of an unsupported type or lying about its extension → an error
    for this file only. The same bytes uploaded again are the same document."""
    name = safe_filename(name)
    refusal = upload_refusal(len(data))
    if refusal:
        return Added(error=refusal, name=name)
    source = uploads_source(owner)
    same = source.documents.filter(content_hash=content_hash(data)).first()
    if same is not None:
        return Added(existing=[same], error=f"already in your library as “{same.title}”", name=name)
    return document_add(owner=owner, source=source, name=name, data=data)


def document_add(
    *,
    owner,
    source: Source,
    name: str,
    data: bytes,
    meta: DocumentMeta | None = None,
    kind: str = "",
    at: str = "",
    stored_name: str = "",
    again: bool = False,
    fetched_at: datetime | None = None,
) -> Added:
    """The library's front door for bytes: keep `data` as a document of the
    owner's `source`, pending (index it with `ingest_queue` in apps.library.tasks,
    or `document_ingest` inline). Jarvis's own copy is stored content-addressed
    and the document hashed here, nowhere else.

    `name` is the document's path, or `name (2)`… if the collection holds that
    path already; its copy is stored under the name's last part, or under
    `stored_name` when given (what a download of the original is called: a
    paper's `2401.12345.pdf` beside its path `arXiv 2401.12345`). `kind` ""
    types it by its bytes (an unsupported file or one lying about its
    extension → `Added.error`). `at`: a fixed path instead, for a note Jarvis
    rewrites itself (the project overview): the document already there takes
    the new bytes and keeps its id; the same bytes → `Added.unchanged`.
    `again`: `name` is the path even when taken, and the new document sits
    beside the one there as its later version (a web page fetched again,
    `fetched_at` then). `meta` sets the title (else the stored name), authors,
    DOI, URL, arXiv id and site."""
    if source.owner_id != owner.pk:
        raise Refused("only the owner can add to this collection")
    meta = meta or DocumentMeta()
    filename = safe_filename(stored_name or PurePosixPath(name).name, fallback="file")
    if not kind:
        try:
            kind = kind_for_upload(sniff(data, filename), filename)
        except UnsupportedFile as exc:
            return Added(error=str(exc), name=filename)
    digest = content_hash(data)
    existing = source.documents.filter(path=at).first() if at else None
    if existing is not None and existing.content_hash == digest:
        return Added(unchanged=existing, name=name)
    document = _create(
        digest=digest,
        source=source,
        path=at or (name if again else free_path(source, name)),
        data=data,
        filename=filename,
        kind=kind,
        meta=replace(meta, title=meta.title or filename),
        fetched_at=fetched_at,
        into=existing,
    )
    return Added(document=document, name=name)


def _area(source: Source, kind: str) -> str:
    """Which of Jarvis's storage areas keeps the copy (apps.library.ingest.storage)."""
    if source.kind == Source.Kind.PAPERS:
        return "papers"
    return "web" if kind == Document.Kind.WEB else "uploads"


def _create(
    *,
    source: Source,
    path: str,
    data: bytes,
    filename: str,
    kind: str,
    meta: DocumentMeta,
    fetched_at: datetime | None,
    into: Document | None,
    digest: str,
) -> Document:
    """`document_add`'s writer: store the copy and write the pending document
    row (`into`: rewrite that one)."""
    relative = store(
        area=_area(source, kind), owner_id=source.owner_id, data=data, filename=filename
    )
    document = into or Document(source=source, path=path[:1000])
    document.kind = kind
    document.title = meta.title[:500]
    document.content_hash = digest
    document.size = len(data)
    document.original = relative
    document.status = Document.Status.PENDING
    for field_name, limit in (("authors", 1000), ("doi", 200), ("url", 2000), ("site", 200)):
        if getattr(meta, field_name):
            setattr(document, field_name, getattr(meta, field_name)[:limit])
    if meta.arxiv_id:
        document.arxiv_id = meta.arxiv_id[:40]
    if fetched_at is not None:
        document.fetched_at = fetched_at
    with transaction.atomic():
        document.save()
    _store_again(relative, data)
    return document


def _store_again(relative: str, data: bytes) -> None:
    """The copy is content-addressed and shared: removing another document
    with the same bytes may have released it between `store` and the new
    document's creation (storage.original_release). Write it back if so."""
    area, _, inside = relative.partition("/")
    owner, _, rest = inside.partition("/")
    store(area=area, owner_id=int(owner), data=data, filename=rest.rsplit("/", 1)[-1])


def normalise_url(url: str) -> str:
    parts = urlsplit(url.strip())
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def web_page_add(*, owner, url: str, refresh: bool = False) -> Added:
    """Fetch a page through the SSRF guard and keep it as a document. A URL
    already in the library is offered as a refresh (a new version of it)."""
    url = url.strip()
    try:
        # The guard's own syntax rules first (no DNS): ftp://, user:pass@host
        # or a private IP literal is refused before anything is looked up.
        wanted = normalise_url(str(check_url(url)))
    except FetchError as exc:
        raise Refused(str(exc)) from None
    except ValueError:
        raise Refused("that is not a URL") from None
    existing = list(visible_to(owner).filter(source__owner=owner, url=wanted, kind="web"))
    if existing and not refresh:
        return Added(existing=existing, name=url)
    try:
        page = fetch(url)
    except FetchError as exc:
        raise Refused(str(exc)) from exc
    latest = max(existing, key=lambda d: (d.is_latest, d.pk), default=None)
    if latest is not None and latest.content_hash == content_hash(page.body):
        return Added(unchanged=latest, name=url)
    host = urlsplit(page.final_url).hostname or "page"
    added = document_add(
        owner=owner,
        source=uploads_source(owner),
        name=page.final_url,
        data=page.body,
        meta=DocumentMeta(title=url, url=wanted, site=host),
        kind=Document.Kind.WEB,
        stored_name=f"{host}.html",
        # The page's address is its path: a refresh is the next version beside it.
        again=True,
        fetched_at=page.fetched_at,
    )
    return Added(document=added.document, name=url)


def normalise_title(title: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", title.lower()).split())


@dataclass
class PaperPlan:
    """A paper ready to ingest: the new document and the entries it replaces."""

    document: Document
    meta: arxiv.PaperMeta
    replaces: list[int]

    @property
    def document_meta(self) -> DocumentMeta:
        """What the arXiv API knows that the PDF parser would only guess, and
        the entries the paper replaces: what its ingest is given."""
        return DocumentMeta(
            title=self.meta.title,
            authors=", ".join(self.meta.authors),
            doi=self.meta.doi,
            published=self.meta.published or "",
            replaces=tuple(self.replaces),
        )


def paper_add(*, owner, text: str, replace: bool = False) -> Added | PaperPlan:
    """An arXiv paper by id or URL: metadata from the arXiv API, the PDF
    downloaded. A paper already in the library (same arXiv id or URL, or the
    same title) is returned for confirmation unless `replace`."""
    paper_id = arxiv.parse_arxiv_id(text)
    if paper_id is None:
        raise Refused(f"{text!r} is not an arXiv id or arXiv URL")
    try:
        meta = arxiv.fetch_metadata(paper_id)
    except JarvisError:
        raise
    title_key = normalise_title(meta.title)
    duplicates = [
        d
        for d in Document.objects.filter(source__owner=owner).filter(
            Q(arxiv_id=paper_id.id) | Q(url=paper_id.canonical_url) | Q(kind="paper")
        )
        if d.arxiv_id == paper_id.id
        or d.url == paper_id.canonical_url
        or normalise_title(d.title) == title_key
    ]
    if duplicates and not replace:
        return Added(existing=duplicates, name=meta.title)
    try:
        pdf = arxiv.download_pdf(meta)
    except FetchError as exc:
        raise Refused(f"could not download the PDF: {exc}") from exc
    added = document_add(
        owner=owner,
        source=papers_source(owner),
        name=f"arXiv {paper_id.id}",
        data=pdf,
        meta=DocumentMeta(
            title=meta.title,
            authors=", ".join(meta.authors),
            doi=meta.doi,
            url=paper_id.canonical_url,
            arxiv_id=paper_id.id,
            site="arxiv.org",
        ),
        kind=Document.Kind.PAPER,
        stored_name=f"{paper_id.id.replace('/', '_')}.pdf",
    )
    return PaperPlan(document=added.document, meta=meta, replaces=[d.pk for d in duplicates])


def local_file_check(path: Path) -> Path:
    """The file `kb add PATH` may read, resolved: one under the vaults root
    (symlinks followed first, so a link cannot lead out), and never one of
    Jarvis's own (its keys, database, uploads, drafts), whoever asks. Whoever
    runs the command can read those files; the people who then search the
    collection it lands in, or the cloud model it is allowed to reach, must not."""
    resolved = Path(path).expanduser().resolve()
    if is_jarvis_data(resolved):
        raise Refused(
            f"{path} is part of Jarvis's own data ({settings.DATA_DIR}); "
            "its files are never added to a library"
        )
    root = vaults_root()
    if not resolved.is_relative_to(root):
        raise Refused(
            f"{path} is outside the vaults root {root} (JARVIS_VAULTS_ROOT); "
            "kb add reads local files only from there"
        )
    if not resolved.is_file():
        raise Refused(f"{path} is not a file")
    return resolved


def file_add(*, owner, path: Path, embedder: Embedder | None = None) -> Document:
    """Add one local file to the owner's uploads and index it now (`kb add PATH`).
    The same checks as a browser upload; the original is only read."""
    path = Path(path)
    resolved = local_file_check(path)
    try:
        # O_NOFOLLOW: the checked path's last step cannot have become a link since.
        fd = os.open(resolved, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise Refused(f"{path}: cannot read ({exc.strerror})") from None
    tables.require_matching_model()
    added = upload_add(owner=owner, name=path.name, data=data)
    if added.existing:
        return _resume_if_stranded(added.existing[0], embedder)
    if added.document is None:
        raise Refused(f"{path.name}: {added.error}")
    with cli_ingest_lock(added.document):
        return document_ingest(document=added.document, embedder=embedder)


def _resume_if_stranded(document: Document, embedder: Embedder | None) -> Document:
    """The same file added again. If an earlier `kb add` of it was killed
    mid-way, its document is still pending or parsing with nobody on it (no
    worker task, no live `kb add` holding its lock): index it now rather than
    hand back a document that would stay "parsing" until a worker restart."""
    if document.status not in IN_FLIGHT or has_live_task(document):
        return document
    try:
        with cli_ingest_lock(document):
            document.refresh_from_db()
            if document.status not in IN_FLIGHT or has_live_task(document):
                return document
            return document_ingest(document=document, embedder=embedder)
    except Busy:
        return document  # another `kb add` of the same file is indexing it now
