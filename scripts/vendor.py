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

# name -> (npm package, version, {file in package: path under static/vendor/})
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
                for inner, target in files.items():
                    member = archive.extractfile(f"package/{inner}")
                    if member is None:
                        raise SystemExit(f"{package}@{version}: {inner} not in the tarball")
                    dest = VENDOR / target
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(member.read())
                    entry["files"][target] = sha256_of(dest)
            lock["packages"][name] = entry
            print(f"{name}: {package}@{version} ({len(files)} files)")
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
