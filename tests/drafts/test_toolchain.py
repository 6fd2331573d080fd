"""The draft build toolchain against the real latexmk, pdflatex, pandoc and bwrap.

Nothing is mocked and nothing is skipped: `make test` installs the Debian
packages (TEST_DEBS), so a missing tool is a failure here. The hostile corpus
checks outcomes (no file created, no secret in the PDF's text, its raw streams
or the log), not which layer stopped the attempt.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import uuid
import zlib
from pathlib import Path

import pymupdf
import pytest

from apps.drafts import toolchain

TIMEOUT = 60


@pytest.fixture(autouse=True)
def _fresh_caches():
    toolchain.clear_caches()
    yield
    toolchain.clear_caches()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "draft"
    path.mkdir()
    return path


@pytest.fixture
def secret(tmp_path: Path) -> tuple[Path, str]:
    """A file outside the draft, readable by this process, with a unique marker."""
    marker = f"TOPSECRET{uuid.uuid4().hex}"
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "secret.tex"
    path.write_text(marker + "\n")
    return path, marker


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text)


def document(body: str, preamble: str = "") -> str:
    return (
        f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )


def pdf_text(pdf: bytes | None) -> str:
    if not pdf:
        return ""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        return "".join(page.get_text() for page in doc)


def pdf_everything(pdf: bytes | None) -> bytes:
    """The raw PDF, its text, and every Flate stream inflated by hand: a file pdfTeX
    embeds with `\\pdfobj file` lands in an object stream MuPDF calls corrupt."""
    if not pdf:
        return b""
    chunks = [pdf, pdf_text(pdf).encode()]
    for start in re.finditer(rb"stream\r?\n", pdf):
        try:
            chunks.append(zlib.decompressobj().decompress(pdf[start.end() :]))
        except zlib.error:
            continue
    return b"\n".join(chunks)


def assert_absent(marker: str, result: toolchain.BuildResult) -> None:
    found = pdf_everything(result.pdf)
    for form in (
        marker.encode(),
        marker.encode().hex().encode(),
        marker.encode().hex().upper().encode(),
    ):
        assert form not in found
    assert marker not in result.log


def processes_using(path: Path) -> list[str]:
    """Live processes whose command line or working directory mentions `path`."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                if handle.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            try:
                cwd = os.readlink(f"/proc/{entry.name}/cwd")
            except OSError:
                cwd = ""
        except (OSError, IndexError):
            continue
        if str(path) in cmdline or cwd.startswith(str(path)):
            found.append(f"{entry.name}: {cmdline}")
    return found


def test_both_builds_are_available():
    assert toolchain.available() == {"latex": True, "pandoc": True}


# --- LaTeX


def test_a_simple_document_compiles(folder):
    write(
        folder,
        "main.tex",
        document(
            "Hello from Jarvis.\n\\begin{align} e &= mc^2 \\end{align}",
            preamble="\\usepackage{amsmath}",
        ),
    )
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert result.ok, result.log
    assert result.error == ""
    assert result.pdf is not None and result.pdf.startswith(b"%PDF")
    assert "Hello from Jarvis." in pdf_text(result.pdf)
    assert result.seconds > 0  # the page shows how long it took
    assert "Latexmk" in result.log


def test_input_reaches_a_file_beside_main(folder):
    write(folder, "main.tex", document("Main part. \\input{chapter}"))
    write(folder, "chapter.tex", "Words from the chapter.\n")
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert result.ok, result.log
    assert "Words from the chapter." in pdf_text(result.pdf)


def test_a_bib_file_beside_main_is_used(folder):
    write(
        folder,
        "paper.tex",
        document("As shown \\cite{knuth}.\n\\bibliographystyle{plain}\n\\bibliography{refs}"),
    )
    write(
        folder,
        "refs.bib",
        "@book{knuth, author={Donald Knuth}, title={The TeXbook},"
        " publisher={Addison-Wesley}, year={1984}}\n",
    )
    result = toolchain.compile_tex(folder, "paper.tex", timeout=TIMEOUT)
    assert result.ok, result.log
    text = pdf_text(result.pdf)
    assert "The TEXbook" in text or "The TeXbook" in text
    assert "[1]" in text


def test_a_latex_error_fails_with_the_log(folder):
    write(folder, "main.tex", document("\\nosuchmacro"))
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert not result.ok
    assert result.pdf is None
    assert result.error == "LaTeX failed: see the log"
    assert "Undefined control sequence" in result.log


