"""OCR engines compared on generated scans: PyMuPDF's built-in Tesseract
(`Pixmap.pdfocr_tobytes`, what `Page.get_textpage_ocr` runs), Debian's
`tesseract` program driven by pytesseract (temporary files), and the same
program fed through a pipe as Jarvis runs it (`apps.library.ingest.parsing.ocr`),
all reading Debian's language data.

    .venv/bin/python bench/ocr_engines.py [--pages 8] [--german 4] [--photos 2]

Every page is a letter typeset from known text, rendered at 300 dpi, tilted,
speckled and blurred (tests/support/documents.py), so word recall can be
counted exactly: the share of the letter's words (a multiset, case-folded)
found in what the engine read. Each engine runs in its own process per thread
limit (OMP_THREAD_LIMIT is read once, when Tesseract starts), on the very
same images. Prints seconds per page (p50, max) and recall (mean, min).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LANGS = "eng+deu"


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.casefold()))


def recall(truth: str, found: str) -> float:
    want, got = words(truth), words(found)
    return sum(min(n, got[w]) for w, n in want.items()) / max(1, sum(want.values()))


def make_images(pages: int, german: int, photos: int) -> list[tuple[str, str, bytes]]:
    """(label, true text, PNG bytes) for each test image."""
    from PIL import ImageOps

    from tests.support.documents import letter_text, photo_bytes, scan_image

    images = []
    for n in range(pages + german):
        is_german = n >= pages
        text = letter_text(seed=100 + n, german=is_german)
        buffer = io.BytesIO()
        scan_image(text, seed=n, angle=0.3 + 0.4 * (n % 3)).save(buffer, format="PNG")
        images.append(("scan-de" if is_german else "scan-en", text, buffer.getvalue()))
    for n in range(photos):
        text = letter_text(seed=500 + n, sentences=10)
        from PIL import Image

        upright = ImageOps.exif_transpose(Image.open(io.BytesIO(photo_bytes(text, seed=n))))
        buffer = io.BytesIO()
        upright.save(buffer, format="PNG")
        images.append(("photo", text, buffer.getvalue()))
    return images


def run_engine(engine: str, images_file: Path) -> list[dict]:
    """In this process: OCR every image with `engine`; seconds and text per image."""
    import pymupdf

    records = json.loads(images_file.read_text())
    tessdata = pymupdf.get_tessdata()
    results = []
    for record in records:
        png = bytes.fromhex(record["png"])
        started = time.perf_counter()
        if engine == "pymupdf":
            pixmap = pymupdf.Pixmap(png)
            if pixmap.colorspace != pymupdf.csRGB or pixmap.alpha:
                # MuPDF's OCR device silently reads nothing from a grey pixmap.
                pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)
            with pymupdf.open(
                stream=pixmap.pdfocr_tobytes(language=LANGS, tessdata=tessdata)
            ) as doc:
                text = "\n".join(page.get_text() for page in doc)
        elif engine == "tesseract":
            from PIL import Image

            from apps.library.ingest.parsing.ocr import recognise

            text = recognise(Image.open(io.BytesIO(png)), languages=LANGS)
        else:
            import pytesseract
            from PIL import Image

            text = pytesseract.image_to_string(Image.open(io.BytesIO(png)), lang=LANGS)
        seconds = time.perf_counter() - started
        results.append(
            {"label": record["label"], "seconds": seconds, "recall": recall(record["text"], text)}
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8, help="English scanned letters")
    parser.add_argument("--german", type=int, default=4, help="German scanned letters")
    parser.add_argument("--photos", type=int, default=2, help="photos of a letter")
    parser.add_argument("--engines", default="tesseract,pymupdf,pytesseract")
    parser.add_argument("--threads", default="1,2", help="OMP_THREAD_LIMIT values to try")
    parser.add_argument("--_run", help=argparse.SUPPRESS)
    parser.add_argument("--_images", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._run:
        print(json.dumps(run_engine(args._run, Path(args._images))))
        return

    images = make_images(args.pages, args.german, args.photos)
    handle, name = tempfile.mkstemp(prefix="ocr-bench-", suffix=".json")
    os.close(handle)
    images_file = Path(name)
    images_file.write_text(
        json.dumps([{"label": kind, "text": t, "png": p.hex()} for kind, t, p in images])
    )
    print(
        f"load: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores; "
        f"{len(images)} images, languages {LANGS}"
    )
    print(
        f"{'engine':12} {'threads':>7} {'kind':8} {'n':>3} {'s/page p50':>10} "
        f"{'max':>6} {'recall mean':>11} {'min':>6}"
    )
    try:
        for engine in args.engines.split(","):
            for threads in args.threads.split(","):
                env = {**os.environ, "OMP_THREAD_LIMIT": threads}
                out = subprocess.run(
                    [sys.executable, __file__, "--_run", engine, "--_images", str(images_file)],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=True,
                ).stdout
                results = json.loads(out)
                for kind in sorted({r["label"] for r in results}):
                    rows = [r for r in results if r["label"] == kind]
                    seconds = [r["seconds"] for r in rows]
                    recalls = [r["recall"] for r in rows]
                    print(
                        f"{engine:12} {threads:>7} {kind:8} {len(rows):>3} "
                        f"{statistics.median(seconds):>10.2f} {max(seconds):>6.2f} "
                        f"{statistics.mean(recalls):>11.3%} {min(recalls):>6.1%}"
                    )
    finally:
        images_file.unlink()


if __name__ == "__main__":
    main()
