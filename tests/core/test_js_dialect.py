"""Our own JavaScript is one dialect: ES modules written with const and let,
behaviour hooked on data-* attributes that say what they do (tests may select
data-testid, the scripts never do), and imports collectstatic can follow to
the hashed names a deployed page loads."""

from __future__ import annotations

import json
import posixpath
import re

from django.core.management import call_command

from apps.core.storage import MODULE_IMPORT
from tests.support.processes import ROOT

JS = ROOT / "static/js"
# The service worker is the one classic script: a worker started from /sw.js
# with its configuration line put before it (apps/core/webapp.py).
CLASSIC = {"sw.js"}
VAR = re.compile(r"(?<![\w$.])var\s+[\w$\[{]")
SELECTS_TESTID = re.compile(
    r"""\[\s*data-testid|dataset\.testid|getAttribute\(\s*["']data-testid"""
)
SCRIPT_TAG = re.compile(r"<script\b[^>]*\{% static 'js/([^']+)' %\}[^>]*>")
IMPORT_LINE = re.compile(r"^import\b.*$", re.M)
IMPORT = re.compile(MODULE_IMPORT[0])


def own_scripts():
    scripts = sorted(JS.rglob("*.js"))
    assert len(scripts) > 20, "static/js is missing"
    return scripts


def code_lines(path):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.lstrip().startswith("//"):
            yield number, line


def test_no_script_of_ours_declares_with_var():
    found = [
        f"{path.relative_to(JS)}:{number}: {line.strip()}"
        for path in own_scripts()
        for number, line in code_lines(path)
        if VAR.search(line)
    ]
    assert found == []


def test_no_script_of_ours_selects_a_test_id():
    found = [
        f"{path.relative_to(JS)}:{number}: {line.strip()}"
        for path in own_scripts()
        for number, line in code_lines(path)
        if SELECTS_TESTID.search(line)
    ]
    assert found == []


def test_the_dialect_checks_can_fail():
    assert VAR.search("  var replies = [];") and VAR.search("for (var i = 0;;)")
    assert not VAR.search("const variable = 1;") and not VAR.search("x.var = 2;")
    assert SELECTS_TESTID.search('document.querySelectorAll("[data-testid=reply]")')
    assert not SELECTS_TESTID.search('row.setAttribute("data-testid", "upload-row")')


def test_every_page_loads_our_scripts_as_modules():
    tags = [
        (template.relative_to(ROOT), match.group(0), match.group(1))
        for template in sorted((ROOT / "templates").rglob("*.html"))
        for match in SCRIPT_TAG.finditer(template.read_text())
    ]
    names = {name for _, _, name in tags}
    assert {"app.js", "chat.js", "upload.js", "drafts/main.js"} <= names
    classic = [(str(where), tag) for where, tag, _ in tags if 'type="module"' not in tag]
    assert classic == []
    assert not names & CLASSIC


def test_every_import_has_the_one_shape_collectstatic_rewrites():
    odd = [
        f"{path.relative_to(JS)}: {line}"
        for path in own_scripts()
        for line in IMPORT_LINE.findall(path.read_text())
        if not IMPORT.match(line)
    ]
    assert odd == []


def test_a_deployed_page_imports_every_module_by_its_hashed_name(tmp_path, settings):
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "apps.core.storage.StaticFilesStorage"},
    }
    call_command("collectstatic", interactive=False, verbosity=0)
    paths = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    hashed = set(paths.values())
    # Walk the imports as a browser does, from the hashed names the pages name.
    todo = [paths[f"js/{name}"] for name in ("chat.js", "upload.js", "drafts/main.js")]
    fetched = set()
    while todo:
        name = todo.pop()
        fetched.add(name)
        for match in IMPORT.finditer((tmp_path / name).read_text()):
            specifier = match.group("url")
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), specifier))
            assert target in hashed, f"{name} imports {specifier}: not a hashed name"
            if target not in fetched:
                todo.append(target)
    assert paths["js/http.js"] in fetched  # the shared requests, from the chat and the editor
