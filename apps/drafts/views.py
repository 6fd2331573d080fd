"""Drafts pages and the editor's JSON endpoints. Thin: every lookup goes
through a user-scoped selector (another person's draft is a 404) and every
change through `apps.drafts.services`."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.chats.pages import conversation_context
from apps.chats.views import answer_send
from apps.core.errors import AlreadyExists, Conflict, JarvisError, Refused
from apps.core.ids import parse_id
from apps.core.onehop import one_hop
from apps.drafts import builds, sandbox, selectors, services
from apps.drafts.build_queue import build_queue
from apps.drafts.forms import NewDraftForm, NewFileForm
from apps.drafts.preview import preview_for
from apps.instance.selectors import instance_settings


def _error(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _body(request: HttpRequest) -> dict:
    try:
        data = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise Refused("The request body is not JSON.") from None
    if not isinstance(data, dict):
        raise Refused("The request body must be a JSON object.")
    return data


def _status_for(error: JarvisError) -> int:
    return 409 if isinstance(error, Conflict | AlreadyExists) else 400


def _proposal_summary(proposal) -> dict:
    return {
        "id": proposal.pk,
        "filename": proposal.filename,
        "changes": len(proposal.hunks),
        "created_at": proposal.created_at.isoformat(),
    }


# --- Pages


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return _index_page(request, NewDraftForm())


def _index_page(request: HttpRequest, form: NewDraftForm, status: int = 200) -> HttpResponse:
    rows = [
        (d, sandbox.list_files(d.owner_id, d.key)) for d in selectors.drafts_for(user=request.user)
    ]
    context = {
        "rows": rows,
        "form": form,
        "retention_days": instance_settings().drafts_retention_days,
    }
    return render(request, "drafts/index.html", context, status=status)


@login_required
@require_POST
def create(request: HttpRequest) -> HttpResponse:
    form = NewDraftForm(request.POST)
    if form.is_valid():
        try:
            draft = services.draft_create(
                owner=request.user,
                title=form.cleaned_data["title"],
                filename=form.cleaned_data["filename"],
            )
        except JarvisError as exc:
            form.add_error("filename", str(exc))
        else:
            return redirect(reverse("drafts:editor", args=[draft.pk]))
    return _index_page(request, form, status=400)


@login_required
@require_GET
def editor(request: HttpRequest, pk: int) -> HttpResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    files = sandbox.list_files(draft.owner_id, draft.key)
    opened = request.GET.get("file") or draft.main_file
    pending = list(selectors.pending_proposals_for(draft=draft))
    context = {
        "draft": draft,
        "files": files,
        "opened": opened if opened in files else (files[0] if files else ""),
        "proposal_id": parse_id(request.GET.get("proposal", "")) or "",
        "pending": pending,
        "tools": builds.tools_available(),
        "file_form": NewFileForm(),
        # For the editor's script (json_script) and the ✎ marks it starts with.
        "pending_data": [_proposal_summary(p) for p in pending],
        "pending_files": {p.filename for p in pending},
    }
    # The chat panel beside the editor continues the draft's chat, rendered as
    # the chat page renders it (the same partials and websocket frames).
    context.update(
        conversation_context(request.user, selectors.draft_chat_for(user=request.user, draft=draft))
    )
    return render(request, "drafts/editor.html", context)


@login_required
@require_POST
@one_hop
def chat_send(request: HttpRequest, pk: int) -> HttpResponse:
    """A message from the editor's chat panel: a turn of the draft's chat (the
    first one starts it and links it to the draft), told which file is open."""
    user = request.user
    draft = selectors.draft_for(user=user, pk=pk)
    chat = selectors.draft_chat_for(user=user, draft=draft)
    note = selectors.open_file_note_for(draft=draft, filename=request.POST.get("file"))

    def attach(started) -> None:
        if chat is None:
            services.draft_attach_chat(draft=draft, chat=started)

    return answer_send(request, user, chat, context=note, on_start=attach)


@login_required
@require_POST
def add_file(request: HttpRequest, pk: int) -> HttpResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    form = NewFileForm(request.POST)
    if form.is_valid():
        filename = form.cleaned_data["filename"]
        try:
            services.draft_add_file(draft=draft, filename=filename)
        except JarvisError as exc:
            messages.error(request, str(exc))
        else:
            return redirect(f"{reverse('drafts:editor', args=[draft.pk])}?file={filename}")
    else:
        messages.error(request, " ".join(form.errors.get("filename", ["Give the file a name."])))
    return redirect(reverse("drafts:editor", args=[draft.pk]))


@login_required
@require_POST
def update(request: HttpRequest, pk: int) -> HttpResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    try:
        services.draft_update(
            draft=draft,
            title=request.POST.get("title"),
            keep=(request.POST["keep"] == "1") if "keep" in request.POST else None,
        )
    except JarvisError as exc:
        messages.error(request, str(exc))
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("drafts:editor", args=[draft.pk])
    return redirect(target)


@login_required
@require_http_methods(["GET", "POST"])
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    if request.method == "GET":
        files = sandbox.list_files(draft.owner_id, draft.key)
        return render(request, "drafts/delete.html", {"draft": draft, "files": files})
    title = draft.title
    services.draft_delete(draft=draft)
    messages.success(request, f"Deleted the draft “{title}”.")
    return redirect("drafts:index")


# --- The editor's JSON endpoints


@login_required
@require_GET
def file_read(request: HttpRequest, pk: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    name = request.GET.get("name", "")
    try:
        text = sandbox.read_text(draft.owner_id, draft.key, name)
    except JarvisError as exc:
        return _error(str(exc), 404 if "no file" in str(exc) else 400)
    pending = selectors.pending_proposals_for(draft=draft, filename=name)
    return JsonResponse(
        {
            "name": name,
            "text": text,
            "hash": sandbox.file_hash(text),
            "proposals": [_proposal_summary(p) for p in pending],
        }
    )


@login_required
@require_POST
def file_save(request: HttpRequest, pk: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    try:
        data = _body(request)
        text, expect = data.get("text"), data.get("hash")
        if not isinstance(text, str) or not isinstance(expect, str):
            raise Refused("A save needs the text and the hash it was loaded with.")
        new_hash = services.draft_save(
            draft=draft, filename=data.get("name", ""), text=text, expect_hash=expect
        )
    except JarvisError as exc:
        return _error(str(exc), _status_for(exc))
    return JsonResponse({"hash": new_hash})


@login_required
@require_GET
def history(request: HttpRequest, pk: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    name = request.GET.get("name", "")
    snapshots = selectors.snapshots_for(draft=draft, filename=name)
    return JsonResponse(
        {
            "snapshots": [
                {
                    "id": s.pk,
                    "created_at": s.created_at.isoformat(),
                    "reason": s.get_reason_display(),
                    "chars": len(s.text),
                }
                for s in snapshots
            ]
        }
    )


@login_required
@require_GET
def snapshot(request: HttpRequest, pk: int, snapshot_id: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    found = selectors.snapshot_for(user=request.user, draft=draft, pk=snapshot_id)
    return JsonResponse({"id": found.pk, "name": found.filename, "text": found.text})


@login_required
@require_POST
def restore(request: HttpRequest, pk: int, snapshot_id: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    found = selectors.snapshot_for(user=request.user, draft=draft, pk=snapshot_id)
    try:
        new_hash = services.snapshot_restore(draft=draft, snapshot=found)
    except JarvisError as exc:
        return _error(str(exc), _status_for(exc))
    return JsonResponse({"hash": new_hash, "text": found.text, "name": found.filename})


@login_required
@require_GET
def proposal(request: HttpRequest, pk: int, proposal_id: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    found = selectors.proposal_for(user=request.user, draft=draft, pk=proposal_id)
    return JsonResponse(
        {
            **_proposal_summary(found),
            "status": found.status,
            "base_hash": found.base_hash,
            "base_text": found.base_text,
            "new_text": found.new_text,
            "hunks": found.hunks,
        }
    )


@login_required
@require_POST
def proposal_apply(request: HttpRequest, pk: int, proposal_id: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    found = selectors.proposal_for(user=request.user, draft=draft, pk=proposal_id)
    try:
        accepted = _body(request).get("accepted")
        if not isinstance(accepted, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in accepted
        ):
            raise Refused("accepted must be a list of change numbers.")
        new_hash = services.proposal_apply(proposal=found, accepted=accepted)
        text = sandbox.read_text(draft.owner_id, draft.key, found.filename)
    except JarvisError as exc:
        return _error(str(exc), _status_for(exc))
    found.refresh_from_db()
    return JsonResponse(
        {"status": found.status, "hash": new_hash or sandbox.file_hash(text), "text": text}
    )


@login_required
@require_POST
def proposal_discard(request: HttpRequest, pk: int, proposal_id: int) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    found = selectors.proposal_for(user=request.user, draft=draft, pk=proposal_id)
    services.proposal_discard(proposal=found)
    found.refresh_from_db()
    return JsonResponse({"status": found.status})


@login_required
@require_GET
@xframe_options_sameorigin
def preview(request: HttpRequest, pk: int) -> HttpResponse:
    """The saved file rendered as a small HTML page, for the editor's preview
    frame (`sandbox="allow-same-origin"`, never scripts)."""
    draft = selectors.draft_for(user=request.user, pk=pk)
    name = request.GET.get("name", "")
    try:
        text = sandbox.read_text(draft.owner_id, draft.key, name)
    except JarvisError as exc:
        return HttpResponse(str(exc), status=404, content_type="text/plain; charset=utf-8")
    response = HttpResponse(preview_for(name, text), content_type="text/html; charset=utf-8")
    # Stricter than the site's policy: nothing loads, nothing runs, only the
    # preview's own inline styles apply, and only this site may frame it.
    response["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        "frame-ancestors 'self'; base-uri 'none'; form-action 'none'"
    )
    return response


@login_required
@require_POST
def build(request: HttpRequest, pk: int, kind: str) -> JsonResponse:
    """Queue a build: the answer is a ticket the editor polls (build_status)."""
    draft = selectors.draft_for(user=request.user, pk=pk)
    try:
        filename = _body(request).get("name", "")
        builds.build_check(draft=draft, filename=filename, kind=kind)
        ticket = build_queue().submit(
            user_id=request.user.pk,
            draft_id=draft.pk,
            kind=kind,
            filename=filename,
            work=lambda: builds.build(draft=draft, filename=filename, kind=kind),
        )
    except JarvisError as exc:
        return _error(str(exc))
    return JsonResponse(_ticket_answer(draft, ticket), status=202)


@login_required
@require_GET
def build_status(request: HttpRequest, pk: int, kind: str, ticket: str) -> JsonResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    found = build_queue().ticket_for(ticket, user_id=request.user.pk, draft_id=draft.pk)
    if found is None or found.kind != kind:
        return _error("There is no such build.", status=404)
    return JsonResponse(_ticket_answer(draft, found))


def _ticket_answer(draft, ticket) -> dict:
    answer = {
        "ticket": ticket.id,
        "state": ticket.state,
        "status_url": reverse("drafts:build_status", args=[draft.pk, ticket.kind, ticket.id]),
    }
    if ticket.state == "queued":
        answer["ahead"] = build_queue().ahead_of(ticket)
        answer["running"] = len(build_queue().running())
    if ticket.state != "done":
        return answer
    result = ticket.result
    if ticket.error or result is None:
        answer.update(ok=False, seconds=0, error=ticket.error, log="", url="")
        return answer
    url = ""
    if result.ok:
        url = f"{reverse('drafts:pdf', args=[draft.pk, ticket.kind])}?name={result.filename}"
    answer.update(ok=result.ok, seconds=result.seconds, error=result.error, log=result.log, url=url)
    return answer


@login_required
@require_GET
@xframe_options_sameorigin
def pdf(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    draft = selectors.draft_for(user=request.user, pk=pk)
    name = request.GET.get("name", "")
    try:
        path = builds.built_pdf(draft=draft, filename=name, kind=kind)
    except JarvisError:
        return HttpResponse("Nothing built yet.", status=404, content_type="text/plain")
    download = kind == "export" or request.GET.get("download") == "1"
    response = FileResponse(
        path.open("rb"),
        content_type="application/pdf",
        as_attachment=download,
        filename=f"{name.rsplit('.', 1)[0]}.pdf",
    )
    # A PDF built from a model's .tex is active content: it may be framed by
    # this site only, and runs sandboxed (no scripts, no same-origin access).
    response["Content-Security-Policy"] = "sandbox; frame-ancestors 'self'"
    return response
