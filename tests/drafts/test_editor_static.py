"""The editor's static side.

Its frames never run scripts: the preview frame is
`sandbox="allow-same-origin"` (it must be readable for scroll-sync) and the
compiled-PDF frame `sandbox=""`. With allow-scripts beside allow-same-origin a
frame could lift its own sandbox and act in the app's origin, so no script may
ever put that on a frame, however indirectly.

Its script is ES modules (static/js/drafts/), loaded from one entry with no
build step: every import must name a module that exports what is imported
(or the editor does not start), the server must send them as JavaScript (a
browser refuses a module of any other type), and collectstatic must give
every one a hashed name the others import it by.
"""

from __future__ import annotations

import json
import posixpath
import re

from django.core.management import call_command

from tests.support.processes import ROOT

DRAFTS_JS = ROOT / "static/js/drafts"
ENTRY = "main.js"
# The one module outside the editor's folder it imports: the shared requests.
SHARED = {"../http.js": ROOT / "static/js/http.js"}
IMPORT = re.compile(r"""^import\s*\{([^}]*)\}\s*from\s*"([^"]+)";""", re.M)
EXPORT = re.compile(r"^export\s+(?:const|let|var|function|class)\s+(\w+)", re.M)

SET_SANDBOX = re.compile(
    r"""setAttribute(?:NS)?\(\s*(?:[^,()]+,\s*)?(["'`])sandbox\1\s*,\s*([^)]*)\)"""
)
LITERAL = re.compile(r"""^(["'])[^"'`\\]*\1$""")


def drafts_scripts():
    scripts = sorted(DRAFTS_JS.glob("*.js"))
    assert ENTRY in {script.name for script in scripts}, "the drafts editor's modules are missing"
    return scripts


def test_every_sandbox_value_a_drafts_script_sets_leaves_out_allow_scripts():
    for script in drafts_scripts():
        source = script.read_text()
        assert "allow-scripts" not in source, script.name
        assert not re.search(r"\.sandbox\b|\[\s*[\"'`]sandbox[\"'`]\s*\]", source), (
            f"{script.name} sets the sandbox through the property"
        )
        settings = SET_SANDBOX.findall(source)
        for _quote, value in settings:
            value = value.strip()
            assert LITERAL.match(value), f"{script.name}: sandbox set to a computed value {value}"
            assert "allow-scripts" not in value and "allow-top-navigation" not in value
        # Every mention of the attribute's name is one of the checked assignments:
        # no removeAttribute("sandbox"), no name built elsewhere and passed in.
        mentions = re.findall(r"""(["'`])sandbox\1""", source)
        assert len(mentions) == len(settings), f"{script.name} handles the sandbox attribute"
        assert "<iframe" not in source.lower(), f"{script.name} writes a frame as HTML"
        assert 'createElement("iframe")' not in source and "createElement('iframe')" not in source


def test_the_editor_template_sandboxes_its_one_frame_and_draws_pdfs_with_pdfjs():
    template = (ROOT / "templates/drafts/editor.html").read_text()
    frames = re.findall(r"<iframe\b[^>]*>", template)
    assert len(frames) == 1
    assert re.search(r'\ssandbox="([^"]*)"', frames[0]).group(1) == "allow-same-origin"
    # A compiled PDF is not framed at all: PDF.js reads it into a canvas (it runs
    # nothing in the file), so Chromium's viewer, which a sandbox stops, is not used.
    viewer = re.search(r"<div\b[^>]*data-pdf-frame[^>]*>", template).group(0)
    assert "data-viewer=\"{% static 'js/pdf-viewer.js' %}\"" in viewer
    assert "data-pdfjs=\"{% static 'vendor/pdfjs/pdf.min.mjs' %}\"" in viewer


def test_the_editor_template_loads_one_entry_module_and_no_other_script_of_its_own():
    template = (ROOT / "templates/drafts/editor.html").read_text()
    own = re.findall(r"<script\b[^>]*\{% static 'js/[^']*' %\}[^>]*>", template)
    assert own == [
        '<script type="module" src="{% static \'js/chat.js\' %}">',
        f'<script type="module" src="{{% static \'js/drafts/{ENTRY}\' %}}">',
    ]
    assert "<script>" not in template  # nothing inline (CSP: script-src 'self')


def test_every_import_names_a_module_that_exports_it_and_every_module_is_imported():
    exports = {path.name: set(EXPORT.findall(path.read_text())) for path in drafts_scripts()}
    shared = {name: set(EXPORT.findall(path.read_text())) for name, path in SHARED.items()}
    imports = {name: [] for name in exports}
    for name in exports:
        for names, specifier in IMPORT.findall((DRAFTS_JS / name).read_text()):
            target = posixpath.normpath(specifier)
            assert (specifier.startswith("./") and target in exports) or specifier in shared, (
                f"{name}: {specifier}"
            )
            for wanted in (part.split(" as ")[0].strip() for part in names.split(",")):
                assert wanted in {**exports, **shared}[target], (
                    f"{name} imports {wanted} from {target}"
                )
            if target in exports:
                imports[name].append(target)
    # No module left out of the editor, and no cycle: collectstatic could not
    # settle a cycle's hashed names.
    reached = set()

    def walk(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, "an import cycle: " + " -> ".join((*path, name))
        reached.add(name)
        for target in imports[name]:
            walk(target, (*path, name))

    walk(ENTRY, ())
    assert reached == set(exports)


def test_the_modules_are_served_as_javascript(client):
    for path in drafts_scripts():
        response = client.get(f"/static/js/drafts/{path.name}")
        assert response.status_code == 200, path.name
        media_type = response["Content-Type"].split(";")[0].strip()
        assert media_type in {"text/javascript", "application/javascript"}, path.name


def test_collectstatic_gives_every_module_a_hashed_name_and_imports_by_it(tmp_path, settings):
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "apps.core.storage.StaticFilesStorage"},
    }
    call_command("collectstatic", interactive=False, verbosity=0)
    paths = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    hashed = set(paths.values())
    # Walk the imports as a browser does, from the hashed entry the page names.
    fetched = set()
    todo = [paths[f"js/drafts/{ENTRY}"]]
    while todo:
        name = todo.pop()
        fetched.add(name)
        for _names, specifier in IMPORT.findall((tmp_path / name).read_text()):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), specifier))
            assert target in hashed, f"{name} imports {specifier}: not a hashed name"
            if target not in fetched:
                todo.append(target)
    assert fetched == {paths[f"js/drafts/{path.name}"] for path in drafts_scripts()} | {
        paths["js/http.js"]
    }
