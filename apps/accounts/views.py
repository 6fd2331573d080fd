"""Sign-in (throttled), sign-out, sign-up, and Settings → Profile and password."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login as auth_login
from django.contrib.auth import logout as auth_logout
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.accounts import services
from apps.accounts.forms import (
    LoginForm,
    PasswordForm,
    PreferencesForm,
    SignupForm,
    ThemeForm,
)
from apps.instance.selectors import instance_settings


def _client_ip(request: HttpRequest) -> str | None:
    # The client's own address, even behind nginx (apps.core.middleware.ClientAddressMiddleware).
    return request.META.get("REMOTE_ADDR") or None


def _next_url(request: HttpRequest, fallback: str = "home") -> str:
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return resolve_url(fallback)


@sensitive_post_parameters("password")
@never_cache
@require_http_methods(["GET", "POST"])
def login_view(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(_next_url(request))
    form = LoginForm(request, data=request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        attempt = services.login_attempt_start(
            username=request.POST.get("username", ""), ip=_client_ip(request)
        )
        if attempt.refused:
            form = LoginForm(request)
            form.throttle_message = attempt.refusal_message()
            status = 429
        elif form.is_valid():  # the password is verified here, after the attempt was counted
            services.login_attempt_succeeded(attempt=attempt)
            auth_login(request, form.get_user())  # rotates the session key
            return redirect(_next_url(request))
    context = {
        "form": form,
        "next": request.GET.get("next", request.POST.get("next", "")),
        "signup_enabled": instance_settings().signup_enabled,
    }
    return render(request, "accounts/login.html", context, status=status)


@never_cache
@require_GET
def admin_login_view(request: HttpRequest) -> HttpResponse:
    """Where Django's admin sends anyone it turns away. A stranger signs in on
    the one throttled sign-in page; a signed-in person who is not an admin is
    told so (redirecting them to sign in would send them straight back to the
    admin, which would send them here again, for ever)."""
    if request.user.is_authenticated:
        return render(request, "accounts/admin_required.html", status=403)
    query = request.META.get("QUERY_STRING", "")
    return redirect(resolve_url("accounts:login") + (f"?{query}" if query else ""))


@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    auth_logout(request)  # the user_logged_out signal closes this session's sockets
    messages.info(request, "You are signed out.")
    return redirect("accounts:login")


@sensitive_post_parameters("password1", "password2")
@require_http_methods(["GET", "POST"])
def signup_view(request: HttpRequest) -> HttpResponse:
    if not instance_settings().signup_enabled:
        return render(request, "accounts/signup_closed.html", status=403)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = services.user_create(
            username=form.cleaned_data["username"],
            password=form.cleaned_data["password1"],
            display_name=form.cleaned_data.get("display_name", ""),
            validate=False,  # the form has validated it already
        )
        auth_login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
def preferences_view(request: HttpRequest) -> HttpResponse:
    form = PreferencesForm(
        request.POST if request.method == "POST" else None, instance=request.user
    )
    if request.method == "POST" and form.is_valid():
        services.preferences_update(
            user=request.user,
            display_name=form.cleaned_data["display_name"],
            theme=form.cleaned_data["theme"],
            send_with_ctrl_enter=form.cleaned_data["send_with_ctrl_enter"],
        )
        messages.success(request, "Preferences saved.")
        return redirect("accounts:preferences")
    return _settings_page(request, form=form)


def _settings_page(request: HttpRequest, *, status: int = 200, **forms) -> HttpResponse:
    """The profile page with its two forms; the one that failed keeps its errors."""
    context = {
        "form": forms.get("form") or PreferencesForm(instance=request.user),
        "password_form": forms.get("password_form") or PasswordForm(request.user),
    }
    return render(request, "accounts/preferences.html", context, status=status)


@login_required
@sensitive_post_parameters("old_password", "new_password1", "new_password2")
@require_POST
def password_change_view(request: HttpRequest) -> HttpResponse:
    password_form = PasswordForm(request.user, request.POST)
    if password_form.is_valid():
        services.user_set_password(
            user=request.user, password=password_form.cleaned_data["new_password1"], validate=False
        )
        update_session_auth_hash(request, request.user)  # keep this session signed in
        messages.success(request, "Password changed. Your other sessions were signed out.")
        return redirect("accounts:preferences")
    return _settings_page(request, password_form=password_form, status=400)


@login_required
@require_POST
def theme_view(request: HttpRequest) -> HttpResponse:
    form = ThemeForm(request.POST)
    if form.is_valid():
        services.preferences_update(
            user=request.user,
            display_name=request.user.display_name,
            theme=form.cleaned_data["theme"],
        )
    return redirect(_next_url(request))
