"""The editor's frames never run scripts: the preview frame is
`sandbox="allow-same-origin"` (it must be readable for scroll-sync) and the
compiled-PDF frame `sandbox=""`. With allow-scripts beside allow-same-origin a
frame could lift its own sandbox and act in the app's origin, so no script may
ever put that on a frame, however indirectly."""

from __future__ import annotations

import re

from tests.support.processes import ROOT

SET_SANDBOX = re.compile(
    r"""setAttribute(?:NS)?\(\s*(?:[^,()]+,\s*)?(["'`])sandbox\1\s*,\s*([^)]*)\)"""
)
LITERAL = re.compile(r"""^(["'])[^"'`\\]*\1$""")


def drafts_scripts():
    scripts = sorted((ROOT / "static/js").glob("drafts-*.js"))
    assert scripts, "the drafts editor's scripts are missing"
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


def test_the_editor_template_sandboxes_both_frames():
    template = (ROOT / "templates/drafts/editor.html").read_text()
    frames = re.findall(r"<iframe\b[^>]*>", template)
    assert len(frames) == 2
    values = sorted(re.search(r'\ssandbox="([^"]*)"', frame).group(1) for frame in frames)
    assert values == ["", "allow-same-origin"]
