#!/usr/bin/env python
"""Vendored browser libraries: fetch them once, pin them, verify them.

Jarvis loads nothing from a CDN. Each library below is downloaded from the npm
registry (its tarball checked against the registry's sha512 integrity), the
files we use are copied under static/vendor/, and their sha256 hashes are
written to static/vendor/vendor.lock.json. The committed files are the truth;
this script only (re)creates them.

    python scripts/vendor.py --verify   # check files against the lock (tests do this too)
    python scripts/vendor.py --update   # download PACKAGES and rewrite the lock
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "vendor"
LOCK = VENDOR / "vendor.lock.json"
REGISTRY = "https://registry.npmjs.org"

# name -> (npm package, version, {file in package: path under static/vendor/}).
# A key ending in "/" copies every file under that folder of the package.
PACKAGES: dict[str, tuple[str, str, dict[str, str]]] = {
    "htmx": (
        "htmx.org",
        "2.0.11",
        {"dist/htmx.min.js": "htmx/htmx.min.js", "LICENSE": "htmx/LICENSE"},
    ),
    "htmx-ext-ws": (
        "htmx-ext-ws",
        "2.0.4",
        {"dist/ws.min.js": "htmx-ext-ws/ws.min.js", "LICENSE": "htmx-ext-ws/LICENSE"},
    ),
    # CodeMirror 5, not 6: 6 ships ES modules that need a bundler. Only what the
    # drafts editor loads: the core, the Markdown (+ XML for its inline HTML)
    # and LaTeX modes, and Markdown list continuation on Enter.
    "codemirror": (
        "codemirror",
        "5.65.21",
        {
            "lib/codemirror.js": "codemirror/lib/codemirror.js",
            "lib/codemirror.css": "codemirror/lib/codemirror.css",
            "mode/markdown/markdown.js": "codemirror/mode/markdown/markdown.js",
            "mode/xml/xml.js": "codemirror/mode/xml/xml.js",
            "mode/stex/stex.js": "codemirror/mode/stex/stex.js",
            "addon/edit/continuelist.js": "codemirror/addon/edit/continuelist.js",
            "LICENSE": "codemirror/LICENSE",
        },
    ),
    # The agent chats' terminal panel. The ES-module builds: Django's manifest
    # storage rewrites "//# sourceMappingURL" in *.js files and fails on the
    # .map files we do not ship; it leaves *.mjs alone.
    "xterm": (
        "@xterm/xterm",
        "6.0.0",
        {
            "lib/xterm.mjs": "xterm/xterm.mjs",
            "css/xterm.css": "xterm/xterm.css",
            "LICENSE": "xterm/LICENSE",
        },
    ),
    "xterm-addon-fit": (
        "@xterm/addon-fit",
        "0.11.0",
        {
            "lib/addon-fit.mjs": "xterm-addon-fit/addon-fit.mjs",
            "LICENSE": "xterm-addon-fit/LICENSE",
        },
    ),
    # The in-page PDF viewer: the core API and its worker, no viewer component.
    # The worker's CSP has no 'wasm-unsafe-eval', so it runs with useWasm: false
    # and decodes JBIG2 (scans) and JPEG 2000 with the JavaScript fallbacks.
    # standard_fonts/ draws PDFs that use Symbol, ZapfDingbats or a standard
    # font that is neither embedded nor installed. cmaps/ (1.7 MB, 169 files,
    # only for CJK text with predefined CMaps) is left out.
    "pdfjs": (
        "pdfjs-dist",
        "6.5.438",
        {
            "build/pdf.min.mjs": "pdfjs/pdf.min.mjs",
            "build/pdf.worker.min.mjs": "pdfjs/pdf.worker.min.mjs",
            "wasm/jbig2_nowasm_fallback.js": "pdfjs/wasm/jbig2_nowasm_fallback.js",
            "wasm/openjpeg_nowasm_fallback.js": "pdfjs/wasm/openjpeg_nowasm_fallback.js",
            "wasm/LICENSE_JBIG2": "pdfjs/wasm/LICENSE_JBIG2",
            "wasm/LICENSE_PDFJS_JBIG2": "pdfjs/wasm/LICENSE_PDFJS_JBIG2",
            "wasm/LICENSE_OPENJPEG": "pdfjs/wasm/LICENSE_OPENJPEG",
            "wasm/LICENSE_PDFJS_OPENJPEG": "pdfjs/wasm/LICENSE_PDFJS_OPENJPEG",
            "standard_fonts/": "pdfjs/standard_fonts/",
            "LICENSE": "pdfjs/LICENSE",
        },
    ),
    # For the browser tests only (tests/e2e/test_axe.py): the accessibility
    # checker run on the main pages. No template loads it.
    "axe-core": (
        "axe-core",
        "4.14.1",
        {"axe.min.js": "axe-core/axe.min.js", "LICENSE": "axe-core/LICENSE"},
    ),
}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_lock() -> dict:
    return json.loads(LOCK.read_text())


def verify() -> list[str]:
    """Problems found: files whose hash differs from the lock, files missing,
    and files under static/vendor/ that the lock does not pin."""
    problems = []
    lock = load_lock()
    pinned = set()
    for name, entry in lock["packages"].items():
        for rel, digest in entry["files"].items():
            pinned.add(rel)
            path = VENDOR / rel
            if not path.is_file():
                problems.append(f"{name}: {rel} is missing")
            elif sha256_of(path) != digest:
                problems.append(f"{name}: {rel} does not match its pinned sha256")
    for path in VENDOR.rglob("*"):
        rel = path.relative_to(VENDOR).as_posix()
        if path.is_file() and path != LOCK and rel not in pinned:
            problems.append(f"{rel} is not pinned in vendor.lock.json")
    return problems


def expand_folders(files: dict[str, str], names: list[str]) -> dict[str, str]:
    """`files` with each "folder/" key replaced by the files under it among
    `names` (the tarball's files, "package/..."), in name order."""
    expanded = {}
    for inner, target in files.items():
        if not inner.endswith("/"):
            expanded[inner] = target
            continue
        prefix = f"package/{inner}"
        inside = sorted(n.removeprefix(prefix) for n in names if n.startswith(prefix))
        if not inside:
            raise SystemExit(f"{inner} is not a folder of the package")
        expanded.update({f"{inner}{rest}": f"{target}{rest}" for rest in inside})
    return expanded


def update() -> None:
    import httpx

    lock: dict = {"registry": REGISTRY, "packages": {}}
    with httpx.Client(timeout=60, follow_redirects=True) as client:
        for name, (package, version, files) in PACKAGES.items():
            meta = client.get(f"{REGISTRY}/{package}/{version}").raise_for_status().json()
            tarball = client.get(meta["dist"]["tarball"]).raise_for_status().content
            algo, expected = meta["dist"]["integrity"].split("-", 1)
            actual = base64.b64encode(hashlib.new(algo, tarball).digest()).decode()
            if actual != expected:
                raise SystemExit(f"{package}@{version}: tarball does not match registry integrity")
            entry = {
                "npm": package,
                "version": version,
                "integrity": meta["dist"]["integrity"],
                "files": {},
            }
            with tarfile.open(fileobj=io.BytesIO(tarball)) as archive:
                names = [member.name for member in archive.getmembers() if member.isfile()]
                for inner, target in expand_folders(files, names).items():
                    member = archive.extractfile(f"package/{inner}")
                    if member is None:
                        raise SystemExit(f"{package}@{version}: {inner} not in the tarball")
                    dest = VENDOR / target
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(member.read())
                    entry["files"][target] = sha256_of(dest)
            lock["packages"][name] = entry
            print(f"{name}: {package}@{version} ({len(entry['files'])} files)")
    LOCK.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--verify", action="store_true")
    group.add_argument("--update", action="store_true")
    args = parser.parse_args()
    if args.update:
        update()
    problems = verify()
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print("vendored files match vendor.lock.json")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
