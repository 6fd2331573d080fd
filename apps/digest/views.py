"""The Digests pages: the list, one digest, the settings, and two actions
(run now, add a paper to the library). Thin: logic lives in services and
selectors; every digest is looked up through `digest_for` (404 for
anyone else's)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.errors import JarvisError
from apps.digest import selectors, services
from apps.digest.forms import DigestSettingsForm
from apps.digest.models import Digest
from apps.digest.schedule import next_slot_after
from apps.digest.tasks import enqueue_run
from apps.instance.selectors import instance_settings
from apps.library.services import Added


def _situation(user) -> dict:
    """What the pages say about whether the digest can run for this person."""
    switches = instance_settings()
    conf = selectors.digest_settings_for(user=user)
    return {
        "instance_enabled": switches.digest_enabled,
        "may_run": selectors.may_run_digest(user=user),
        "conf": conf,
        "configured": bool(conf and conf.enabled and conf.has_sources),
        "admins": selectors.admins(),
        "next_slot": next_slot_after(
            timezone.localtime(), switches.digest_weekday, switches.digest_hour
        ),
    }


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    digests = selectors.digests_for(user=request.user).select_related("document")[:100]
    context = {"digests": digests, **_situation(request.user)}
    return render(request, "digest/index.html", context)


@login_required
@require_GET
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    digest = selectors.digest_for(user=request.user, pk=pk)
    sections = selectors.digest_sections_for(user=request.user, digest=digest)
    return render(request, "digest/detail.html", {"digest": digest, "sections": sections})


@login_required
@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    situation = _situation(request.user)
    form = DigestSettingsForm(request.POST or None, user=request.user, current=situation["conf"])
    if request.method == "POST" and situation["may_run"] and form.is_valid():
        data = form.cleaned_data
        try:
            services.digest_configure(
                user=request.user,
                enabled=data["enabled"],
                arxiv=data["arxiv"],
                biorxiv=data["biorxiv"],
                keywords=data["keywords"],
                model_label=data["model"],
                research_context=data["research_context"],
                folder=data["folder"],
            )
        except ValidationError as exc:
            form.add_service_errors(exc)
        else:
            messages.success(request, "Your digest settings are saved.")
            return redirect("digest:settings")
    status = 400 if request.method == "POST" else 200
    return render(request, "digest/settings.html", {"form": form, **situation}, status=status)


@login_required
@require_POST
def run_now(request: HttpRequest) -> HttpResponse:
    situation = _situation(request.user)
    if not (situation["instance_enabled"] and situation["may_run"] and situation["configured"]):
        messages.error(request, "Your digest cannot run yet: see below for what is missing.")
        return redirect("digest:index")
    user = request.user
    transaction.on_commit(lambda: enqueue_run(user, trigger=Digest.Trigger.MANUAL))
    messages.info(
        request,
        "Your digest is being made. It takes a few minutes; reload this page "
        "(or watch the Jobs page) to see it.",
    )
    return redirect("digest:index")


@login_required
@require_POST
def add_paper(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    digest = selectors.digest_for(user=request.user, pk=pk)
    back = reverse("digest:detail", args=[digest.pk]) + f"#paper-{number}"
    try:
        outcome = services.digest_paper_add(
            user=request.user,
            digest=digest,
            number=number,
            replace=request.POST.get("replace") == "1",
        )
    except JarvisError as exc:
        messages.error(request, f"Not added: {exc}")
        return redirect(back)
    if isinstance(outcome, Added) and outcome.existing:
        messages.info(request, f"“{outcome.name}” is already in your library.")
    else:
        messages.success(request, "Added to your library; it is being indexed.")
    return redirect(back)
