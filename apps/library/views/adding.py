"""Adding to the library from the browser: uploads, web pages, arXiv papers."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from apps.core.errors import JarvisError
from apps.library.forms import UrlForm
from apps.library.ingest.arxiv import parse_arxiv_id
from apps.library.models import Document
from apps.library.selectors import get_document_for
from apps.library.services import adding
from apps.library.tasks import enqueue_ingest

MAX_FILES = 50


@login_required
@require_GET
def page(request: HttpRequest) -> HttpResponse:
    return render(
        request, "library/add.html", {"form": UrlForm(), "max_mb": settings.UPLOAD_MAX_MB}
    )


@login_required
@require_POST
def upload(request: HttpRequest) -> HttpResponse:
    files = request.FILES.getlist("files")[:MAX_FILES]
    results = []
    for uploaded in files:
        if uploaded.size > settings.UPLOAD_MAX_MB * 1024 * 1024:
            # Refused before reading it into memory.
            results.append(
                adding.Added(
                    error=f"larger than the {settings.UPLOAD_MAX_MB} MB limit", name=uploaded.name
                )
            )
            continue
        added = adding.upload_add(owner=request.user, name=uploaded.name, data=uploaded.read())
        if added.document is not None:
            enqueue_ingest(added.document, user_id=request.user.pk)
        results.append(added)
    status = 200 if files else 400
    return render(
        request, "library/_added.html", {"results": results, "nothing": not files}, status=status
    )


@login_required
@require_POST
def url(request: HttpRequest) -> HttpResponse:
    form = UrlForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "library/_added.html",
            {"error": "Give a web address or an arXiv id."},
            status=400,
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
        return render(request, "library/_added.html", {"error": str(exc), "text": text}, status=400)
    if isinstance(outcome, adding.PaperPlan):
        enqueue_ingest(
            outcome.document,
            user_id=request.user.pk,
            **_paper_task_options(outcome),
        )
        result = adding.Added(document=outcome.document, name=outcome.meta.title)
    else:
        result = outcome
        if result.document is not None:
            enqueue_ingest(result.document, user_id=request.user.pk)
    return render(request, "library/_added.html", {"results": [result], "text": text})


def _paper_task_options(plan: adding.PaperPlan) -> dict:
    options = adding.paper_ingest_options(plan.meta)
    override = options.pop("date_override", None)
    if override:
        options["published"] = override[0].isoformat()
    options["replaces"] = tuple(plan.replaces)
    return options


@login_required
@require_GET
def document_status(request: HttpRequest, pk: int) -> HttpResponse:
    document = get_document_for(request.user, pk)
    on_page = request.GET.get("on_page") == "1"
    context = {
        "document": document,
        "on_page": on_page,
        "can_control": document.source.owner_id == request.user.pk,
    }
    response = render(request, "library/_doc_status.html", context)
    if on_page and document.status in (Document.Status.READY, Document.Status.FAILED):
        # Polling only runs while the document is in flight, so this answer is
        # the moment it finished: reload the page to show its text.
        response["HX-Refresh"] = "true"
    return response
