"""Settings → SSH profiles: list, add, change, delete, check a connection,
accept a host key, forget a pinned one.

Every view needs the "use agent chats" permission (403 without it); a profile
is looked up through the person's own profiles (404 for anyone else's), or,
to view and check one, also those shared with them. Secret fields are marked
sensitive so an error report never carries them.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.agents import services
from apps.agents.decorators import agents_required
from apps.agents.forms import ProfileForm
from apps.agents.models import SSHProfile
from apps.agents.selectors import own_profile_for, profile_for, profiles_for
from apps.core.errors import JarvisError

SECRET_FIELDS = ("private_key", "password")


def _add_service_error(form: ProfileForm, exc: Exception) -> None:
    if isinstance(exc, ValidationError) and hasattr(exc, "error_dict"):
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    elif isinstance(exc, ValidationError):
        form.add_error(None, exc.messages)
    else:
        form.add_error(None, str(exc))


def _profile_page(
    request: HttpRequest,
    profile: SSHProfile,
    *,
    form: ProfileForm | None = None,
    check: services.ProfileCheck | None = None,
    accepted: str = "",
    status: int = 200,
) -> HttpResponse:
    """`accepted`: the fingerprint the person accepted, when the server no
    longer shows it (the page then says nothing was pinned)."""
    own = profile.owner_id == request.user.pk
    if own and form is None:
        form = ProfileForm(profile=profile)
    context = {
        "profile": profile,
        "own": own,
        "form": form if own else None,
        "check": check,
        "accepted": accepted,
    }
    return render(request, "agents/profile.html", context, status=status)


@login_required
@agents_required
@require_GET
def profile_list(request: HttpRequest) -> HttpResponse:
    profiles = list(profiles_for(user=request.user).order_by("name"))
    context = {
        "own": [p for p in profiles if p.owner_id == request.user.pk],
        "shared": [p for p in profiles if p.owner_id != request.user.pk],
    }
    return render(request, "agents/profiles.html", context)


@sensitive_post_parameters(*SECRET_FIELDS)
@login_required
@agents_required
@require_http_methods(["GET", "POST"])
def profile_add(request: HttpRequest) -> HttpResponse:
    form = ProfileForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            profile = services.profile_create(
                owner=request.user,
                name=data["name"],
                host=data["host"],
                port=data["port"],
                username=data["username"],
                **form.secrets(),
            )
        except (JarvisError, ValidationError) as exc:
            _add_service_error(form, exc)
        else:
            messages.success(request, _added_message(profile))
            return redirect("ssh_profiles:detail", pk=profile.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "agents/profile_add.html", {"form": form}, status=status)


def _added_message(profile: SSHProfile) -> str:
    if profile.auth == SSHProfile.Auth.KEY:
        return (
            f"Added “{profile.name}”. Put its public key (below) into ~/.ssh/authorized_keys "
            f"of {profile.username} on {profile.host}, then check the connection."
        )
    return f"Added “{profile.name}”. Check the connection to see the server's host key."


@sensitive_post_parameters(*SECRET_FIELDS)
@login_required
@agents_required
@require_http_methods(["GET", "POST"])
def profile_detail(request: HttpRequest, pk: int) -> HttpResponse:
    if request.method == "GET":
        return _profile_page(request, profile_for(user=request.user, pk=pk))
    profile = own_profile_for(user=request.user, pk=pk)
    form = ProfileForm(request.POST, profile=profile)
    if form.is_valid():
        data = form.cleaned_data
        had_pin = profile.is_pinned
        try:
            services.profile_update(
                profile=profile,
                name=data["name"],
                host=data["host"],
                port=data["port"],
                username=data["username"],
                **form.secrets(),
            )
        except (JarvisError, ValidationError) as exc:
            profile.refresh_from_db()
            _add_service_error(form, exc)
        else:
            note = (
                " The host or port changed, so its host key was forgotten."
                if (had_pin and not profile.is_pinned)
                else ""
            )
            messages.success(request, f"Saved “{profile.name}”.{note}")
            return redirect("ssh_profiles:detail", pk=profile.pk)
    return _profile_page(request, profile, form=form, status=400)


@login_required
@agents_required
@require_POST
def profile_check(request: HttpRequest, pk: int) -> HttpResponse:
    """Connect and run `uname -a`; on a first connection, show the server's
    host key fingerprint for the owner to accept."""
    profile = profile_for(user=request.user, pk=pk)
    check = services.profile_check(user=request.user, profile=profile)
    return _profile_page(request, profile, check=check)


@login_required
@agents_required
@require_POST
def profile_accept(request: HttpRequest, pk: int) -> HttpResponse:
    """Pin the host key whose fingerprint the page showed, and only that one."""
    profile = own_profile_for(user=request.user, pk=pk)
    shown = request.POST.get("fingerprint", "").strip()
    if not shown:
        return _profile_page(request, profile, status=400)
    check = services.profile_check(
        user=request.user, profile=profile, accept_host_key=True, expected_fingerprint=shown
    )
    if check.ok:
        # Post/redirect/get: a reload of the page shows the profile, not a
        # second accept (nor a 405 for a GET of this address).
        messages.success(
            request,
            f"Accepted the host key {check.fingerprint}. Connected: {check.uname}",
        )
        return redirect("ssh_profiles:detail", pk=profile.pk)
    moved = shown if check.needs_acceptance and check.fingerprint != shown else ""
    return _profile_page(request, profile, check=check, accepted=moved)


@login_required
@agents_required
@require_POST
def profile_forget(request: HttpRequest, pk: int) -> HttpResponse:
    profile = own_profile_for(user=request.user, pk=pk)
    services.profile_forget_host_key(profile=profile)
    messages.success(
        request,
        f"Forgot the host key of “{profile.name}”. Check the connection to see the key "
        "the server has now, and accept it only if it is the one you expect.",
    )
    return redirect("ssh_profiles:detail", pk=profile.pk)


@login_required
@agents_required
@require_http_methods(["GET", "POST"])
def profile_delete(request: HttpRequest, pk: int) -> HttpResponse:
    profile = own_profile_for(user=request.user, pk=pk)
    if request.method == "POST":
        name = profile.name
        services.profile_delete(profile=profile)
        messages.success(request, f"Deleted the SSH profile “{name}”.")
        return redirect("ssh_profiles:list")
    chats = profile.agent_sessions.count()
    return render(request, "agents/profile_delete.html", {"profile": profile, "chats": chats})
