"""The installable app: the manifest a phone reads to add Jarvis to its home
screen, the service worker's script and headers, and the offline page it
keeps. The worker's behaviour in a browser is tests/e2e/test_install.py."""

from __future__ import annotations

import io
import json
import re
import shutil

import pytest
from django.test import override_settings
from PIL import Image

from apps.core import webapp
from tests.support.processes import ROOT

pytestmark = pytest.mark.django_db


def light_token(name: str) -> str:
    css = (ROOT / "static/css/tokens.css").read_text()
    match = re.search(rf"^\s*{name}:\s*light-dark\((#[0-9a-f]+),", css, re.M)
    assert match, name
    return match.group(1)


def worker_config(body: str) -> dict:
    first, _ = body.split("\n", 1)
    assert first.startswith("self.JARVIS_SHELL = ")
    return json.loads(first.removeprefix("self.JARVIS_SHELL = ").rstrip(";"))


def test_the_manifest_says_what_an_installed_jarvis_is(client):
    response = client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert manifest["name"] == "Jarvis"
    assert manifest["short_name"] == "Jarvis"
    assert manifest["start_url"] == "/"
    assert manifest["scope"] == "/"
    assert manifest["display"] == "standalone"
    # The light palette: the page's background while it starts, the header's
    # surface for the title bar.
    assert manifest["background_color"] == light_token("--bg")
    assert manifest["theme_color"] == light_token("--surface")


def test_every_icon_is_a_png_of_the_size_it_claims(client):
    icons = json.loads(client.get("/manifest.webmanifest").content)["icons"]
    kinds = set()
    for icon in icons:
        response = client.get(icon["src"])
        assert response.status_code == 200, icon["src"]
        data = b"".join(response.streaming_content) if response.streaming else response.content
        image = Image.open(io.BytesIO(data))
        assert image.format == "PNG"
        assert f"{image.width}x{image.height}" == icon["sizes"]
        assert icon["type"] == "image/png"
        kinds.add((icon["sizes"], icon["purpose"]))
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= kinds


def test_the_maskable_icon_fills_its_square(client):
    # A launcher crops it to a circle or a squircle: a transparent corner would
    # show as a hole.
    image = Image.open(ROOT / "static/icons/icon-maskable-512.png").convert("RGBA")
    for corner in [(0, 0), (511, 0), (0, 511), (511, 511)]:
        assert image.getpixel(corner)[3] == 255


def test_every_page_links_the_manifest_and_registers_the_worker(client, owner):
    manifest = json.loads(client.get("/manifest.webmanifest").content)
    for path in ["/accounts/login/"]:
        html = client.get(path).content.decode()
        assert '<link rel="manifest" href="/manifest.webmanifest">' in html
        assert 'src="/static/js/install.js" data-worker="/sw.js"' in html
    client.force_login(owner)
    html = client.get("/chat/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in html
    assert f'<meta name="theme-color" content="{manifest["theme_color"]}"' in html
    assert f'<meta name="theme-color" content="{light_token("--surface")}"' in html


def test_a_pinned_dark_theme_colours_the_title_bar_dark(client, owner):
    owner.theme = "dark"
    owner.save()
    client.force_login(owner)
    html = client.get("/chat/").content.decode()
    metas = re.findall(r'<meta name="theme-color"[^>]*>', html)
    assert metas == ['<meta name="theme-color" content="#1b1e23">']


def test_the_worker_is_served_for_the_whole_site_and_never_from_a_cache(client):
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Service-Worker-Allowed"] == "/"
    assert response["Cache-Control"] == "no-cache"
    # The site's policy holds for the worker too (it runs as its own document).
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_the_worker_keeps_only_static_files_and_the_offline_page(client):
    config = worker_config(client.get("/sw.js").content.decode())
    assert config["offline"] == "/offline/"
    assert config["cache"].startswith("jarvis-shell-")
    shell = config["shell"]
    assert "/offline/" in shell
    assert [url for url in shell if url != "/offline/" and not url.startswith("/static/")] == []
    for needed in ["/static/css/tokens.css", "/static/css/app.css", "/static/icons/icon-192.png"]:
        assert needed in shell
    for url in shell:
        assert client.get(url).status_code == 200, url


def test_a_changed_shell_file_names_a_new_cache(client, tmp_path):
    # A deploy that changes app.css must replace what browsers hold: the
    # worker's bytes change with the cache name, so the browser installs it
    # and it drops the old cache.
    for path in [*webapp.SHELL, webapp.WORKER_SOURCE]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "static" / path, tmp_path / path)
    before = worker_config(client.get("/sw.js").content.decode())["cache"]
    with override_settings(STATICFILES_DIRS=[tmp_path]):
        same = worker_config(client.get("/sw.js").content.decode())["cache"]
        css = tmp_path / "css/app.css"
        css.write_text(css.read_text() + "\n/* a new rule */\n")
        changed = worker_config(client.get("/sw.js").content.decode())["cache"]
    assert same == before
    assert changed != before


def test_the_offline_page_is_the_same_for_everyone_and_holds_nobody(client, owner):
    anonymous = client.get("/offline/")
    client.force_login(owner)
    signed_in = client.get("/offline/")
    assert anonymous.status_code == signed_in.status_code == 200
    assert anonymous.content == signed_in.content
    html = signed_in.content.decode()
    assert "can't be reached" in html
    assert "Retry" in html
    assert "Olivia" not in html
    assert "csrf" not in html.lower()
    assert not signed_in.cookies
    # Styled like every page: the shell's stylesheets, nothing else to fetch.
    assert "/static/css/tokens.css" in html and "/static/css/app.css" in html


def test_in_production_the_worker_and_manifest_name_the_hashed_files(client, tmp_path, settings):
    # collectstatic's manifest storage gives every file a content-hashed name;
    # the worker must keep exactly the names pages link, or a page would
    # fetch past it.
    paths = {path: path.replace(".", ".0123abcd.", 1) for path in webapp.SHELL}
    (tmp_path / "staticfiles.json").write_text(
        json.dumps({"paths": paths, "version": "1.1", "hash": "0"})
    )
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "apps.core.storage.StaticFilesStorage"},
    }
    config = worker_config(client.get("/sw.js").content.decode())
    assert config["static"] == "/static/"
    assert "/static/css/app.0123abcd.css" in config["shell"]
    assert "/static/css/app.css" not in config["shell"]
    icons = json.loads(client.get("/manifest.webmanifest").content)["icons"]
    assert {icon["src"] for icon in icons} == {
        "/static/icons/icon-192.0123abcd.png",
        "/static/icons/icon-512.0123abcd.png",
        "/static/icons/icon-maskable-512.0123abcd.png",
    }
