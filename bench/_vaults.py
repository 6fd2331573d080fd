"""Generated vaults of realistic notes for benchmarks (text from the Python
standard library's docstrings, arranged as Markdown notes with headings)."""

from __future__ import annotations

import random
from pathlib import Path

from _support import corpus_paragraphs


def write_vault(
    folder: Path, notes: int, *, seed: int = 5, sections: tuple[int, int] = (2, 5)
) -> int:
    """Write `notes` Markdown notes under `folder` (10 subfolders); returns the count."""
    rng = random.Random(seed)
    paragraphs = corpus_paragraphs(max(300, notes))
    for n in range(notes):
        parts = [f"# Note {n}: {paragraphs[n % len(paragraphs)][:60]}", ""]
        for s in range(rng.randint(*sections)):
            parts += [f"## Section {s}", ""]
            for _ in range(rng.randint(1, 3)):
                parts += [rng.choice(paragraphs), ""]
        path = folder / f"area-{n % 10}" / f"note-{n:05}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")
    return notes