def test_a_missing_main_file_is_reported(folder):
    result = toolchain.compile_tex(folder, "absent.tex", timeout=TIMEOUT)
    assert not result.ok
    assert result.error == "absent.tex is not in the draft"


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("\\immediate\\write18{{touch {path}}}", id="immediate"),
        pytest.param("\\write18{{touch {path}}}", id="at-shipout"),
    ],
)
def test_shell_escape_is_off(folder, tmp_path, command):
    pwned = tmp_path / f"pwned-{uuid.uuid4().hex}"
    write(
        folder,
        "main.tex",
        document("shell=\\the\\pdfshellescape.\n" + command.format(path=pwned)),
    )
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert result.ok, result.log
    assert "shell=0." in pdf_text(result.pdf)
    assert not pwned.exists()


def test_latexmk_does_not_hand_names_from_the_log_to_a_shell(folder):
    # Stock latexmk runs `bibtex "y$(sh<payload.txt)"` through /bin/sh for a
    # .bbl the log says is missing, and kpsewhich likewise for a \bibdata name.
    write(folder, "payload.txt", 'echo "INJ$((6*7))ECTED" >&2\n')
    write(
        folder,
        "main.tex",
        document(
            "\\makeatletter\\@input{y$(sh<payload.txt).bbl}\\makeatother\n"
            "\\bibliographystyle{plain}\\bibliography{z$(sh<payload.txt)}"
        ),
    )
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert "INJ42ECTED" not in result.log
    assert "INJ42ECTED" not in pdf_text(result.pdf)


READS = {
    "input": "\\input{{{path}}}",
    "openin": (
        "\\newread\\r \\openin\\r={path} "
        "\\ifeof\\r closed\\else\\endlinechar=-1 \\read\\r to\\line \\line\\fi"
    ),
    "pdfobj-file": "\\immediate\\pdfobj file {{{path}}}\\pdfrefobj\\pdflastobj",
    "pdffiledump": "\\pdffiledump length 200 {{{path}}}",
    "includegraphics": "\\includegraphics{{{path}}}",
}


@pytest.mark.parametrize("how", READS)
@pytest.mark.parametrize("target", ["passwd", "outside"])
def test_files_outside_the_draft_cannot_be_read(folder, secret, tmp_path, how, target):
    if target == "passwd":
        path, marker = "/etc/passwd", "root:"
    elif how == "includegraphics":
        # An image the engine would embed: a PDF outside the draft.
        marker = secret[1]
        path = tmp_path / "outside" / "scan.pdf"
        with pymupdf.open() as doc:
            doc.new_page().insert_text((72, 72), marker)
            doc.save(path)
    else:
        path, marker = secret
    write(
        folder,
        "main.tex",
        document("Before. " + READS[how].format(path=path) + " After.", "\\usepackage{graphicx}"),
    )
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert_absent(marker, result)


def test_a_bibliography_outside_the_draft_is_not_read(folder, tmp_path):
    marker = f"TOPSECRET{uuid.uuid4().hex}"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "refs.bib").write_text(
        f"@misc{{leak, author={{Someone Else}}, title={{{marker}}}, year={{2020}}}}\n"
    )
    write(
        folder,
        "main.tex",
        document(f"\\nocite{{*}}\\bibliographystyle{{plain}}\\bibliography{{{outside}/refs}}"),
    )
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert_absent(marker, result)


def test_an_endless_loop_is_killed_at_the_timeout(folder, tmp_path, monkeypatch):
    builds = tmp_path / "builds"
    builds.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(builds))
    write(folder, "loop.tex", document("\\def\\x{\\x}\\x"))
    result = toolchain.compile_tex(folder, "loop.tex", timeout=5)
    assert not result.ok
    assert result.pdf is None
    assert result.error == "timed out after 5 s"
    deadline = time.monotonic() + 2
    while processes_using(builds) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_using(builds) == []
    assert list(builds.iterdir()) == []  # the build directory is gone too


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            "\\newwrite\\f\\immediate\\openout\\f=big.txt "
            "\\loop\\immediate\\write\\f{0123456789abcdef0123456789abcdef}\\iftrue\\repeat",
            id="file",
        ),
        pytest.param("\\loop\\message{0123456789abcdef0123456789abcdef}\\iftrue\\repeat", id="log"),
    ],
)
def test_a_build_that_writes_without_end_is_stopped(folder, monkeypatch, body):
    monkeypatch.setattr(toolchain, "MAX_BUILD_BYTES", 4 * toolchain.MIB)
    write(folder, "main.tex", document(body))
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert not result.ok
    assert result.error == "the build wrote more than 4 MB"  # stopped, not timed out
    assert len(result.log.encode()) <= toolchain.LOG_MAX_BYTES + 100


