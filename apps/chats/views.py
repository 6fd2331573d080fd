"""Chat pages. A reply runs as a task on the web process's event loop
(live.REGISTRY): the send, regenerate and edit endpoints write the turn in one
thread hop and start it there (apps.core.onehop); Stop and the approval
card's answer are async views."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from apps.chats import approvals, attachments, frames, relay, services
from apps.chats.commands import chat_make_private, new_chat_private, new_chat_private_check
from apps.chats.export import chat_markdown, export_filename
from apps.chats.folders import sidebar_context
from apps.chats.history import search_chats
from apps.chats.live import REGISTRY
from apps.chats.models import Chat, Message, PendingAction
from apps.chats.pages import (
    chat_header_context,
    chat_header_frame,
    chat_page_context,
    conversation_context,
    header_state,
)
from apps.chats.reply import Reply
from apps.chats.runner import reply_resume, reply_start, reply_stop_waiting
from apps.chats.selectors import approval_card_for, chat_for, chats_for
from apps.core.errors import Conflict, JarvisError, TooMany
from apps.core.ids import parse_id, parse_ids
from apps.core.middleware import csp_allow_inline_styles
from apps.core.onehop import on_loop, one_hop
from apps.core.refusals import refusal_html, refusal_swapped
from apps.library.selectors import sources_visible_to, visible_to


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "chats/chat.html", chat_page_context(request.user, None))


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    context = chat_page_context(request.user, chat)
    response = render(request, "chats/chat.html", context)
    if context["inline_styles"]:
        csp_allow_inline_styles(response)  # a hook's widget (the terminal) styles itself inline
    return response


def _mentions(request: HttpRequest) -> list[dict]:
    mentions = []
    for value in request.POST.getlist("mention")[:20]:
        kind, _, pk = value.partition(":")
        number = parse_id(pk)
        if kind in ("document", "collection") and number is not None:
            mentions.append({"kind": kind, "id": number})
    return mentions


def _safe_next(request: HttpRequest) -> str | None:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


def _visible_mentions(user, mentions: list[dict]) -> list[dict]:
    """Keep only mentions of things the person may read (a forged id is dropped)."""
    if not mentions:
        return []
    wanted = {
        kind: [m["id"] for m in mentions if m["kind"] == kind]
        for kind in ("document", "collection")
    }
    allowed = {
        "document": set(
            visible_to(user).filter(pk__in=wanted["document"]).values_list("pk", flat=True)
        ),
        "collection": set(
            sources_visible_to(user)
            .filter(pk__in=wanted["collection"])
            .values_list("pk", flat=True)
        ),
    }
    return [m for m in mentions if m["id"] in allowed[m["kind"]]]


def _after(request: HttpRequest) -> int | None:
    """The reply the person's page ends with (chat.js sends it): the
    conversation goes on from what they see."""
    value = request.POST.get("after", "")
    return parse_id(value)


# The composer's Web toggle (apps.websearch): said to the model with the message.
WEB_REQUESTED = "web search requested for this message: use the web_search tool"


def _web_mentions(request: HttpRequest) -> list[dict]:
    """The Web toggle ticked for this message: a {"kind": "web"} mention."""
    return [{"kind": "web"}] if request.POST.get("web") == "1" else []


def _start(user, chat: Chat | None, request: HttpRequest, context: str, on_start):
    web = _web_mentions(request)
    if web:
        context = f"{context}; {WEB_REQUESTED}" if context else WEB_REQUESTED
    chat, question, answer = services.turn_start(
        user=user,
        chat=chat,
        text=request.POST.get("text", ""),
        mentions=_visible_mentions(user, _mentions(request)) + web,
        model_label=request.POST.get("model", "").strip(),
        context=context,
        after=_after(request),
        attachments=parse_ids(
            request.POST.getlist("attachment"), limit=attachments.MAX_PER_MESSAGE + 1
        ),
    )
    if on_start is not None:
        on_start(chat)
    return chat, question, answer


def answer_send(
    request: HttpRequest,
    user,
    chat: Chat | None,
    *,
    context: str = "",
    on_start: Callable[[Chat], None] | None = None,
) -> HttpResponse:
    """What every send endpoint does (in one thread hop, apps.core.onehop):
    write the question, start the reply on this process's event loop, and
    answer the page. A new chat is opened (or, from the drafts editor, the page
    stays where it was: `next`); an existing one gets the exchange to append.
    `context` is a line for the model only; `on_start(chat)` runs after the
    turn is written (the editor attaches the chat)."""
    try:
        started, question, answer = _start(user, chat, request, context, on_start)
    except Conflict as exc:
        return HttpResponse(_error(str(exc)), status=409)
    except TooMany as exc:
        return HttpResponse(_error(str(exc)), status=429)
    except JarvisError as exc:
        return HttpResponse(_error(str(exc)), status=400)
    on_loop(lambda: reply_start(answer.pk, started.pk))
    htmx = bool(request.htmx)
    if chat is None:
        url = _safe_next(request) or reverse("chats:detail", args=[started.pk])
        if not htmx:
            return redirect(url)
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    if not htmx:
        return redirect("chats:detail", pk=started.pk)
    return HttpResponse(_exchange_html(request, user, started, question, answer))


def _exchange_html(request, user, chat: Chat, question: Message, answer: Message) -> str:
    reply = Reply.of(answer, actions=[], configure_link=user.is_staff)
    return render_to_string(
        "chats/_exchange.html", {"question": question, "reply": reply}, request=request
    )


@login_required
@require_POST
def attach(request: HttpRequest) -> HttpResponse:
    """Files attached in the composer: each kept in the person's uploads (or
    refused with its reason); the answer is a chip per file for the composer
    (a hidden `attachment` input each) that the send then carries."""
    files = request.FILES.getlist("files")
    if not files:
        return _attach_error(request, "Choose a file to attach.")
    if len(files) > attachments.MAX_PER_MESSAGE:
        return _attach_error(
            request, f"Attach at most {attachments.MAX_PER_MESSAGE} files to one message."
        )
    results = []
    for uploaded in files:
        problem = attachments.too_large(uploaded.size)  # before reading it into memory
        if problem:
            results.append(attachments.Attached(name=uploaded.name, error=problem))
            continue
        results.append(
            attachments.attachment_add(user=request.user, name=uploaded.name, data=uploaded.read())
        )
    status = 200 if any(r.document is not None for r in results) else 400
    return render(request, "chats/_attachments.html", {"results": results}, status=status)


def _attach_error(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "chats/_attachments.html", {"error": message}, status=400)


@login_required
@require_POST
@one_hop
def send_new(request: HttpRequest) -> HttpResponse:
    user = request.user
    on_start = None
    if request.POST.get("private") == "1":  # the composer's /private on the new-chat page
        model = request.POST.get("model", "").strip()
        try:
            new_chat_private_check(user=user, model_label=model)
        except JarvisError as exc:
            return HttpResponse(_error(str(exc)), status=400)
        on_start = new_chat_private
    return answer_send(request, user, None, on_start=on_start)


@login_required
@require_POST
@one_hop
def send(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    return answer_send(request, request.user, chat)


def _error(message: str) -> str:
    # app.js shows it by the composer (the chat page's data-refusal-target).
    return refusal_html(message)


@login_required
@require_POST
async def stop(request: HttpRequest, pk: int, message_id: int) -> HttpResponse:
    user = await request.auser()
    chat = await sync_to_async(chat_for)(user=user, pk=pk)
    exists = await sync_to_async(chat.messages.filter(pk=message_id).exists)()
    if not exists:
        raise Http404
    if not REGISTRY.cancel(message_id) and not await reply_stop_waiting(message_id):
        # Not running here and not waiting (a reply waiting for approval stops
        # with its calls denied, or its questions unanswered, and the open
        # tabs are told): another web process may be running it.
        relay.stop_elsewhere(chat.pk, message_id)
    return HttpResponse(status=204)


@login_required
@require_POST
async def approval(request: HttpRequest, pk: int) -> HttpResponse:
    """The person's answer to an approval card: Approve (the ticked calls run,
    the others are denied), Deny, or Approve all for this chat. The reply
    goes on at once."""
    user = await request.auser()
    card = await sync_to_async(approval_card_for)(user=user, pk=pk)
    decision = request.POST.get("decision", "")
    if decision not in ("approve", "deny", "approve_chat"):
        return HttpResponse(_error("choose Approve, Deny or Approve all"), status=400)
    chosen = set(request.POST.getlist("call")) if decision == "approve" else None
    try:
        await sync_to_async(approvals.approvals_resolve)(
            user=user,
            action=card,
            approve=set() if decision == "deny" else chosen,
            approve_all_for_chat=decision == "approve_chat",
        )
    except approvals.UnknownCall:
        raise Http404 from None
    except JarvisError as exc:
        # The card again, saying why (a second click, a right taken away).
        await sync_to_async(card.refresh_from_db)()
        html = await sync_to_async(render_to_string)(
            "chats/_action.html", {"action": card, "error": str(exc)}, request=request
        )
        return refusal_swapped(HttpResponse(html, status=409))
    await reply_resume(card.message_id)
    await sync_to_async(card.refresh_from_db)()
    html = await sync_to_async(render_to_string)(
        "chats/_action.html", {"action": card}, request=request
    )
    response = HttpResponse(html)
    if decision == "approve_chat":
        # The chat is in Auto mode now: the header must say so at once.
        response["HX-Refresh"] = "true"
    return response


def _conversation(request: HttpRequest, user, chat: Chat) -> HttpResponse:
    """After the branch shown changed: the page's conversation, or the chat page."""
    if not request.htmx:
        return redirect("chats:detail", pk=chat.pk)
    chat.refresh_from_db()
    return render(request, "chats/_messages.html", conversation_context(user, chat))


