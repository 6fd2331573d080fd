"""OCR engines compared on generated scans, and the OCR targets checked.

    .venv/bin/python bench/ocr_engines.py [--pages 8] [--german 4] [--photos 2] [--repeat 2]

Engines, all reading Debian's language data (eng+deu):
- `tesseract`: Debian's tesseract program fed through a pipe, as Jarvis runs it
  (apps.library.ingest.parsing.ocr.recognise);
- `pytesseract`: the same program through pytesseract (temporary files);
  skipped when pytesseract is not installed (it is not a Jarvis dependency);
- `pymupdf`: PyMuPDF's built-in Tesseract (`Pixmap.pdfocr_tobytes`, what
  `Page.get_textpage_ocr` runs).

Every page is a letter typeset from known text, rendered at 300 dpi, tilted,
speckled and blurred (tests/support/documents.py); photos are a letter shot
on a desk, lit unevenly, stored sideways with an EXIF tag (turned upright
before OCR). Word recall is the share of the letter's words (a multiset,
case-folded) found in what the engine read. Each engine runs in its own
process with OMP_THREAD_LIMIT 1 (one page per core); wall seconds depend on
what else the machine runs, so CPU seconds (the engine's own, child process
included) are printed beside them: on an idle core the two agree.
Target: one A4 page in <= 5 s on 2 cores, recall >= 95%.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pymupdf  # noqa: E402 (after the path set-up above)
from PIL import Image, ImageOps  # noqa: E402

from apps.library.ingest.parsing.ocr import recognise  # noqa: E402
from tests.support.documents import letter_text, photo_bytes, scan_image  # noqa: E402

LANGS = "eng+deu"
TARGET_SECONDS = 5.0
TARGET_RECALL = 0.95


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.casefold()))


def recall(truth: str, found: str) -> float:
    want, got = words(truth), words(found)
    return sum(min(n, got[w]) for w, n in want.items()) / max(1, sum(want.values()))


def make_images(pages: int, german: int, photos: int) -> list[tuple[str, str, bytes]]:
    """(kind, true text, PNG bytes) for each test image."""
    images = []
    for n in range(pages + german):
        is_german = n >= pages
        text = letter_text(seed=100 + n, german=is_german)
        buffer = io.BytesIO()
        scan_image(text, seed=n, angle=0.3 + 0.4 * (n % 3)).save(buffer, format="PNG")
        images.append(("scan-de" if is_german else "scan-en", text, buffer.getvalue()))
    for n in range(photos):
        text = letter_text(seed=500 + n, sentences=10)
        stored = Image.open(io.BytesIO(photo_bytes(text, seed=n, orientation=6)))
        buffer = io.BytesIO()
        ImageOps.exif_transpose(stored).save(buffer, format="PNG")
        images.append(("photo", text, buffer.getvalue()))
    return images


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _read(engine: str, png: bytes) -> str:
    if engine == "tesseract":
        return recognise(Image.open(io.BytesIO(png)), languages=LANGS)
    if engine == "pytesseract":
        import pytesseract

        return pytesseract.image_to_string(Image.open(io.BytesIO(png)), lang=LANGS)
    pixmap = pymupdf.Pixmap(png)
    if pixmap.colorspace != pymupdf.csRGB or pixmap.alpha:
        # MuPDF's OCR device silently reads nothing from a grey pixmap.
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)
    tessdata = pymupdf.get_tessdata()
    with pymupdf.open(stream=pixmap.pdfocr_tobytes(language=LANGS, tessdata=tessdata)) as doc:
        return "\n".join(page.get_text() for page in doc)


def run_engine(engine: str, images_file: Path, repeat: int) -> list[dict]:
    """In this process: OCR every image with `engine`, `repeat` times."""
    records = json.loads(images_file.read_text())
    results = []
    for _ in range(repeat):
        for record in records:
            png = bytes.fromhex(record["png"])
            wall, cpu = time.perf_counter(), _cpu()
            text = _read(engine, png)
            results.append(
                {
                    "kind": record["kind"],
                    "seconds": time.perf_counter() - wall,
                    "cpu": _cpu() - cpu,
                    "recall": recall(record["text"], text),
                }
            )
    return results


def _available(engine: str) -> bool:
    if engine != "pytesseract":
        return True
    try:
        import pytesseract  # noqa: F401 - optional, only for this comparison
    except ImportError:
        print("(pytesseract is not installed: `.venv/bin/pip install pytesseract` to compare)")
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8, help="English scanned letters")
    parser.add_argument("--german", type=int, default=4, help="German scanned letters")
    parser.add_argument("--photos", type=int, default=2, help="photos of a letter")
    parser.add_argument("--repeat", type=int, default=1, help="read every image this often")
    parser.add_argument("--engines", default="tesseract,pytesseract,pymupdf")
    parser.add_argument("--_run", help=argparse.SUPPRESS)
    parser.add_argument("--_images", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._run:
        print(json.dumps(run_engine(args._run, Path(args._images), args.repeat)))
        return

    images = make_images(args.pages, args.german, args.photos)
    handle, name = tempfile.mkstemp(prefix="ocr-bench-", suffix=".json")
    os.close(handle)
    images_file = Path(name)
    images_file.write_text(
        json.dumps([{"kind": kind, "text": t, "png": p.hex()} for kind, t, p in images])
    )
    print(
        f"load {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores; {len(images)} images "
        f"x {args.repeat}; languages {LANGS}; OMP_THREAD_LIMIT=1"
    )
    print(
        f"{'engine':12} {'kind':8} {'n':>3} {'wall p50':>8} {'max':>6} {'cpu p50':>8} "
        f"{'max':>6} {'recall mean':>11} {'min':>7}"
    )
    verdicts = []
    try:
        for engine in args.engines.split(","):
            if not _available(engine):
                continue
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--_run",
                    engine,
                    "--_images",
                    str(images_file),
                    "--repeat",
                    str(args.repeat),
                ],
                capture_output=True,
                text=True,
                env={**os.environ, "OMP_THREAD_LIMIT": "1"},
                check=True,
            ).stdout
            results = json.loads(out)
            for kind in sorted({r["kind"] for r in results}):
                rows = [r for r in results if r["kind"] == kind]
                wall = [r["seconds"] for r in rows]
                cpu = [r["cpu"] for r in rows]
                recalls = [r["recall"] for r in rows]
                print(
                    f"{engine:12} {kind:8} {len(rows):>3} {statistics.median(wall):>8.2f} "
                    f"{max(wall):>6.2f} {statistics.median(cpu):>8.2f} {max(cpu):>6.2f} "
                    f"{statistics.mean(recalls):>11.2%} {min(recalls):>7.2%}"
                )
            if engine == "tesseract":
                pages = [r for r in results if r["kind"].startswith("scan")]
                verdicts.append(
                    f"target: A4 page <= {TARGET_SECONDS:.0f} s: cpu p50 "
                    f"{statistics.median(r['cpu'] for r in pages):.2f} s, wall p50 "
                    f"{statistics.median(r['seconds'] for r in pages):.2f} s; word recall >= "
                    f"{TARGET_RECALL:.0%}: min {min(r['recall'] for r in results):.2%}"
                )
    finally:
        images_file.unlink()
    for line in verdicts:
        print(line)


if __name__ == "__main__":
    main()
