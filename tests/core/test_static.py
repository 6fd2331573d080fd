"""The design system: every colour and size comes from tokens.css; vendored
libraries are exactly the pinned files."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from scripts import vendor
from tests.support.processes import ROOT

RAW_VALUE = re.compile(
    r"#[0-9a-fA-F]{3,8}\b|\brgba?\(|\bhsla?\(|(?<![\w-])\d*\.?\d+(px|rem|em|ms|s)\b"
)


def declarations(css: str):
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    for line_no, line in enumerate(css.splitlines(), 1):
        if line.lstrip().startswith("@media"):
            continue  # media queries cannot read variables
        yield line_no, line


def test_app_css_uses_only_tokens():
    css = (ROOT / "static/css/app.css").read_text()
    offending = [(n, line.strip()) for n, line in declarations(css) if RAW_VALUE.search(line)]
    assert offending == []


def test_every_colour_has_a_light_and_a_dark_value():
    # The palette is written once: a colour token written as a bare colour
    # would stay light in the dark theme (or the reverse).
    css = (ROOT / "static/css/tokens.css").read_text()
    tokens = re.findall(r"^\s*(--[a-z0-9-]+):\s*([^;]+);", css, re.M)
    colours = [
        (name, value) for name, value in tokens if re.search(r"#[0-9a-f]{3,8}\b|rgb\(", value)
    ]
    assert len(colours) > 20
    one_sided = [name for name, value in colours if "light-dark(" not in value]
    assert one_sided == []


def test_vendored_files_match_the_lock():
    assert vendor.verify() == []


def test_a_tampered_vendored_file_is_caught(tmp_path, monkeypatch):
    copy = tmp_path / "vendor"
    shutil.copytree(vendor.VENDOR, copy)
    monkeypatch.setattr(vendor, "VENDOR", copy)
    monkeypatch.setattr(vendor, "LOCK", copy / "vendor.lock.json")
    target = copy / "htmx/htmx.min.js"
    target.write_bytes(target.read_bytes() + b"\nalert(1)")
    (copy / "htmx/extra.js").write_text("unpinned")
    problems = vendor.verify()
    assert any("htmx.min.js does not match" in p for p in problems)
    assert any("extra.js is not pinned" in p for p in problems)


@pytest.mark.django_db
def test_pages_load_htmx_and_its_websocket_extension_from_our_own_static(client, owner):
    client.force_login(owner)
    html = client.get("/settings/").content.decode()
    assert "/static/vendor/htmx/htmx.min.js" in html
    assert "/static/vendor/htmx-ext-ws/ws.min.js" in html
    assert "https://" not in re.sub(r'href="https://[^"]*"', "", html.split("<body")[0])


def test_a_vendored_folder_is_copied_file_by_file():
    names = [
        "package/LICENSE",
        "package/standard_fonts/FoxitSymbol.pfb",
        "package/standard_fonts/LICENSE_FOXIT",
        "package/standard_fontsX/other.pfb",
    ]
    files = {"standard_fonts/": "pdfjs/standard_fonts/", "LICENSE": "pdfjs/LICENSE"}
    assert vendor.expand_folders(files, names) == {
        "standard_fonts/FoxitSymbol.pfb": "pdfjs/standard_fonts/FoxitSymbol.pfb",
        "standard_fonts/LICENSE_FOXIT": "pdfjs/standard_fonts/LICENSE_FOXIT",
        "LICENSE": "pdfjs/LICENSE",
    }
    with pytest.raises(SystemExit, match="cmaps/ is not a folder"):
        vendor.expand_folders({"cmaps/": "pdfjs/cmaps/"}, names)


def test_collectstatic_with_the_production_storage_takes_every_static_file(tmp_path):
    # Production runs collectstatic with the manifest storage, which rewrites
    # references inside *.css and *.js and fails on one it cannot find (a
    # vendored *.js naming a source map we do not ship would stop a deploy).
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JARVIS_", "DJANGO_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="jarvis_site.settings",
        JARVIS_DATA_DIR=str(tmp_path / "data"),
        JARVIS_STATIC_ROOT=str(tmp_path / "static"),
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "static/staticfiles.json").read_text())["paths"]
    assert "vendor/pdfjs/pdf.worker.min.mjs" in manifest
    assert "vendor/xterm/xterm.mjs" in manifest


def test_favicon_ico_is_served(client):
    response = client.get("/favicon.ico", follow=True)
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO header