def _branch_changed(
    request: HttpRequest, chat: Chat, change: Callable[[], Message | None]
) -> HttpResponse:
    """Run `change` (a regenerate, an edit, a page to another version); start
    the reply it returns; tell the chat's other tabs; answer with the
    conversation as it now is. A refusal (a reply still running, a model the
    chat may not use) is a 409 or 400 with the reason. In one thread hop
    (apps.core.onehop)."""
    shown = header_state(chat)
    try:
        answer = change()
    except Conflict as exc:
        return HttpResponse(_error(str(exc)), status=409)
    except TooMany as exc:
        return HttpResponse(_error(str(exc)), status=429)
    except JarvisError as exc:
        return HttpResponse(_error(str(exc)), status=400)
    if answer is not None:
        # Its first frame tells the other tabs, with the header if the change
        # moved the chat to another model.
        header = chat_header_frame(chat.pk, unless=shown)
        on_loop(lambda: reply_start(answer.pk, chat.pk, header=header))
    else:
        marker = frames.leaf_marker(_leaf_of(chat))
        on_loop(lambda: REGISTRY.publish(chat.pk, marker))
    return _conversation(request, request.user, chat)


def _leaf_of(chat: Chat) -> int:
    return Chat.objects.filter(pk=chat.pk).values_list("leaf_id", flat=True).get()


