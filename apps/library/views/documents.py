"""One document: its page, its original file, editing, removing, reprocessing."""

from __future__ import annotations

import mimetypes
from collections import defaultdict

import pymupdf
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.errors import Refused
from apps.library.ingest.storage import original_path
from apps.library.models import Document
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
from apps.library.tasks import enqueue_ingest

PREVIEW_PAGES = 12
PREVIEW_ZOOM = 1.3


def _is_owner(request: HttpRequest, document: Document) -> bool:
    return document.source.owner_id == request.user.pk


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    document = get_document_for(request.user, pk)
    chunks = list(chunks_visible_to(request.user, document))
    annotations: dict[int, list] = defaultdict(list)
    for chunk in chunks:
        if chunk.annotation:
            annotations[chunk.page or 0].append(chunk)
    versions = family_of(request.user, document)
    context = {
        "document": document,
        "body": [c for c in chunks if not c.annotation],
        "annotations": sorted(annotations.items()),
        "versions": _timeline(versions),
        "paths": sorted(document.files.values_list("path", flat=True)),
        "tags": sorted(document.tag_rows.values_list("tag", flat=True)),
        "is_owner": _is_owner(request, document),
        "editable": _is_owner(request, document) and document.kind in EDITABLE_KINDS,
        "preview_pages": _preview_pages(document),
    }
    template = "library/document.html#status" if request.htmx else "library/document.html"
    return render(request, template, context)


def _timeline(versions: list[Document]) -> list[dict]:
    """Each version with the one that superseded it (the next newer one)."""
    rows = []
    for position, version in enumerate(versions):
        newer = versions[position + 1] if position + 1 < len(versions) else None
        rows.append({"document": version, "superseded_by": None if version.is_latest else newer})
    return rows


def _preview_pages(document: Document) -> list[int]:
    if document.kind not in ("pdf", "paper") or document.status != Document.Status.READY:
        return []
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
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return FileResponse(handle, as_attachment=True, filename=name, content_type=content_type)


@login_required
@require_GET
def page_image(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """A PDF page as a PNG: a preview with no PDF viewer and no script."""
    document = get_document_for(request.user, pk)
    if document.kind not in ("pdf", "paper") or not 1 <= number <= PREVIEW_PAGES:
        raise Http404
    try:
        with pymupdf.open(original_path(document)) as pdf:
            if number > pdf.page_count:
                raise Http404
            pixmap = pdf[number - 1].get_pixmap(matrix=pymupdf.Matrix(PREVIEW_ZOOM, PREVIEW_ZOOM))
            png = pixmap.tobytes("png")
    except (Refused, OSError, RuntimeError):
        raise Http404("the original file is not available") from None
    response = HttpResponse(png, content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    return response


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
    document = get_document_for(request.user, pk)
    if not _is_owner(request, document):
        raise Http404
    if request.method == "GET":
        return render(request, "library/remove.html", {"document": document})
    title = document.title
    document_remove(user=request.user, document=document)
    messages.success(request, f"“{title}” was removed from the library. No file was touched.")
    return redirect("library:index")


@login_required
@require_POST
def reprocess(request: HttpRequest, pk: int) -> HttpResponse:
    document = get_document_for(request.user, pk)
    if not _is_owner(request, document):
        raise Http404
    documents_mark_pending(documents=[document])
    enqueue_ingest(document, user_id=request.user.pk, full=True)
    messages.info(request, "Reprocessing: the status below updates by itself.")
    return redirect("library:document", pk=pk)
