"""Compiling a draft's .tex and exporting its Markdown to PDF.

The tools run on a temporary copy of the draft folder (apps.drafts.toolchain
holds the sandboxing); the PDF is kept beside the drafts, outside every draft
folder, so the person can view or download it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from apps.core.errors import Refused
from apps.drafts import sandbox, toolchain
from apps.drafts.models import Draft


@dataclass(frozen=True)
class Build:
    ok: bool
    seconds: float
    error: str
    log: str
    kind: str
    filename: str


def tools_available() -> dict[str, bool]:
    return toolchain.available()


def build_check(*, draft: Draft, filename: str, kind: str) -> Path:
    """The file to build, or Refused saying why it cannot be built. Cheap:
    asked before the build waits its turn (apps.drafts.build_queue)."""
    if kind not in ("compile", "export"):
        raise Refused("A draft is compiled (.tex) or exported (.md).")
    path = sandbox.resolve(draft.owner_id, draft.key, filename)
    suffix = Path(filename).suffix.lower()
    if kind == "compile" and suffix != ".tex":
        raise Refused("Only .tex files compile; export Markdown instead.")
    if kind == "export" and suffix != ".md":
        raise Refused("Only Markdown (.md) files export to PDF.")
    if not path.is_file():
        raise Refused(f"There is no file “{filename}” in this draft.")
    available = toolchain.available()
    if not available["latex" if kind == "compile" else "pandoc"]:
        raise Refused("This server has no LaTeX/pandoc installed; ask an admin.")
    return path


def build(*, draft: Draft, filename: str, kind: str) -> Build:
    """Check and build now (the queue's work for one ticket)."""
    path = build_check(draft=draft, filename=filename, kind=kind)
    timeout = settings.DRAFTS_COMPILE_TIMEOUT_SECONDS
    if kind == "compile":
        result = toolchain.compile_tex(path.parent, filename, timeout=timeout)
    else:
        result = toolchain.export_markdown_pdf(
            path.parent, filename, margin=settings.DRAFTS_PDF_MARGIN, timeout=timeout
        )
    if result.ok and result.pdf:
        sandbox.write_build(draft.owner_id, draft.key, filename, kind, result.pdf)
    return Build(
        ok=bool(result.ok and result.pdf),
        seconds=round(result.seconds, 1),
        error=result.error,
        log=result.log,
        kind=kind,
        filename=filename,
    )


def built_pdf(*, draft: Draft, filename: str, kind: str) -> Path:
    path = sandbox.build_path(draft.owner_id, draft.key, filename, kind)
    if not path.is_file():
        raise Refused("Nothing has been built for that file yet.")
    return path
