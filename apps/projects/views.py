"""The Projects page: the registry as a table with status filters, and one
project with its fields, the passages they came from, and its timeline."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from apps.projects.form import STATUSES
from apps.projects.models import Status
from apps.projects.selectors import project_for, project_view_for, projects_for, timeline_for


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    status = status if status in STATUSES else ""
    everything = projects_for(user=request.user)
    shown = [v for v in everything if v.status == status] if status else everything
    filters = [
        (s.value, s.label, sum(1 for v in everything if v.status == s.value)) for s in Status
    ]
    context = {"projects": shown, "total": len(everything), "status": status, "filters": filters}
    return render(request, "projects/index.html", context)


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    project = project_for(user=request.user, pk=pk)
    context = {
        "view": project_view_for(
            user=request.user, project=project, reading=project.reading, cloud_only=False
        ),
        "reading": project.reading,
        "is_owner": project.source.owner_id == request.user.pk,
        "timeline": timeline_for(user=request.user, project=project),
    }
    return render(request, "projects/detail.html", context)
