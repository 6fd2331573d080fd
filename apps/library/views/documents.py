"""One document: its page, its original file, editing, removing, reprocessing."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.errors import Refused
from apps.library.blocklinks import passages_html
from apps.library.downloads import original_response
from apps.library.ingest.parsing.chunking import without_overlap
from apps.library.ingest.storage import original_path
from apps.library.models import Chunk, Document
from apps.library.previews import PREVIEW_PAGES, page_png
from apps.library.selectors import (
    chunks_visible_to,
    family_of,
    get_document_for,
    has_private_sections,
)
from apps.library.services.documents import (
    EDITABLE_KINDS,
    document_metadata_update,
    document_remove,
    documents_mark_pending,
)
from apps.library.services.queue import document_cancel, document_prepare_retry
from apps.library.tasks import ingest_queue

FIGURE_KINDS = ("figure", "photo")


def _is_owner(request: HttpRequest, document: Document) -> bool:
    return document.source.owner_id == request.user.pk


def _owned_document(request: HttpRequest, pk: int) -> Document:
    """A document the person owns; anyone else's, readable or not, is a 404."""
    document = get_document_for(request.user, pk)
    if not _is_owner(request, document):
        raise Http404
    return document


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    document = get_document_for(request.user, pk)
    chunks = list(chunks_visible_to(request.user, document))
    annotations: dict[int, list] = defaultdict(list)
    for chunk in chunks:
        if chunk.annotation and chunk.annotation not in FIGURE_KINDS:
            annotations[chunk.page or 0].append(chunk)
    body = [c for c in chunks if not c.annotation]
    _drop_repeated_overlap(body)
    passages_html(request.user, document, body)
    versions = family_of(request.user, document)
    timeline = _timeline(document.source.name, versions)
    is_owner = _is_owner(request, document)
    # The file (and any page image) holds the private sections: its owner's alone.
    file_shown = is_owner or not has_private_sections(document)
    context = {
        "document": document,
        # Latest for this person: the newest version they may see (a newer one
        # in its owner's private folder does not exist for them).
        "is_current": document.status != Document.Status.READY
        or not versions
        or versions[-1].pk == document.pk,
        "body": body,
        "pages": _pages_with_ocr(document, body),
        "figures": [c for c in chunks if c.annotation in FIGURE_KINDS],
        "annotations": sorted(annotations.items()),
        "versions": timeline,
        "paths": sorted(document.files.values_list("path", flat=True)),
        "tags": sorted(document.tag_rows.values_list("tag", flat=True)),
        "is_owner": is_owner,
        "editable": is_owner and document.kind in EDITABLE_KINDS,
        "file_shown": file_shown,
        "preview_pages": _preview_pages(document) if file_shown else [],
        "pdf_viewer": file_shown and _shows_as_pdf(document),
    }
    template = "library/document.html#status" if request.htmx else "library/document.html"
    return render(request, template, context)


def _drop_repeated_overlap(body: list[Chunk]) -> None:
    """Read one after another, consecutive passages of a section would show
    the words each repeats from the one before (the overlap that keeps a fact
    whole in one passage for search) twice: `shown` is the text without them."""
    previous: Chunk | None = None
    for chunk in body:
        same = previous is not None and previous.section == chunk.section
        chunk.shown = without_overlap(previous.text, chunk.text) if same else chunk.text
        previous = chunk


def _timeline(source_name: str, versions: list[Document]) -> list[dict]:
    """Each version (of those the person may see) with the one that superseded it,
    and where it moved from when it sits in another folder than the one before."""
    rows = []
    for position, version in enumerate(versions):
        newer = versions[position + 1] if position + 1 < len(versions) else None
        older = versions[position - 1] if position else None
        moved = None
        if older is not None and _folder(older.path) != _folder(version.path):
            moved = {
                "from": f"{source_name}/{_folder(older.path)}",
                "to": f"{source_name}/{_folder(version.path)}",
            }
        rows.append(
            {"document": version, "superseded_by": newer, "current": newer is None, "moved": moved}
        )
    return rows


@dataclass
class _Page:
    number: int
    ocr: bool  # its text was recognised by OCR (its image is shown beside it)
    empty: bool  # OCR found nothing on it
    chunks: list[Chunk] = field(default_factory=list)


def _pages_with_ocr(document: Document, body: list[Chunk]) -> list[_Page]:
    """For a document with recognised pages: every page in order, each with its
    text, and for recognised ones a flag to show the page image beside it.
    Empty for documents without OCR (their text is shown as one column)."""
    ocr = document.ocr or {}
    recognised = set(ocr.get("pages") or [])
    if not recognised:
        return []
    empty = set(ocr.get("empty") or [])
    pages: dict[int, _Page] = {}
    for chunk in body:
        number = chunk.page or 1
        page = pages.setdefault(number, _Page(number, number in recognised, number in empty))
        page.chunks.append(chunk)
    for number in recognised:
        pages.setdefault(number, _Page(number, True, number in empty))
    return [pages[n] for n in sorted(pages)]


