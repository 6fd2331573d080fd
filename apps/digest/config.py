"""A person's digest configuration as text: parsing and checking what the
settings page and `manage.py digest configure` accept.

Both take the same spellings, `NAME:LIMIT` (the limit is optional), so a value
written on one can be pasted into the other. Errors are ValidationError with
one message per bad entry, which the form shows under its field and the
command prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_ENTRIES = 20
MAX_CONTEXT_CHARS = 4000

# The arXiv API's category names: archive[.subject], e.g. cs.LG, hep-th, q-bio.GN.
ARXIV_CATEGORY = re.compile(r"[a-z]+(?:-[a-z]+)?(?:\.[A-Za-z]+(?:-[A-Za-z]+)?)?")
# bioRxiv's are lower-case words ("cell biology"); the API takes them with underscores.
BIORXIV_CATEGORY = re.compile(r"[a-z]+(?:[ _-][a-z]+)*")
KEYWORD_MAX = 80
FOLDER_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,59}")
FOLDER_MAX_DEPTH = 3

Limited = list[tuple[str, int]]


def split_entries(value: str | Iterable[str]) -> list[str]:
    """Entries from a textarea (one a line, or comma-separated) or a list of words."""
    if isinstance(value, str):
        value = value.replace("\r", "\n").replace(",", "\n").split("\n")
    return [" ".join(part.split()) for part in value if part and part.strip()]


def _limit(entry: str, text: str) -> int:
    if not text.isdigit():
        raise ValidationError(f"“{entry}”: the limit after ':' must be a whole number")
    number = int(text)
    if not 1 <= number <= MAX_LIMIT:
        raise ValidationError(f"“{entry}”: the limit must be between 1 and {MAX_LIMIT}")
    return number


def _parse(value: str | Iterable[str], check) -> Limited:
    entries = split_entries(value)
    if len(entries) > MAX_ENTRIES:
        raise ValidationError(f"at most {MAX_ENTRIES} entries")
    result: Limited = []
    errors: list[ValidationError] = []
    seen: set[str] = set()
    for entry in entries:
        name, sep, limit_text = entry.rpartition(":")
        if not sep:
            name, limit_text = entry, ""
        name = name.strip()
        try:
            limit = _limit(entry, limit_text.strip()) if sep else DEFAULT_LIMIT
            name = check(name, entry)
        except ValidationError as exc:
            errors.append(exc)
            continue
        if name.casefold() in seen:
            errors.append(ValidationError(f"“{name}” is listed twice"))
            continue
        seen.add(name.casefold())
        result.append((name, limit))
    if errors:
        raise ValidationError(errors)
    return result


def _arxiv(name: str, entry: str) -> str:
    if not ARXIV_CATEGORY.fullmatch(name):
        raise ValidationError(f"“{entry}” is not an arXiv category (e.g. cs.LG:50, hep-th:20)")
    return name


def _biorxiv(name: str, entry: str) -> str:
    name = name.lower().replace("_", " ")
    if not BIORXIV_CATEGORY.fullmatch(name):
        raise ValidationError(
            f"“{entry}” is not a bioRxiv category (e.g. bioinformatics:100, cell biology:30)"
        )
    return name


def _keyword(name: str, entry: str) -> str:
    if not name or len(name) > KEYWORD_MAX or any(not ch.isprintable() for ch in name):
        raise ValidationError(f"“{entry}”: a keyword is 1 to {KEYWORD_MAX} printable characters")
    if len(name) < 3:
        # "ml" or "rna" alone would match half of bioRxiv; the limit would hide it.
        raise ValidationError(f"“{entry}”: a keyword needs at least 3 characters")
    return name


def parse_arxiv(value: str | Iterable[str]) -> Limited:
    return _parse(value, _arxiv)


def parse_biorxiv(value: str | Iterable[str]) -> Limited:
    return _parse(value, _biorxiv)


def parse_keywords(value: str | Iterable[str]) -> Limited:
    return _parse(value, _keyword)


def as_text(entries: Iterable[Iterable]) -> str:
    """The stored [[name, limit], …] back as the lines the form shows."""
    return "\n".join(f"{name}:{limit}" for name, limit in entries)


def clean_context(text: str) -> str:
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    if len(text) > MAX_CONTEXT_CHARS:
        raise ValidationError(f"the research context is limited to {MAX_CONTEXT_CHARS} characters")
    return text


# --- Where digest files go


def digests_root() -> Path:
    return Path(settings.DATA_DIR) / "digests"


def user_root(user_id: int) -> Path:
    return digests_root() / str(int(user_id))


def clean_folder(value: str) -> str:
    """A subfolder name under the person's digest folder: plain segments
    (letters, digits, space, `_ . -`, not starting with a dot or dash), at
    most three deep. Anything that could climb out (`..`, an absolute path, a
    backslash) is refused rather than repaired."""
    value = (value or "").strip().strip("/")
    if not value:
        return ""
    if "\\" in value or "\x00" in value:
        raise ValidationError("use '/' between folder names, nothing else")
    segments = value.split("/")
    if len(segments) > FOLDER_MAX_DEPTH:
        raise ValidationError(f"at most {FOLDER_MAX_DEPTH} folders deep")
    for segment in segments:
        if segment in (".", "..") or not FOLDER_SEGMENT.fullmatch(segment):
            raise ValidationError(
                f"“{segment}” is not allowed as a folder name: letters, digits, spaces, "
                "'_', '.' and '-', not starting with a dot or dash"
            )
    return "/".join(segments)


def folder_path(user_id: int, folder: str) -> Path:
    """The folder a person's digest files are written to, created if missing.
    Checked again here, resolved, because a symlink could have been planted
    in the data dir since the name was validated."""
    root = user_root(user_id)
    root.mkdir(parents=True, exist_ok=True)
    resolved_root = root.resolve()
    target = (root / clean_folder(folder)).resolve()
    if not target.is_relative_to(resolved_root):
        raise ValidationError("the digest folder leads outside your digest area")
    target.mkdir(parents=True, exist_ok=True)
    return target
