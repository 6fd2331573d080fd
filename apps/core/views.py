"""The home redirect, the health check and the styled error pages."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_GET, require_POST

from apps.core.heartbeat import stale_components
from apps.core.jobs import REGISTRY, run_now
from apps.core.notices import notice_dismiss, notices_seen, render_bell
from apps.core.selectors import job_runs_for, job_statuses_for, work_in_flight_for


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("chats:index" if request.user.is_authenticated else "accounts:login")


@require_GET
async def healthz(request: HttpRequest) -> HttpResponse:
    """Plain "ok", or 503 naming what is not running: a component whose
    heartbeat is missing or too old, or a database that does not answer."""
    try:
        stale = await sync_to_async(stale_components)()
    except DatabaseError as exc:
        return HttpResponse(f"database: {exc}", status=503, content_type="text/plain")
    if stale:
        body = "not running: " + "; ".join(s.describe() for s in stale)
        return HttpResponse(body, status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")


@login_required
@require_GET
def jobs(request: HttpRequest) -> HttpResponse:
    statuses = job_statuses_for(user=request.user)
    in_flight = work_in_flight_for(user=request.user)
    context = {
        "statuses": statuses,
        "in_flight": in_flight,
        "runs": job_runs_for(user=request.user).exclude(outcome__in=["queued", "running"])[:50],
        "any_running": bool(in_flight) or any(s.running for s in statuses),
    }
    template = "core/jobs.html#live" if request.htmx else "core/jobs.html"
    return render(request, template, context)


@login_required
@require_POST
def job_run_now(request: HttpRequest, name: str) -> HttpResponse:
    # Admins only; to anyone else the control does not exist.
    if not request.user.is_staff or name not in REGISTRY or not run_now(name):
        raise Http404
    title = REGISTRY[name].title
    messages.success(
        request, f"“{title}” is queued; it shows as running when the worker starts it."
    )
    return redirect("core:jobs")


@login_required
@require_POST
def notice_dismiss_view(request: HttpRequest, pk: int) -> HttpResponse:
    # Someone else's notice does not exist for you.
    if not notice_dismiss(user=request.user, notice_id=pk):
        raise Http404
    return HttpResponse(render_bell(request.user))


@login_required
@require_POST
def notices_seen_view(request: HttpRequest) -> HttpResponse:
    """A toast closed (by hand, by itself, or because the page shows its rows):
    its notices are seen. Ids that are not the person's are ignored. The answer
    is the bell's new count and list, swapped out of band."""
    ids = [int(i) for i in request.POST.getlist("ids") if i.isdigit()]
    notices_seen(user=request.user, ids=ids)
    return HttpResponse(render_bell(request.user))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return render(request, "403_csrf.html", {"reason": reason}, status=403)


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    # Browsers and tools ask for /favicon.ico whatever a page links. The URL of
    # the hashed static file is looked up per request: at import time (before
    # collectstatic has run, e.g. during `migrate`) the manifest may not exist.
    return HttpResponsePermanentRedirect(static("img/favicon.ico"))
