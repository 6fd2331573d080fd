"""Adding things to a person's library: uploaded files, web pages, arXiv papers.

Each becomes a Document right away (status `pending`) holding a copy of its
bytes in the data dir; parsing and embedding run afterwards (in the worker for
the browser, inline for `kb add`), through `documents.ingest_document`. A
refusal (a bad file, a URL the SSRF guard refuses, a paper arXiv does not
have) stores nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
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
from apps.library.ingest.storage import safe_filename, store
from apps.library.models import Document, Source
from apps.library.selectors import visible_to
from apps.library.services.documents import document_ingest
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


def upload_add(*, owner, name: str, data: bytes) -> Added:
    """One uploaded file. Typed by its bytes; over the size limit, of an
    unsupported type or lying about its extension → an error for this file only."""
    name = safe_filename(name)
    limit = settings.UPLOAD_MAX_MB * 1024 * 1024
    if len(data) > limit:
        return Added(error=f"larger than the {settings.UPLOAD_MAX_MB} MB limit", name=name)
    try:
        sniffed = sniff(data, name)
        kind = kind_for_upload(sniffed, name)
    except UnsupportedFile as exc:
        return Added(error=str(exc), name=name)
    source = uploads_source(owner)
    digest = hashlib.sha256(data).hexdigest()
    same = source.documents.filter(content_hash=digest).first()
    if same is not None:
        return Added(existing=[same], error=f"already in your library as “{same.title}”", name=name)
    relative = store(area="uploads", owner_id=owner.pk, data=data, filename=name)
    with transaction.atomic():
        document = Document.objects.create(
            source=source,
            path=free_path(source, name),
            title=name,
            kind=kind,
            content_hash=digest,
            size=len(data),
            original=relative,
            status=Document.Status.PENDING,
        )
    _store_again(relative, data)
    return Added(document=document, name=name)


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
    digest = hashlib.sha256(page.body).hexdigest()
    latest = max(existing, key=lambda d: (d.is_latest, d.pk), default=None)
    if latest is not None and latest.content_hash == digest:
        return Added(unchanged=latest, name=url)
    host = urlsplit(page.final_url).hostname or "page"
    relative = store(area="web", owner_id=owner.pk, data=page.body, filename=f"{host}.html")
    source = uploads_source(owner)
    with transaction.atomic():
        document = Document.objects.create(
            source=source,
            path=page.final_url[:1000],
            title=url[:500],
            kind=Document.Kind.WEB,
            content_hash=digest,
            size=len(page.body),
            url=wanted,
            site=host,
            fetched_at=page.fetched_at,
            original=relative,
            status=Document.Status.PENDING,
        )
    _store_again(relative, page.body)
    return Added(document=document, name=url)


def normalise_title(title: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", title.lower()).split())


@dataclass
class PaperPlan:
    """A paper ready to ingest: the new document and the entries it replaces."""

    document: Document
    meta: arxiv.PaperMeta
    replaces: list[int]


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
    source = papers_source(owner)
    relative = store(
        area="papers", owner_id=owner.pk, data=pdf, filename=f"{paper_id.id.replace('/', '_')}.pdf"
    )
    document = Document.objects.create(
        source=source,
        path=free_path(source, f"arXiv {paper_id.id}"),
        title=meta.title[:500],
        authors=", ".join(meta.authors)[:1000],
        doi=meta.doi[:200],
        kind=Document.Kind.PAPER,
        content_hash=hashlib.sha256(pdf).hexdigest(),
        size=len(pdf),
        url=paper_id.canonical_url,
        arxiv_id=paper_id.id,
        site="arxiv.org",
        original=relative,
        status=Document.Status.PENDING,
    )
    _store_again(relative, pdf)
    return PaperPlan(document=document, meta=meta, replaces=[d.pk for d in duplicates])


def paper_ingest_options(meta: arxiv.PaperMeta) -> dict:
    """What the arXiv API knows that the PDF parser would only guess."""
    options = {"title": meta.title, "authors": ", ".join(meta.authors), "doi": meta.doi}
    if meta.published:
        options["date_override"] = (meta.published, Document.DateSource.PUBLISHED)
    return options


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
