"""The code's shape, checked: imports at module top unless a comment says why,
no module past the size where it should become a package, and the floors
contract (import-linter) holding."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "apps"
MAX_LINES = 600


def _modules():
    for path in sorted(APPS.rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def test_every_function_level_import_says_why():
    unexplained = []
    for path in _modules():
        lines = path.read_text().splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                # The comment sits on the import line or on the lines just above
                # it (a try: between them is fine).
                above = lines[max(0, node.lineno - 4) : node.lineno]
                if not any("#" in line for line in above):
                    unexplained.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert unexplained == []


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
