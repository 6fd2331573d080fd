"""What parsing in a sandbox child costs beside parsing in-process.

1. Starting the zygote (once per process: Django and PyMuPDF imported).
2. One small note: in-process vs in its own child (fork, limits, JSON back).
3. 1,000 small notes: in-process vs in batches of 32 per child (as sync does).
4. A text PDF: in-process vs in a child (the page rate of both).
5. A scanned PDF: how soon the quick lane hands it on (it only counts the
   pages), and the long lane's OCR of it in a child (tesseract per page).
6. A preview of a 14,400-point page through the sandbox: its size and time.

    .venv/bin/python bench/sandbox_overhead.py [--notes 1000] [--pages 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import struct
import tempfile
import time
from pathlib import Path

import pymupdf
from _support import django_in
from _vaults import write_vault


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--scanned", type=int, default=4, help="pages of the scanned PDF")
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="jarvis-bench-sandbox-"))
    folder = data / "vault"
    folder.mkdir()
    write_vault(folder, args.notes, sections=(1, 2))
    django_in(data)

    from ingest_throughput import make_pdf

    from apps.core.sandbox import sandbox_warm_up
    from apps.library.ingest.isolated import (
        BATCH_FILES,
        LONG,
        QUICK,
        ParseItem,
        ParseTooSlow,
        long_lane_seconds,
        parse_many,
        parse_one,
    )
    from apps.library.ingest.pipeline import parse_bytes
    from apps.library.previews import page_png

    started = time.perf_counter()
    sandbox_warm_up()
    print(f"zygote start: {time.perf_counter() - started:.2f}s")

    notes = [
        ParseItem(data=p.read_bytes(), kind="note", filename=p.name)
        for p in sorted(folder.rglob("*.md"))
    ]
    one = notes[0]
    inline, child = [], []
    for _ in range(20):
        started = time.perf_counter()
        parse_bytes(one.data, kind=one.kind, filename=one.filename)
        inline.append(time.perf_counter() - started)
        started = time.perf_counter()
        parse_one(one, lane=QUICK)
        child.append(time.perf_counter() - started)
    print(
        f"one note: in-process {1000 * statistics.median(inline):.1f} ms, "
        f"own child {1000 * statistics.median(child):.1f} ms (median of 20)"
    )

    started = time.perf_counter()
    for item in notes:
        parse_bytes(item.data, kind=item.kind, filename=item.filename)
    inline_all = time.perf_counter() - started
    started = time.perf_counter()
    for at in range(0, len(notes), BATCH_FILES):
        parse_many(notes[at : at + BATCH_FILES], lane=QUICK)
    batched = time.perf_counter() - started
    print(
        f"{len(notes)} notes: in-process {inline_all:.2f}s, in children of {BATCH_FILES} "
        f"{batched:.2f}s (+{1000 * (batched - inline_all) / len(notes):.1f} ms a note)"
    )

    pdf = make_pdf(args.pages)
    started = time.perf_counter()
    parse_bytes(pdf, kind="pdf", filename="bench.pdf")
    inline_pdf = time.perf_counter() - started
    started = time.perf_counter()
    parse_one(ParseItem(data=pdf, kind="pdf", filename="bench.pdf"), lane=LONG)
    child_pdf = time.perf_counter() - started
    print(
        f"PDF of {args.pages} pages: in-process {args.pages / inline_pdf:.0f} pages/s, "
        f"in a child {args.pages / child_pdf:.0f} pages/s"
    )

    scan = ParseItem(data=scanned_pdf(args.scanned), kind="pdf", filename="scan.pdf")
    started = time.perf_counter()
    try:
        parse_one(scan, lane=QUICK)
        raise SystemExit("the quick lane read a scan by OCR")
    except ParseTooSlow as slow:
        counted = slow.ocr_pages
    handed = time.perf_counter() - started
    started = time.perf_counter()
    parsed = parse_one(scan, lane=LONG, ocr_pages=counted)
    ocr = time.perf_counter() - started
    print(
        f"scanned PDF of {args.scanned} pages: the quick lane handed it on in {handed:.2f}s "
        f"({counted} pages counted); the long lane read {len(parsed.ocr_pages)} pages by OCR "
        f"in {ocr:.1f}s ({ocr / max(1, len(parsed.ocr_pages)):.1f}s a page; its limit was "
        f"{long_lane_seconds(counted)}s)"
    )

    poster = data / "poster.pdf"
    document = pymupdf.open()
    document.new_page(width=14400, height=14400).insert_text((72, 72), "A very large page.")
    document.save(poster)
    started = time.perf_counter()
    png = asyncio.run(page_png(content_hash="0" * 64, path=poster, number=1, kind="pdf"))
    seconds = time.perf_counter() - started
    width, height = struct.unpack(">II", png.read_bytes()[16:24])  # the PNG header's IHDR
    print(
        f"preview of a 14,400 pt page: {width} x {height} px in {seconds:.2f}s in a child "
        f"(at the old fixed zoom 1.3 it was {14400 * 1.3:,.0f} px square)"
    )


def scanned_pdf(pages: int) -> bytes:
    """Image-only A4 pages, as a scanner makes them: text drawn, rendered at
    200 dpi, and only the picture kept."""
    scan = pymupdf.open()
    for number in range(pages):
        source = pymupdf.open()
        page = source.new_page(width=595, height=842)
        lines = [f"Tenancy agreement, page {number + 1}."] + [
            f"Clause {number}.{i}: the tenant keeps the garden tidy and the gutters clear."
            for i in range(30)
        ]
        page.insert_text((60, 80), "\n".join(lines), fontsize=11)
        picture = page.get_pixmap(dpi=200, colorspace=pymupdf.csGRAY)
        scan.new_page(width=595, height=842).insert_image(
            pymupdf.Rect(0, 0, 595, 842), stream=picture.tobytes("png")
        )
        source.close()
    data = scan.tobytes()
    scan.close()
    return data


if __name__ == "__main__":
    main()