@login_required
@require_POST
@one_hop
def regenerate(request: HttpRequest, pk: int, message_id: int) -> HttpResponse:
    """A new reply beside `message_id` (with another model if one is chosen)."""
    user = request.user
    chat = chat_for(user=user, pk=pk)
    reply = get_object_or_404(chat.messages, pk=message_id)
    label = request.POST.get("model", "").strip() or None
    return _branch_changed(
        request,
        chat,
        lambda: services.reply_regenerate(user=user, chat=chat, reply=reply, model_label=label),
    )


@login_required
@require_POST
@one_hop
def edit(request: HttpRequest, pk: int, message_id: int) -> HttpResponse:
    """The person's message `message_id`, rewritten: the chat goes on from it."""
    chat = chat_for(user=request.user, pk=pk)
    message = get_object_or_404(chat.messages, pk=message_id)
    text = request.POST.get("text", "")
    return _branch_changed(
        request, chat, lambda: services.message_edit(chat=chat, message=message, text=text)[1]
    )


@login_required
@require_POST
@one_hop
def branch(request: HttpRequest, pk: int, message_id: int) -> HttpResponse:
    """Page to another version of a message (the pager under it: "2 of 3")."""
    chat = chat_for(user=request.user, pk=pk)
    message = get_object_or_404(chat.messages, pk=message_id)

    def show() -> None:
        services.branch_show(chat=chat, message=message)

    return _branch_changed(request, chat, show)


@login_required
@require_GET
def conversation(request: HttpRequest, pk: int) -> HttpResponse:
    """The branch shown, for a tab that shows another (chat.js fetches it)."""
    chat = chat_for(user=request.user, pk=pk)
    return render(request, "chats/_messages.html", conversation_context(request.user, chat))


@login_required
@require_GET
def export(request: HttpRequest, pk: int) -> HttpResponse:
    """The conversation shown as a Markdown file, with each answer's sources."""
    chat = chat_for(user=request.user, pk=pk)
    response = HttpResponse(chat_markdown(chat), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export_filename(chat)}"'
    return response