def test_symlinks_in_the_draft_are_not_followed(folder, secret):
    path, marker = secret
    (folder / "secret.tex").symlink_to("/etc/passwd")
    (folder / "other.tex").symlink_to(path)
    write(
        folder,
        "main.tex",
        document(
            "\\InputIfFileExists{secret}{}{no-secret}. \\InputIfFileExists{other}{}{no-other}."
        ),
    )
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert result.ok, result.log
    text = pdf_text(result.pdf)
    assert "no-secret." in text and "no-other." in text
    assert_absent("root:", result)
    assert_absent(marker, result)


def test_only_allowed_names_are_copied(folder):
    write(folder, "-shell-escape.tex", "DASHFILE\n")
    write(folder, ".hidden.tex", "HIDDENFILE\n")
    write(folder, "evil.sty", "STYFILE\n")
    write(
        folder,
        "main.tex",
        document(
            "\\InputIfFileExists{-shell-escape}{}{no-dash}. "
            "\\InputIfFileExists{.hidden}{}{no-hidden}. "
            "\\InputIfFileExists{evil.sty}{}{no-sty}."
        ),
    )
    result = toolchain.compile_tex(folder, "main.tex", timeout=TIMEOUT)
    assert result.ok, result.log
    text = pdf_text(result.pdf)
    assert "no-dash." in text and "no-hidden." in text and "no-sty." in text
    assert "DASHFILE" not in text and "HIDDENFILE" not in text and "STYFILE" not in text


@pytest.mark.parametrize(
    "main",
    [
        "-latex=pdflatex -shell-escape.tex",
        "-main.tex",
        "../main.tex",
        "sub/main.tex",
        "/etc/main.tex",
        ".hidden.tex",
        "a$(id).tex",
        'a"b.tex',
        "50%.tex",
        "main.md",
        "",
    ],
)
def test_unsafe_main_names_are_refused(folder, main):
    write(folder, "main.tex", document("x"))
    with pytest.raises(ValueError):
        toolchain.compile_tex(folder, main, timeout=TIMEOUT)


def test_a_main_name_with_spaces_and_accents_compiles(folder):
    write(folder, "Brief an Öma (2).tex", document("Liebe Oma"))
    result = toolchain.compile_tex(folder, "Brief an Öma (2).tex", timeout=TIMEOUT)
    assert result.ok, result.log
    assert "Liebe Oma" in pdf_text(result.pdf)


# --- Markdown through pandoc


def test_markdown_exports_to_pdf(folder):
    write(folder, "notes.md", "# Quarterly Budget\n\nThe area is $x^2$ square metres.\n")
    result = toolchain.export_markdown_pdf(folder, "notes.md", margin="1in", timeout=TIMEOUT)
    assert result.ok, result.log
    assert result.pdf is not None and result.pdf.startswith(b"%PDF")
    assert "Quarterly Budget" in pdf_text(result.pdf)
    with pymupdf.open(stream=result.pdf, filetype="pdf") as doc:
        left = min(block[0] for block in doc[0].get_text("blocks"))
    assert abs(left - 72) < 3  # a 1in margin is 72pt


@pytest.mark.parametrize(
    "margin", ["2", "2 cm", "cm", "-1cm", "1e3cm", "2cm,showframe", "2cm}\\input{x}", "٢cm"]
)
def test_a_bad_margin_is_refused(folder, margin):
    write(folder, "notes.md", "# Hi\n")
    with pytest.raises(ValueError):
        toolchain.export_markdown_pdf(folder, "notes.md", margin=margin, timeout=TIMEOUT)


def test_only_markdown_is_exported(folder):
    write(folder, "main.tex", document("x"))
    with pytest.raises(ValueError):
        toolchain.export_markdown_pdf(folder, "main.tex", margin="2cm", timeout=TIMEOUT)


MARKDOWN_READS = {
    "image": "![picture]({path})",
    "raw-input": "\\input{{{path}}}",
    "header-includes": "---\nheader-includes: \\input{{{path}}}\n---\n",
}


@pytest.mark.parametrize("how", MARKDOWN_READS)
@pytest.mark.parametrize("target", ["passwd", "outside"])
def test_markdown_cannot_read_outside_the_draft(folder, secret, how, target):
    path, marker = ("/etc/passwd", "root:") if target == "passwd" else secret
    text = MARKDOWN_READS[how].format(path=path)
    write(folder, "notes.md", f"{text}\n\n# Heading\n\nBody.\n")
    result = toolchain.export_markdown_pdf(folder, "notes.md", margin="2cm", timeout=TIMEOUT)
    assert_absent(marker, result)
