"""Settings → Things Jarvis remembers about you: list, add, edit, delete."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.memories import (
    MAX_MEMORIES,
    memories_of,
    memory_add,
    memory_delete,
    memory_for,
    memory_update,
)
from apps.accounts.models import Memory
from apps.core.errors import JarvisError


@login_required
@require_GET
def memories(request: HttpRequest) -> HttpResponse:
    context = {
        "memories": memories_of(request.user),
        "max_chars": Memory.MAX_CHARS,
        "max_memories": MAX_MEMORIES,
    }
    return render(request, "accounts/memories.html", context)


@login_required
@require_POST
def add(request: HttpRequest) -> HttpResponse:
    try:
        memory_add(
            owner=request.user,
            text=request.POST.get("text", ""),
            cloud_allowed=request.POST.get("cloud_allowed") == "1",
        )
    except JarvisError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Remembered.")
    return redirect("accounts:memories")


@login_required
@require_POST
def update(request: HttpRequest, pk: int) -> HttpResponse:
    memory = memory_for(request.user, pk)
    try:
        memory_update(
            memory=memory,
            text=request.POST.get("text", ""),
            cloud_allowed=request.POST.get("cloud_allowed") == "1",
        )
    except JarvisError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Saved.")
    return redirect("accounts:memories")


@login_required
@require_POST
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    memory_delete(memory=memory_for(request.user, pk))
    messages.success(request, "Forgotten.")
    return redirect("accounts:memories")