def _folder(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "" if parent == "." else f"{parent}/"


def _shows_as_pdf(document: Document) -> bool:
    """Whether the page shows the original in the PDF viewer (PDF.js, static/js/pdf-viewer.js)."""
    if document.kind == Document.Kind.PDF:
        return True
    # A paper's original is its PDF, unless only its abstract page was kept.
    return document.kind == Document.Kind.PAPER and document.original.lower().endswith(".pdf")


def _preview_pages(document: Document) -> list[int]:
    if document.kind not in ("pdf", "paper") or document.status != Document.Status.READY:
        return []
    if (document.ocr or {}).get("pages"):
        return []  # recognised pages are shown beside their text instead
    pages = document.chunks.exclude(page=None).values_list("page", flat=True)
    last = max(pages, default=0)
    return list(range(1, min(last, PREVIEW_PAGES) + 1))


@login_required
@require_GET
def original(request: HttpRequest, pk: int) -> HttpResponse:
    """The original file, always as a download (never rendered by the browser).
    A note with private sections holds them in its file: only its owner gets it."""
    document = get_document_for(request.user, pk)
    if not _is_owner(request, document) and has_private_sections(document):
        raise Http404("the original file is not available")
    try:
        path = original_path(document)
        handle = path.open("rb")
    except (Refused, OSError):
        raise Http404("the original file is not available") from None
    name = path.name if document.original else document.path.rsplit("/", 1)[-1]
    # Typed by what Jarvis read it as, never by its name (apps.library.downloads).
    return original_response(document, handle, name)


def _may_show_page(document: Document, number: int) -> bool:
    recognised = number in ((document.ocr or {}).get("pages") or [])
    if document.kind in ("pdf", "paper"):
        return 1 <= number <= PREVIEW_PAGES or recognised
    return document.kind == "image" and (number == 1 or recognised)


@login_required
@require_GET
async def page_image(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """A PDF page, or an uploaded image turned upright, as a PNG: a preview
    with no PDF viewer and no script. Async: the render runs in a sandbox
    child (apps.library.previews) while the event loop serves everyone else."""
    user = await request.auser()
    document, path = await sync_to_async(_previewable)(user, pk, number)
    kind = "image" if document.kind == "image" else "pdf"
    png = await page_png(content_hash=document.content_hash, path=path, number=number, kind=kind)
    if png is None:
        raise Http404("this page has no preview")
    # Read whole (a few MB at most, within the pixel budget): a streamed file
    # would be iterated synchronously under ASGI.
    response = HttpResponse(await sync_to_async(png.read_bytes)(), content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    return response


def _previewable(user, pk: int, number: int):
    document = get_document_for(user, pk)
    if not _may_show_page(document, number):
        raise Http404
    if document.source.owner_id != user.pk and has_private_sections(document):
        raise Http404  # a page image shows the private section's text too
    try:
        path = original_path(document)
    except Refused:
        raise Http404("the original file is not available") from None
    if not path.is_file():
        raise Http404("the original file is not available")
    return document, path


@login_required
@require_POST
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    document = get_document_for(request.user, pk)
    try:
        document_metadata_update(
            user=request.user,
            document=document,
            title=request.POST.get("title", ""),
            authors=request.POST.get("authors", ""),
            doi=request.POST.get("doi", ""),
        )
    except Refused as exc:
        if request.htmx:
            return render(
                request,
                "library/_metadata.html",
                {"document": document, "error": str(exc), "editable": True},
                status=400,
            )
        messages.error(request, str(exc))
        return redirect("library:document", pk=pk)
    if request.htmx:
        return render(
            request,
            "library/_metadata.html",
            {"document": document, "editable": True, "saved": True},
        )
    messages.success(request, "Saved.")
    return redirect("library:document", pk=pk)


@login_required
@require_http_methods(["GET", "POST"])
def remove(request: HttpRequest, pk: int) -> HttpResponse:
    document = _owned_document(request, pk)
    if request.method == "GET":
        return render(request, "library/remove.html", {"document": document})
    title = document.title
    document_remove(user=request.user, document=document)
    messages.success(request, f"“{title}” was removed from the library. No file was touched.")
    return redirect("library:index")


def _status_answer(request: HttpRequest, document: Document, message: str) -> HttpResponse:
    """The Add page and the document page swap in the new status; without
    JavaScript the form posts and comes back to the document page."""
    if request.htmx:
        context = {
            "document": document,
            "on_page": request.POST.get("on_page") == "1",
            "can_control": True,
        }
        return render(request, "library/_doc_status.html", context)
    messages.info(request, message)
    return redirect("library:document", pk=document.pk)


def _refused_answer(
    request: HttpRequest, document: Document, exc: Refused, *, in_place: bool
) -> HttpResponse:
    """Why a cancel or retry could not be done: in place of the status when
    `in_place` and htmx asked, else as a message on the document page."""
    if in_place and request.htmx:
        return _status_answer(request, document, str(exc))
    messages.error(request, str(exc))
    return redirect("library:document", pk=document.pk)


@login_required
@require_POST
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    document = _owned_document(request, pk)
    try:
        document_cancel(user=request.user, document=document)
    except Refused as exc:
        return _refused_answer(request, document, exc, in_place=True)
    return _status_answer(request, document, "Cancelled: nothing of it was indexed.")


@login_required
@require_POST
def retry(request: HttpRequest, pk: int) -> HttpResponse:
    document = _owned_document(request, pk)
    try:
        document_prepare_retry(user=request.user, document=document)
    except Refused as exc:
        return _refused_answer(request, document, exc, in_place=False)
    ingest_queue(document)
    return _status_answer(request, document, "Queued again: the status below updates by itself.")


@login_required
@require_POST
def reprocess(request: HttpRequest, pk: int) -> HttpResponse:
    document = _owned_document(request, pk)
    documents_mark_pending(documents=[document])
    ingest_queue(document, full=True)
    if request.htmx:
        # "Retry" beside a failed file on the Add page: its status starts over in place.
        document.refresh_from_db()
        return render(request, "library/_doc_status.html", {"document": document})
    messages.info(request, "Reading it again: the status below updates by itself.")
    return redirect("library:document", pk=pk)
