"""Adding to the library from the browser: uploads, web pages, arXiv papers."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from apps.core.errors import JarvisError
from apps.core.refusals import refusal_swapped
from apps.library.formats import accepted_types
from apps.library.forms import UrlForm
from apps.library.ingest.arxiv import parse_arxiv_id
from apps.library.models import Document
from apps.library.selectors import get_document_for
from apps.library.services import adding
from apps.library.tasks import ingest_queue
from apps.library.worker_queue import queue_place_for

MAX_FILES = 50


def _page_context(**extra) -> dict:
    return {
        "form": UrlForm(),
        "max_mb": settings.UPLOAD_MAX_MB,
        "accepted_types": accepted_types(),
        **extra,
    }


@login_required
@require_GET
def page(request: HttpRequest) -> HttpResponse:
    return render(request, "library/add.html", _page_context())


@login_required
@require_POST
def upload(request: HttpRequest) -> HttpResponse:
    """Several files from the plain form, or one at a time from upload.js
    (which shows each one's progress and swaps in the row this returns)."""
    files = request.FILES.getlist("files")[:MAX_FILES]
    results = []
    for uploaded in files:
        refusal = adding.upload_refusal(uploaded.size)
        if refusal:
            # Refused before reading it into memory.
            results.append(adding.Added(error=refusal, name=uploaded.name))
            continue
        added = adding.upload_add(owner=request.user, name=uploaded.name, data=uploaded.read())
        if added.document is not None:
            ingest_queue(added.document)
        results.append(added)
    status = 200 if files else 400
    context = {"results": results, "nothing": not files}
    if not request.htmx:
        # The form without JavaScript: the whole page again, with what happened.
        return render(request, "library/add.html", _page_context(**context), status=status)
    return refusal_swapped(render(request, "library/_added.html", context, status=status))


@login_required
@require_POST
def url(request: HttpRequest) -> HttpResponse:
    form = UrlForm(request.POST)
    if not form.is_valid():
        return refusal_swapped(
            render(
                request,
                "library/_added.html",
                {"error": "Give a web address or an arXiv id."},
                status=400,
            )
        )
    text = form.cleaned_data["url"].strip()
    try:
        if parse_arxiv_id(text) is not None:
            outcome = adding.paper_add(
                owner=request.user, text=text, replace=form.cleaned_data["replace"]
            )
        else:
            outcome = adding.web_page_add(
                owner=request.user, url=text, refresh=form.cleaned_data["refresh"]
            )
    except JarvisError as exc:
        # The result row saying why, at the top of the results like any other.
        page = render(request, "library/_added.html", {"error": str(exc), "text": text}, status=400)
        return refusal_swapped(page)
    if isinstance(outcome, adding.PaperPlan):
        ingest_queue(outcome.document, meta=outcome.document_meta)
        result = adding.Added(document=outcome.document, name=outcome.meta.title)
    else:
        result = outcome
        if result.document is not None:
            ingest_queue(result.document)
    return render(request, "library/_added.html", {"results": [result], "text": text})


@login_required
@require_GET
def document_status(request: HttpRequest, pk: int) -> HttpResponse:
    document = get_document_for(request.user, pk)
    on_page = request.GET.get("on_page") == "1"
    place = None
    if document.status == Document.Status.PENDING:
        place = queue_place_for(request.user, document)
    context = {
        "document": document,
        "on_page": on_page,
        "place": place,
        "can_control": document.source.owner_id == request.user.pk,
    }
    response = render(request, "library/_doc_status.html", context)
    if on_page and document.status in (Document.Status.READY, Document.Status.FAILED):
        # Polling only runs while the document is in flight, so this answer is
        # the moment it finished: reload the page to show its text.
        response["HX-Refresh"] = "true"
    return response
