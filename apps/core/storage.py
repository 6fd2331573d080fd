"""Where collectstatic puts the static files: whitenoise's compressed storage
with content-hashed names, taught to follow the ES module imports of our own
scripts (static/js/)."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage

# `import { a, b } from "./file.js";` (or "../file.js") on a line of its own:
# the one shape our modules use (tests/drafts/test_editor_static.py and
# tests/core/test_js_dialect.py hold them to it).
MODULE_IMPORT = (
    r"""(?m)^(?P<matched>import(?P<names>\s*\{[^}]*\}\s*)from\s*"(?P<url>\.\.?/[^"]+)";)""",
    """import%(names)sfrom "%(url)s";""",
)


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    # A page names its entry module by its hashed name; left alone,
    # its imports would fetch unhashed files, which whitenoise lets browsers
    # cache for a minute, so after an upgrade a browser could pair a new
    # main.js with an old state.js and the editor would not start. Here every
    # import is rewritten to the hashed name too. Not Django's own
    # support_js_module_import_aggregation: its patterns start at the word
    # "import" or "export" anywhere, a comment included, and then rewrite an
    # import that is already rewritten (collectstatic fails).
    # Hashes only settle when the imports form no cycle.
    patterns = (
        *CompressedManifestStaticFilesStorage.patterns,
        ("js/*.js", (MODULE_IMPORT,)),  # fnmatch: js/drafts/*.js too
    )
    # A file's hash settles one pass after its imports' hashes do, and files
    # come in filesystem order: the editor's import chain is 8 deep, more
    # than Django's default of 5 passes allows for in the worst order.
    max_post_process_passes = 16