@login_required
@require_POST
def rename(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    with contextlib.suppress(JarvisError):  # an empty title keeps the old one
        services.chat_rename(chat=chat, title=request.POST.get("title", ""))
    return redirect("chats:detail", pk=chat.pk)


@login_required
@require_POST
def pin(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    services.chat_pin_toggle(chat=chat)
    return redirect("chats:detail", pk=chat.pk)


@login_required
@require_POST
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    services.chat_delete(chat=chat)
    return redirect("chats:index")


@login_required
@require_POST
def notes_only(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    services.chat_notes_only_set(chat=chat, notes_only=request.POST.get("notes_only") == "1")
    return redirect("chats:detail", pk=chat.pk)


@login_required
@require_POST
def model(request: HttpRequest, pk: int) -> HttpResponse:
    chat = chat_for(user=request.user, pk=pk)
    try:
        label = request.POST.get("model_free", "").strip() or request.POST.get("model", "")
        services.chat_model_set(user=request.user, chat=chat, label=label)
    except JarvisError as exc:
        if request.htmx:
            # Through the one error path (static/js/app.js): the reason by the
            # composer; chat.js puts the picker back to the model still in use.
            return HttpResponse(refusal_html(str(exc)), status=400)
        messages.error(request, str(exc))
        return redirect("chats:detail", pk=chat.pk)
    header = _header_everywhere(request.user, chat)
    if request.htmx:
        # The page stays where it is; the header shows the model now in use.
        return HttpResponse(header)
    return redirect("chats:detail", pk=chat.pk)


def _header_everywhere(user, chat: Chat) -> str:
    """The chat's header as it is now, handed to every open tab of the chat
    (a picker or a /private in one tab shows in the others at once)."""
    header = frames.render_header(chat_header_context(user, chat))
    on_loop(lambda: REGISTRY.publish(chat.pk, header))
    return header


@login_required
@require_GET
def search(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()[:200]
    hits = search_chats(request.user, query) if query else None
    chats = (
        [hit.chat for hit in hits] if hits is not None else list(chats_for(user=request.user)[:200])
    )
    context = {"chats": chats, "hits": hits, "query": query}
    if hits is None:  # the list as the sidebar shows it, in its folders
        context.update(sidebar_context(request.user, chats))
        context["current_chat_id"] = parse_id(request.GET.get("current", ""))
    return render(request, "chats/_chat_list.html", context)


@login_required
@require_POST
def action(request: HttpRequest, pk: int) -> HttpResponse:
    pending = (
        PendingAction.objects.select_related("message__chat")
        .filter(pk=pk, message__chat__owner=request.user)
        .first()
    )
    if pending is None:
        raise Http404
    text = request.POST.get("text")
    try:
        result = services.action_resolve(
            user=request.user,
            action=pending,
            confirm=request.POST.get("confirm") == "1",
            text=text,
            cloud_allowed=request.POST.get("cloud_allowed") == "1",
        )
    except JarvisError as exc:
        context = {"action": pending, "result": str(exc), "text": text}
        return refusal_swapped(render(request, "chats/_action.html", context, status=400))
    pending.refresh_from_db()
    return render(request, "chats/_action.html", {"action": pending, "result": result})


@login_required
@require_POST
def instructions(request: HttpRequest, pk: int) -> HttpResponse:
    """This chat's instructions; Revert posts them empty."""
    chat = chat_for(user=request.user, pk=pk)
    try:
        services.chat_instructions_set(chat=chat, text=request.POST.get("instructions", ""))
    except JarvisError as exc:
        messages.error(request, str(exc))
    else:
        text = "Instructions for this chat saved." if chat.instructions else "Reverted."
        messages.success(request, text)
    return redirect("chats:detail", pk=chat.pk)


@login_required
@require_GET
def mentions(request: HttpRequest) -> JsonResponse:
    """Documents and collections matching what follows an @ in the composer."""
    query = request.GET.get("q", "").strip()[:100]
    documents = (
        visible_to(request.user).filter(title__icontains=query).order_by("-effective_date")[:8]
    )
    collections = sources_visible_to(request.user).filter(name__icontains=query)[:4]
    items = [{"kind": "collection", "id": c.pk, "label": c.name} for c in collections]
    items += [{"kind": "document", "id": d.pk, "label": d.title or d.path} for d in documents]
    return JsonResponse({"items": items})


@login_required
@require_POST
def private(request: HttpRequest, pk: int) -> HttpResponse:
    """The composer's /private: the chat stays on local models from now on."""
    chat = chat_for(user=request.user, pk=pk)
    try:
        said = chat_make_private(chat=chat)
    except JarvisError as exc:
        return HttpResponse(_error(str(exc)), status=400)
    header = _header_everywhere(request.user, chat)
    if request.htmx:
        # The header's badge and model picker as they are now, swapped in oob.
        response = HttpResponse(header)
        response["Jarvis-Said"] = said
        return response
    messages.success(request, said)
    return redirect("chats:detail", pk=chat.pk)
