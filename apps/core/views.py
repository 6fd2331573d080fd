from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from apps.core.selectors import job_runs_visible_to, job_statuses


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("chats:index" if request.user.is_authenticated else "accounts:login")


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


@login_required
@require_GET
def jobs(request: HttpRequest) -> HttpResponse:
    context = {
        "statuses": job_statuses(request.user),
        "runs": job_runs_visible_to(request.user)[:50],
    }
    template = "core/jobs.html#runs" if request.htmx else "core/jobs.html"
    return render(request, template, context)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return render(request, "403_csrf.html", {"reason": reason}, status=403)
