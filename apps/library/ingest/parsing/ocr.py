"""Text recognised in an image, by Debian's `tesseract` program (local, no model
download: the language data comes from the tesseract-ocr-* packages).

The image goes to tesseract through a pipe (PNG on stdin, text on stdout):
no temporary file, so it works in a parse child with nowhere to
write. One OpenMP thread per page: on two cores, several threads fighting over
them were two to five times slower than one (bench/ocr_engines.py). Each page
has its own timeout, and the environment passed on is only what tesseract needs.
Chosen over PyMuPDF's built-in Tesseract by measurement (docs/decisions.md).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

from PIL import Image

from .types import UnreadableDocument

PAGE_TIMEOUT_SECONDS = 60
# A page is read at about 300 dpi: an A4 page is 8.7 megapixels. Larger images
# (a 48-megapixel phone photo) are scaled down first: reading time grows with
# the pixels and small print is still ~30 px high at this size.
MAX_OCR_PIXELS = 12_000_000
# Tesseract's confidence (0-100) below which a recognised paragraph is noise:
# specks, rules and photo texture come out as "aw", "ii |" or "[prietrareen"
# at 0-45, while printed words score 85-97 even on a tilted, speckled scan.
# The paragraph's mean over its letters is compared, so one doubtful word in a
# good paragraph keeps its place.
CONFIDENCE_FLOOR = 50
LANGUAGE_CODE = re.compile(r"^[a-z]{3}(?:_[a-z]+)?$")
TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
)

_HYPHEN_BREAK = re.compile(r"([^\W\d_])-\n([a-zäöüß])")
_SPACES = re.compile(r"[ \t]+")


class OcrUnavailable(UnreadableDocument):
    """Tesseract or a language's data is missing on this server."""


@cache
def tesseract_program() -> str | None:
    return shutil.which("tesseract") or (
        "/usr/bin/tesseract" if Path("/usr/bin/tesseract").exists() else None
    )


def tessdata_dir() -> Path | None:
    """Where the language files are: TESSDATA_PREFIX, else Debian's places."""
    configured = os.environ.get("TESSDATA_PREFIX")
    candidates = [configured] if configured else []
    for folder in (*candidates, *TESSDATA_DIRS):
        path = Path(folder)
        if path.is_dir() and any(path.glob("*.traineddata")):
            return path
    return None


def installed_languages() -> list[str]:
    folder = tessdata_dir()
    if folder is None:
        return []
    return sorted(p.stem for p in folder.glob("*.traineddata") if p.stem != "osd")


def split_languages(languages: str) -> list[str]:
    """ "eng+deu" → ["eng", "deu"]; codes are checked for shape, not existence."""
    codes = [code.strip() for code in languages.replace(",", "+").split("+") if code.strip()]
    for code in codes:
        if not LANGUAGE_CODE.match(code):
            raise ValueError(f"{code!r} is not a Tesseract language code (like eng, deu, fra)")
    return codes


def check_languages(languages: str) -> str:
    """The languages in tesseract's form, or OcrUnavailable naming what is missing."""
    codes = split_languages(languages)
    if not codes:
        raise OcrUnavailable("no OCR language is set")
    if tesseract_program() is None:
        raise OcrUnavailable("OCR is not available: the tesseract program is not installed")
    missing = [code for code in codes if code not in installed_languages()]
    if missing:
        raise OcrUnavailable(
            f"OCR language data not installed: {', '.join(missing)} "
            f"(install tesseract-ocr-{missing[0]})"
        )
    return "+".join(codes)


def prepare(image: Image.Image) -> Image.Image:
    """Grey, and no larger than MAX_OCR_PIXELS."""
    if image.mode != "L":
        image = image.convert("L")
    pixels = image.width * image.height
    if pixels > MAX_OCR_PIXELS:
        scale = (MAX_OCR_PIXELS / pixels) ** 0.5
        image = image.resize(
            (max(1, int(image.width * scale)), max(1, int(image.height * scale))),
            Image.Resampling.LANCZOS,
        )
    return image


