"""The sidebar's chat folders: create, rename, delete, collapse, move a chat.

Each answers an htmx request with the sidebar's list (templates/chats/_chat_list.html)
and a plain form post with a redirect back to the page it came from, so the
folders work without JavaScript too (the drag in static/js/folders.js posts
the same "move" as the keyboard's "Move to folder" menu).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from apps.chats import folders
from apps.chats.selectors import chat_for, chats_for
from apps.core.errors import JarvisError
from apps.core.ids import parse_id
from apps.core.refusals import refusal_response


def sidebar_list(request: HttpRequest) -> HttpResponse:
    chats = list(chats_for(user=request.user)[:200])
    context = {
        "chats": chats,
        "hits": None,
        "current_chat_id": parse_id(request.POST.get("current", "")),
        **folders.sidebar_context(request.user, chats),
    }
    return render(request, "chats/_chat_list.html", context)


def _answer(request: HttpRequest) -> HttpResponse:
    if request.htmx:
        return sidebar_list(request)
    back = request.META.get("HTTP_REFERER", "")
    if back and url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(back)
    return redirect("chats:index")


def _refused(request: HttpRequest, exc: JarvisError) -> HttpResponse:
    if request.htmx:
        return refusal_response(str(exc))
    messages.error(request, str(exc))
    return _answer(request)


@login_required
@require_POST
def folder_create(request: HttpRequest) -> HttpResponse:
    try:
        folders.folder_create(user=request.user, name=request.POST.get("name", ""))
    except JarvisError as exc:
        return _refused(request, exc)
    return _answer(request)


@login_required
@require_POST
def folder_rename(request: HttpRequest, pk: int) -> HttpResponse:
    folder = folders.folder_for(request.user, pk)
    try:
        folders.folder_rename(folder=folder, name=request.POST.get("name", ""))
    except JarvisError as exc:
        return _refused(request, exc)
    return _answer(request)


@login_required
@require_POST
def folder_delete(request: HttpRequest, pk: int) -> HttpResponse:
    folders.folder_delete(folder=folders.folder_for(request.user, pk))
    return _answer(request)


@login_required
@require_POST
def folder_collapse(request: HttpRequest, pk: int) -> HttpResponse:
    folder = folders.folder_for(request.user, pk)
    folders.folder_collapse_set(folder=folder, collapsed=request.POST.get("collapsed") == "1")
    if request.htmx or request.headers.get("X-Requested-With") == "fetch":
        return HttpResponse(status=204)  # folders.js has already shown it
    return _answer(request)


@login_required
@require_POST
def chat_move(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    raw = request.POST.get("folder", "")
    # "" is the top level; anything else must name one of the person's folders.
    folder = folders.folder_for(request.user, parse_id(raw) or 0) if raw else None
    folders.chat_folder_set(chat=chat, folder=folder)
    return _answer(request)
