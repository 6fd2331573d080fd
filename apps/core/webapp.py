"""Jarvis as an installable web app: the manifest, the service worker (served
from the site root so its scope is the whole site) and the offline page it
shows when the server cannot be reached.

The worker caches the static shell and nothing else: every navigation goes to
the network, and when that fails the cached offline page answers, so no page
with someone's notes, chats or settings is ever stored in the browser
(static/js/sw.js; docs/deploy.md "Installing Jarvis as an app").
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_GET

# The light palette of static/css/tokens.css (a manifest holds one colour of
# each; tests/core/test_webapp.py checks they still match): the page behind
# everything (--bg) while the app starts, and the header's surface (--surface)
# for the title bar. base.html's theme-color meta says the same.
BACKGROUND_COLOUR = "#f7f7f5"  # --bg
THEME_COLOUR = "#ffffff"  # --surface

ICONS = [
    ("icons/icon-192.png", "192x192", "any"),
    ("icons/icon-512.png", "512x512", "any"),
    ("icons/icon-maskable-512.png", "512x512", "maskable"),
]

# What the worker stores at install and answers from the cache: the files
# every page (and the offline page) loads. Static files only; nothing with a
# person's data in it.
SHELL = [
    "css/tokens.css",
    "css/app.css",
    "vendor/htmx/htmx.min.js",
    "vendor/htmx-ext-ws/ws.min.js",
    "js/app.js",
    "js/notices.js",
    "js/drawer.js",
    "js/install.js",
    "img/favicon.svg",
    "img/favicon.ico",
    *(path for path, _, _ in ICONS),
]
WORKER_SOURCE = "js/sw.js"

NO_CACHE = "no-cache"


def manifest_data() -> dict:
    """The manifest's fields. Icon URLs are looked up per call: in production
    they are content-hashed names from collectstatic's manifest."""
    return {
        "id": "/",
        "name": "Jarvis",
        "short_name": "Jarvis",
        "description": "The household's notes, documents and assistant.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": BACKGROUND_COLOUR,
        "theme_color": THEME_COLOUR,
        "icons": [
            {"src": static(path), "sizes": sizes, "type": "image/png", "purpose": purpose}
            for path, sizes, purpose in ICONS
        ],
    }


def shell_urls() -> list[str]:
    return [static(path) for path in SHELL] + [reverse("core:offline")]


def _source(path: str) -> Path:
    found = finders.find(path)
    if not found:
        raise FileNotFoundError(f"static file {path} is missing")
    return Path(found)


@lru_cache(maxsize=64)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    # Keyed on the file's mtime and size, so an edited file is read again and
    # an unchanged one (every request in production) is not.
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _file_digest(path: Path) -> str:
    stat = path.stat()
    return _digest(str(path), stat.st_mtime_ns, stat.st_size)


def cache_version(urls: list[str]) -> str:
    """A name for this deploy's cache: it changes when the worker, a shell
    file's URL (content-hashed in production) or a shell file's bytes change,
    so the browser installs the new worker and it drops the old cache."""
    hasher = hashlib.sha256()
    hasher.update(_file_digest(_source(WORKER_SOURCE)).encode())
    hasher.update(render_to_string("core/offline.html").encode())
    for url in urls:
        hasher.update(url.encode())
    for path in SHELL:
        hasher.update(_file_digest(_source(path)).encode())
    return hasher.hexdigest()[:16]


def worker_script() -> str:
    """static/js/sw.js after one generated line naming this deploy's shell."""
    urls = shell_urls()
    config = {
        "cache": f"jarvis-shell-{cache_version(urls)}",
        "shell": urls,
        "offline": reverse("core:offline"),
        # The prefix itself, not static(""): the manifest storage has no entry for "".
        "static": settings.STATIC_URL,
    }
    source = _source(WORKER_SOURCE).read_text()
    return f"self.JARVIS_SHELL = {json.dumps(config)};\n{source}"


@require_GET
def manifest(request: HttpRequest) -> HttpResponse:
    response = JsonResponse(manifest_data(), content_type="application/manifest+json")
    response["Cache-Control"] = NO_CACHE
    return response


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    # Served here rather than from /static/ so its scope may be the whole
    # site; no-cache so a deploy's new worker is found on the next visit.
    response = HttpResponse(worker_script(), content_type="text/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    response["Cache-Control"] = NO_CACHE
    return response


@require_GET
def offline(request: HttpRequest) -> HttpResponse:
    # Rendered without the request: the same bytes for everyone (no user, no
    # CSRF token, no session touched), because the worker keeps this page.
    return HttpResponse(render_to_string("core/offline.html"))