def recognise(image: Image.Image, *, languages: str, dpi: int | None = None) -> str:
    """The text tesseract reads in `image`, paragraphs separated by blank lines.
    `dpi`: the resolution, when known (a rendered page); otherwise tesseract
    estimates it from the size of the text."""
    program = tesseract_program()
    if program is None:
        raise OcrUnavailable("OCR is not available: the tesseract program is not installed")
    buffer = io.BytesIO()
    # PNG at the fastest compression: tesseract reads it with less work than
    # the uncompressed PNM form (measured, bench/ocr_engines.py).
    prepare(image).save(buffer, format="PNG", compress_level=1)
    env = {"OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    folder = tessdata_dir()
    if folder is not None:
        env["TESSDATA_PREFIX"] = str(folder)
    argv = [program, "stdin", "stdout", "-l", languages, "--psm", "3"]
    if dpi and image.width * image.height <= MAX_OCR_PIXELS:  # not scaled by prepare()
        argv += ["--dpi", str(int(dpi))]
    argv.append("tsv")  # words with their confidence, so noise can be dropped
    try:
        result = subprocess.run(
            argv,
            input=buffer.getvalue(),
            capture_output=True,
            timeout=PAGE_TIMEOUT_SECONDS,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UnreadableDocument(
            f"OCR of a page took longer than {PAGE_TIMEOUT_SECONDS} s"
        ) from None
    except OSError as exc:
        raise OcrUnavailable(f"OCR could not start: {exc.strerror or exc}") from None
    if result.returncode != 0:
        detail = " ".join(result.stderr.decode("utf-8", "replace").split())[-200:]
        raise UnreadableDocument(f"OCR failed: {detail or f'exit status {result.returncode}'}")
    return tidy(confident_text(result.stdout.decode("utf-8", "replace")))


def confident_text(tsv: str, floor: float = CONFIDENCE_FLOOR) -> str:
    """The text of tesseract's TSV output, lines joined within a paragraph and
    paragraphs separated by a blank line, leaving out every paragraph whose
    letters' mean confidence is below `floor`."""
    paragraphs: dict[tuple[str, ...], dict[tuple[str, ...], list[str]]] = {}
    scores: dict[tuple[str, ...], list[float]] = {}
    for row in tsv.splitlines()[1:]:
        fields = row.split("\t")
        if len(fields) < 12 or fields[0] != "5" or not fields[11].strip():
            continue  # not a word (pages, blocks, lines), or an empty one
        try:
            confidence = float(fields[10])
        except ValueError:
            continue
        paragraph = tuple(fields[1:4])  # page, block, paragraph
        line = tuple(fields[1:5])
        word = fields[11].strip()
        paragraphs.setdefault(paragraph, {}).setdefault(line, []).append(word)
        scores.setdefault(paragraph, []).extend([confidence] * len(word))
    kept = [
        "\n".join(" ".join(words) for words in lines.values())
        for key, lines in paragraphs.items()
        if sum(scores[key]) / len(scores[key]) >= floor
    ]
    return "\n\n".join(kept)


def tidy(text: str) -> str:
    """Tesseract's lines joined into paragraphs (a blank line between them),
    words hyphenated at a line end rejoined, stray whitespace folded."""
    text = text.replace("\f", "\n\n").replace("\r", "")
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        line = _SPACES.sub(" ", " ".join(part.strip() for part in block.splitlines())).strip()
        if line and any(ch.isalnum() for ch in line):
            paragraphs.append(line)
    return "\n\n".join(paragraphs)


def no_text_warning(empty_pages: list[int], *, single_image: bool = False) -> str:
    """What a document says about pages OCR found nothing on."""
    if single_image:
        return "no text was recognised in the image"
    listed = ", ".join(str(p) for p in empty_pages[:20]) + ("…" if len(empty_pages) > 20 else "")
    return f"no text was recognised on page(s) {listed}"
