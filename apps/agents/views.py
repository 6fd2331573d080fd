"""Agent chat pages: starting one, and changing its approval mode. The chat
itself is shown by the chat page (apps/chats), which agents fills in through
its page hooks (chat_page.py)."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from apps.agents import services
from apps.agents.decorators import agents_required
from apps.agents.forms import AgentChatForm, ModeForm
from apps.agents.selectors import get_agent_session_for, may_use_agents, profiles_for
from apps.chats.runner import reply_start
from apps.core.errors import JarvisError
from apps.llm.selectors import default_model_for, models_for


@login_required
@agents_required
@require_http_methods(["GET", "POST"])
def new_chat(request: HttpRequest) -> HttpResponse:
    profiles = profiles_for(user=request.user).order_by("name")
    default = default_model_for(user=request.user)
    form = AgentChatForm(
        request.POST or None,
        profiles=profiles,
        models=models_for(user=request.user),
        default_label=(default.display_name or default.label) if default else "",
    )
    if request.method == "POST" and form.is_valid():
        try:
            chat = services.agent_chat_create(
                owner=request.user,
                profile=form.cleaned_data["profile"],
                project_dir=form.cleaned_data["project_dir"],
                mode=form.cleaned_data["mode"],
                model_label=form.cleaned_data["model"],
            )
        except ValidationError as exc:
            form.add_error("project_dir", exc.messages)
        except JarvisError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("chats:detail", pk=chat.pk)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "has_profiles": profiles.exists()}
    return render(request, "agents/new_chat.html", context, status=status)


@login_required
@agents_required
@require_POST
def mode(request: HttpRequest, chat_id: int) -> HttpResponse:
    session = get_agent_session_for(user=request.user, chat_id=chat_id)
    form = ModeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose plan, ask, manual or auto.")
    else:
        try:
            services.agent_mode_set(session=session, mode=form.cleaned_data["mode"])
        except JarvisError as exc:
            messages.error(request, str(exc))
    return redirect("chats:detail", pk=chat_id)


@login_required
@require_POST
async def plan(request: HttpRequest, chat_id: int) -> HttpResponse:
    """ "Carry out (switches to Ask)" on a plan the agent submitted: the chat
    goes to Ask mode and the request to carry the plan out is sent."""
    user = await request.auser()
    if not await sync_to_async(may_use_agents)(user=user):
        raise PermissionDenied("agent chats are not enabled for you")
    session = await sync_to_async(get_agent_session_for)(user=user, chat_id=chat_id)
    try:
        answer = await sync_to_async(services.agent_plan_carry_out)(session=session)
    except JarvisError as exc:
        messages.error(request, str(exc))
    else:
        reply_start(answer.pk, chat_id)
    return redirect("chats:detail", pk=chat_id)
