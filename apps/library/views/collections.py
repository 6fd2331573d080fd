"""The collections page: your sources, their sharing and cloud policy, folder
registration for admins, reprocessing, and restoring removed files."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import MANAGE_FOLDER_SOURCES
from apps.core.errors import JarvisError
from apps.library.forms import CollectionForm, RegisterFolderForm
from apps.library.selectors import owned_source_for, sources_visible_to
from apps.library.services.documents import documents_mark_pending, source_path_restore
from apps.library.services.sources import private_dir_notes, source_register, source_update
from apps.library.tasks import enqueue_reprocess


def _page(request: HttpRequest, *, register_form=None, status=200) -> HttpResponse:
    own = list(
        sources_visible_to(request.user)
        .filter(owner=request.user)
        .prefetch_related("shared_groups", "exclusions")
        .order_by("name")
    )
    shared = sources_visible_to(request.user).exclude(owner=request.user).select_related("owner")
    can_register = request.user.has_perm(MANAGE_FOLDER_SOURCES)
    context = {
        "collections": [(s, CollectionForm(source=s, prefix=f"c{s.pk}")) for s in own],
        "shared": shared.order_by("owner__username", "name"),
        "can_register": can_register,
        "register_form": register_form
        or (RegisterFolderForm(user=request.user) if can_register else None),
        "groups": Group.objects.order_by("name"),
    }
    return render(request, "library/collections.html", context, status=status)


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return _page(request)


@login_required
@require_POST
def update(request: HttpRequest, pk: int) -> HttpResponse:
    source = owned_source_for(request.user, pk)
    form = CollectionForm(request.POST, source=source, prefix=f"c{source.pk}")
    if not form.is_valid():
        messages.error(request, "; ".join(e for errors in form.errors.values() for e in errors))
        return redirect("library:collections")
    try:
        changed = source_update(source=source, **form.cleaned_data)
    except JarvisError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"“{source.name}” saved. {changed}" if changed else f"“{source.name}” saved.",
        )
    return redirect("library:collections")


@login_required
@require_POST
def register(request: HttpRequest) -> HttpResponse:
    form = RegisterFolderForm(request.POST, user=request.user)
    if not form.is_valid():
        return _page(request, register_form=form, status=400)
    data = form.cleaned_data
    try:
        source = source_register(
            actor=request.user,
            owner=data["owner"] or request.user,
            name=data["name"],
            path=data["path"],
            kind=data["kind"],
            sharing=data["sharing"],
            cloud=data["cloud"],
        )
    except JarvisError as exc:
        form.add_error("path", str(exc))
        return _page(request, register_form=form, status=400)
    enqueue_reprocess(source, user_id=request.user.pk, mode="sync")
    messages.success(request, f"Registered “{source.name}”. Its files are being indexed now.")
    for note in private_dir_notes(source):
        messages.warning(request, note)
    return redirect("library:collections")


@login_required
@require_POST
def reprocess(request: HttpRequest, pk: int) -> HttpResponse:
    source = owned_source_for(request.user, pk)
    mode = request.POST.get("mode", "failed")
    if mode not in ("full", "failed", "sync"):
        mode = "failed"
    documents = source.documents.all()
    if mode == "failed":
        documents = documents.filter(status="failed")
    if mode != "sync":
        documents_mark_pending(documents=list(documents))
    enqueue_reprocess(source, user_id=request.user.pk, mode=mode)
    labels = {
        "full": "Reading every document again",
        "failed": "Trying the documents that could not be read again",
        "sync": "Syncing",
    }
    messages.info(request, f"{labels[mode]} in “{source.name}”; the library shows how it goes.")
    return redirect("library:collections")


@login_required
@require_POST
def restore(request: HttpRequest, pk: int) -> HttpResponse:
    source = owned_source_for(request.user, pk)
    source_path_restore(user=request.user, source=source, path=request.POST.get("path", ""))
    enqueue_reprocess(source, user_id=request.user.pk, mode="sync")
    messages.success(request, "Restored: it comes back with the next sync (queued now).")
    return redirect("library:collections")
