"""Settings → Assistant: a person's default model, response style and
instructions, shown in the order they reach the model (the household's
prompt, then theirs; each chat's own come after, on the chat)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts.response_style import revert_response_style
from apps.chats import services
from apps.chats.forms import AssistantForm
from apps.instance.prompts import system_prompt


@login_required
@require_http_methods(["GET", "POST"])
def assistant(request: HttpRequest) -> HttpResponse:
    form = AssistantForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        services.assistant_preferences_set(
            user=request.user,
            default_model=form.cleaned_data["default_model"],
            response_style=form.cleaned_data["response_style"],
            instructions=form.cleaned_data["instructions"],
        )
        messages.success(request, "Assistant preferences saved.")
        return redirect("assistant:page")
    context = {
        "assistant_form": form,
        "style_is_default": not request.user.response_style,
        "instance_prompt": system_prompt(),
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "chats/settings/assistant.html", context, status=status)


@login_required
@require_POST
def revert_style(request: HttpRequest) -> HttpResponse:
    revert_response_style(request.user)
    messages.success(request, "Response style reverted to the default.")
    return redirect("assistant:page")


@login_required
@require_POST
def revert_instructions(request: HttpRequest) -> HttpResponse:
    services.personal_instructions_set(user=request.user, text="")
    messages.success(request, "Your instructions were removed.")
    return redirect("assistant:page")
