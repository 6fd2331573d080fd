#!/usr/bin/env python
"""Write the per-app module tables of docs/architecture.md from each module's
docstring (its first paragraph). Run after adding or renaming a module;
tests/core/test_architecture.py fails while a module is missing from the doc."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
START = "<!-- module tables: generated"
END = "<!-- end module tables -->"
APPS = ["core", "instance", "accounts", "llm", "library", "projects", "chats",
        "agents", "drafts", "digest", "mcp", "websearch", "toolbox", "voice", "demo"]  # fmt: skip
CONVENTIONAL = {"apps.py", "urls.py", "admin.py", "forms.py", "routing.py", "__init__.py"}


def documented_modules(app: str) -> list[Path]:
    root = ROOT / "apps" / app
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if "migrations" in parts or (path.name in CONVENTIONAL and len(parts) == 1):
            continue
        if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text())):
            continue
        found.append(path)
    return found


def summary(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return first if len(first) <= 200 else first[:197].rsplit(" ", 1)[0] + "…"


def tables() -> str:
    out = []
    for app in APPS:
        if not (ROOT / "apps" / app).is_dir():
            continue
        out += [f"\n### `{app}`\n", "| module | what it holds |", "|---|---|"]
        for path in documented_modules(app):
            rel = path.relative_to(ROOT / "apps" / app).as_posix()
            text = summary(path).replace("|", "\\|") or "—"
            out.append(f"| `{rel}` | {text} |")
    return "\n".join(out) + "\n"


def main() -> None:
    text = DOC.read_text()
    pattern = re.compile(re.escape(START) + r".*?-->\n.*?" + re.escape(END), re.S)
    head = text[text.index(START) : text.index("-->", text.index(START)) + 3]
    DOC.write_text(pattern.sub(lambda m: head + "\n" + tables() + END, text))


if __name__ == "__main__":
    main()
