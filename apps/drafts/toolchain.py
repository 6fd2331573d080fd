"""Building a draft into a PDF: LaTeX through latexmk, Markdown through pandoc.

A draft's files come from a person or a model and may be hostile, and both
tools can do far more than typeset: TeX reads files (`\\input`, `\\openin`,
pdfTeX's `\\pdfobj file`), writes files (`\\openout`), runs programs
(`\\write18`) and can loop forever; latexmk passes file names it takes from the
TeX log and .aux files to /bin/sh; pandoc reads any image path a document names
when it makes a PDF, `--sandbox` or not (2.17). So every build:

1. Works on a copy. A fresh `tempfile.TemporaryDirectory` receives the draft's
   regular files only (opened with O_NOFOLLOW and checked with fstat, so a
   symlink is never followed, not even one swapped in after the listing), only
   names with an extension in `settings.DRAFTS_EXTENSIONS`, no dotfiles, nothing
   starting with "-". Everything the build writes dies with the directory; only
   the PDF's bytes and the log's tail come back.
2. Runs inside bubblewrap (`bwrap`): a mount namespace holding /usr, the TeX
   configuration and generated formats (read-only) and the build directory, and
   nothing else: no /etc/passwd, no Jarvis data directory, no other draft, no
   network, its own PID namespace. This is the boundary that holds. TeX Live's
   `openin_any=p` does refuse `\\input{/etc/passwd}`, but pdfTeX ignores it for
   `\\pdfobj file {/abs/path}`, which embeds any readable file in the PDF (TeX
   Live 2022), and pandoc copies `![](/abs/path)` into its own work folder,
   where pdflatex may include it. Without a working bwrap nothing is built.
3. Gets a scrubbed environment: PATH=/usr/bin:/bin, HOME, TMPDIR and the
   TEXMF{HOME,VAR,CONFIG} trees inside the build directory, and the kpathsea
   switches `openin_any=p`, `openout_any=p` (no absolute or parent paths, no
   dotfiles) and `shell_escape=f` (`\\write18` does nothing). kpathsea reads
   these from the environment before any texmf.cnf, so a texmf.cnf the document
   manages to write cannot loosen them.
4. latexmk runs with `-norc` (neither Debian's /etc/LatexMk nor a latexmkrc),
   `-no-shell-escape`, and its command runner and kpsewhich lookup replaced by
   argument-list versions (`_LATEXMK_NO_SHELL`): stock latexmk 4.79 runs
   `bibtex "<name from the log>"` through the shell, so a document containing
   `\\@input{x$(sh<a.txt).bbl}` runs a.txt as a shell script.
5. Names the main file `./<name>`, so it can never read as an option, after
   `check_main` refused anything but a plain file name of ordinary characters
   (no separators, no leading "-" or ".", nothing TeX or a shell treats as
   syntax). pandoc's margin must look like a length (`MARGIN`).
6. Is bounded: argv lists only (never a shell), its own session so a timeout
   kills the whole process group (latexmk, pdflatex, bibtex; the PID namespace
   takes anything that escaped the group), output to a file rather than a pipe
   (a chatty build cannot deadlock on a full pipe), and the build directory plus
   that file may grow to MAX_BUILD_BYTES before the build is stopped. The log
   returned is the last LOG_MAX_BYTES.

Files coming back out are opened relative to a directory descriptor taken
before the build ran, with O_NOFOLLOW, so a symlink planted by the build cannot
make this process read a file of the server's.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from django.conf import settings

from apps.core.errors import Refused

DEFAULT_EXTENSIONS = (".md", ".tex", ".bib", ".txt", ".csv")
SAFE_PATH = "/usr/bin:/bin"
# Debian's texlive-xetex pulls in texlive-latex-extra (~100 MB more); pdflatex
# with lmodern covers what drafts need, including pandoc's default template.
ENGINE = "pdflatex"
MIB = 1024 * 1024
MAX_BUILD_BYTES = 256 * MIB
MAX_BUILD_FILES = 10_000
LOG_MAX_BYTES = 200_000
POLL_SECONDS = 0.1
MAIN_MAX_LENGTH = 120
# Word characters (any script), space and a little punctuation: nothing that
# TeX (% # $ & ~ ^ \ { }), kpathsea ($VAR) or latexmk's quoting (") reads as syntax.
MAIN_NAME = re.compile(r"\w[\w .,'+()-]*")
MARGIN = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3})?(?:cm|mm|in|pt)")
# The TeX configuration and generated formats and font maps (Debian paths), and
# what the dynamic linker and /usr/bin links need; all public, all read-only.
_READ_ONLY_EXTRAS = ("/etc/texmf", "/var/lib/texmf", "/etc/alternatives", "/etc/ld.so.cache")
_TOP_LEVEL_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Perl run by latexmk -e: `Run` and `kpsewhich` are the two places latexmk
# 4.79 hands a command line to /bin/sh (system STRING, open "...|"); these run
# the same programs from a list, so a file name is only ever one argument.
_LATEXMK_NO_SHELL = (
    'no warnings "redefine";'
    " *main::Run = sub { my @argv = parse_quotes($_[0]);"
    " return (0, system { $argv[0] } @argv); };"
    ' *main::kpsewhich = sub { open(my $fh, "-|", "kpsewhich", @_) or return ();'
    " my @found = <$fh>; close $fh; s/\\r?\\n$// for @found; return @found; };"
)


class BuildRefused(Refused, ValueError):
    """An argument a build cannot take (the main file's name, the margin, the timeout).
    A ValueError to callers that validate; a Refused, with a message fit to show, to views."""


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    pdf: bytes | None  # only when ok
    log: str  # the tail of the tools' output, at most LOG_MAX_BYTES
    seconds: float
    error: str = ""  # one line when not ok, e.g. "timed out after 180 s"


def available() -> dict[str, bool]:
    """Which builds this server can run: the tools are installed and the sandbox starts."""
    return dict(_available())


@functools.lru_cache(maxsize=1)
def _available() -> dict[str, bool]:
    sandbox = _sandbox_problem() is None
    return {
        "latex": sandbox and _missing("latexmk", ENGINE) is None,
        "pandoc": sandbox and _missing("pandoc", ENGINE) is None,
    }


def clear_caches() -> None:
    """Forget what was found installed (after installing a tool; tests)."""
    _available.cache_clear()
    _sandbox_problem.cache_clear()
    _pandoc_version.cache_clear()


def check_main(main: object, suffixes: tuple[str, ...]) -> str:
    """`main` if it may be handed to a tool as the file to build; BuildRefused otherwise."""
    if not isinstance(main, str) or not main:
        raise BuildRefused("Name the file to build.")
    if "/" in main or os.sep in main or "\\" in main or "\x00" in main:
        raise BuildRefused("The file to build must be a plain name, without a folder.")
    if main.startswith("-"):
        raise BuildRefused("The file to build cannot have a name starting with '-'.")
    if len(main) > MAIN_MAX_LENGTH or not MAIN_NAME.fullmatch(main) or main != main.strip():
        raise BuildRefused(
            "To be built, a file name may hold letters, digits, spaces and . , ' + ( ) - _ only."
        )
    if not main.lower().endswith(suffixes):
        raise BuildRefused(f"Only {' and '.join(suffixes)} files can be built this way.")
    return main


def compile_tex(folder: Path, main: str, *, timeout: int) -> BuildResult:
    """Compile `folder/main` (a .tex file) with latexmk and pdflatex, in the sandbox."""
    check_main(main, (".tex",))
    _check_timeout(timeout)
    argv = [
        "latexmk",
        "-norc",
        "-e",
        _LATEXMK_NO_SHELL,
        "-pdf",
        "-no-shell-escape",
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        f"./{main}",
    ]
    return _build(
        Path(folder),
        main,
        argv,
        tools=("latexmk", ENGINE),
        pdf_name=f"{Path(main).stem}.pdf",
        timeout=timeout,
        label="LaTeX",
    )


def export_markdown_pdf(folder: Path, main: str, *, margin: str, timeout: int) -> BuildResult:
    """Turn `folder/main` (Markdown) into a PDF with pandoc and pdflatex, in the sandbox."""
    check_main(main, (".md", ".txt"))
    if not isinstance(margin, str) or not MARGIN.fullmatch(margin):
        raise BuildRefused(
            f"A margin is a length such as 2cm, 15mm, 0.75in or 36pt, not {margin!r}."
        )
    _check_timeout(timeout)
    argv = [
        "pandoc",
        "-f",
        "markdown+tex_math_dollars",
        f"./{main}",
        "-o",
        "out.pdf",
        f"--pdf-engine={ENGINE}",
        "--pdf-engine-opt=-no-shell-escape",
        "-V",
        f"geometry:margin={margin}",
    ]
    if _which("pandoc") and _pandoc_version() >= (2, 15):
        # Stops pandoc's own readers opening other files; the PDF step's image
        # fetching ignores it (2.17), which is what the bwrap sandbox is for.
        argv.append("--sandbox")
    return _build(
        Path(folder),
        main,
        argv,
        tools=("pandoc", ENGINE),
        pdf_name="out.pdf",
        timeout=timeout,
        label="pandoc",
    )


# --- The build


def _build(
    folder: Path,
    main: str,
    argv: list[str],
    *,
    tools: tuple[str, ...],
    pdf_name: str,
    timeout: int,
    label: str,
) -> BuildResult:
    started = time.monotonic()

    def result(error: str, log: str = "", pdf: bytes | None = None) -> BuildResult:
        return BuildResult(
            ok=not error, pdf=pdf, log=log, seconds=time.monotonic() - started, error=error
        )

    missing = _missing(*tools)
    if missing:
        return result(f"{missing} is not installed")
    problem = _sandbox_problem()
    bwrap = _which("bwrap")
    if problem or bwrap is None:
        return result(problem or "bwrap (bubblewrap) is not installed")

    # ignore_cleanup_errors: a build may leave files it made unreadable; the
    # directory is in the system temp dir and nothing else refers to it.
    with tempfile.TemporaryDirectory(prefix="jarvis-build-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        # Only `box` is visible in the sandbox; the log lives beside it, out of reach.
        box = root / "box"
        work = box / "work"
        for path in (box, work, *(box / name for name in _SCRATCH)):
            path.mkdir(mode=0o700)
        try:
            copied = _seed(folder, work)
        except _TooBig:
            return result(f"the draft is larger than {MAX_BUILD_BYTES // MIB} MB")
        if main not in copied:
            return result(f"{main} is not in the draft")

        work_fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with open(root / "output.log", "w+b") as log:
                stopped, returncode = _run(
                    [*_sandbox_argv(bwrap, box, work), *argv],
                    box=box,
                    env=_environment(box),
                    timeout=timeout,
                    log=log,
                )
                text = _tail(log)
            if stopped:
                return result(stopped, text)
            pdf = _read_pdf(work_fd, pdf_name)
        finally:
            os.close(work_fd)
    if returncode != 0:
        return result(f"{label} failed: see the log", text)
    if pdf is None:
        return result(f"{label} made no PDF: see the log", text)
    return result("", text, pdf)


_SCRATCH = ("home", "tmp", "texmf-home", "texmf-var", "texmf-config")


class _TooBig(Exception):
    pass


def _seed(source: Path, dest: Path) -> set[str]:
    """Copy the draft's buildable files into `dest`; the names copied."""
    extensions = tuple(
        ext.lower() for ext in getattr(settings, "DRAFTS_EXTENSIONS", DEFAULT_EXTENSIONS)
    )
    copied: set[str] = set()
    budget = MAX_BUILD_BYTES
    with os.scandir(source) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith((".", "-")) or not name.lower().endswith(extensions):
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            try:
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:  # gone, or a symlink swapped in since the listing
                continue
            with os.fdopen(fd, "rb") as src:
                info = os.fstat(src.fileno())
                if not stat.S_ISREG(info.st_mode):
                    continue
                if info.st_size > budget:
                    raise _TooBig
                data = src.read(budget + 1)
            if len(data) > budget:
                raise _TooBig
            budget -= len(data)
            with open(dest / name, "xb") as out:
                out.write(data)
            copied.add(name)
    return copied


def _environment(box: Path) -> dict[str, str]:
    return {
        "PATH": SAFE_PATH,
        "HOME": str(box / "home"),
        "LANG": "C.UTF-8",
        "TMPDIR": str(box / "tmp"),
        "TEXMFHOME": str(box / "texmf-home"),
        "TEXMFVAR": str(box / "texmf-var"),
        "TEXMFCONFIG": str(box / "texmf-config"),
        "openin_any": "p",
        "openout_any": "p",
        "shell_escape": "f",
    }


def _sandbox_argv(bwrap: str, box: Path, cwd: Path) -> list[str]:
    # No --new-session: the sandbox stays in the process group _run kills, and
    # with no controlling terminal (start_new_session) there is none to hijack.
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"]
    for top in _TOP_LEVEL_LINKS:  # merged-/usr links, or real folders on older systems
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for extra in _READ_ONLY_EXTRAS:
        argv += ["--ro-bind-try", extra, extra]
    argv += ["--dev", "/dev", "--bind", str(box), str(box), "--chdir", str(cwd), "--"]
    return argv


def _run(
    argv: list[str], *, box: Path, env: dict[str, str], timeout: int, log: BinaryIO
) -> tuple[str, int | None]:
    """Run `argv` in a session of its own: ("", exit status), or (why it was stopped, None)."""
    process = subprocess.Popen(
        argv,
        cwd=box,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    stopped = ""
    try:
        while True:
            try:
                process.wait(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() >= deadline:
                stopped = f"timed out after {timeout} s"
                break
            if _too_much_output(box, log):
                stopped = f"the build wrote more than {MAX_BUILD_BYTES // MIB} MB"
                break
    finally:
        # Also after a normal exit: nothing the build started outlives it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return stopped, None if stopped else process.returncode


def _too_much_output(box: Path, log: BinaryIO) -> bool:
    total = os.fstat(log.fileno()).st_size
    files = 0
    for folder, dirs, names in os.walk(box):
        for name in (*dirs, *names):
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
            files += 1
        if total > MAX_BUILD_BYTES or files > MAX_BUILD_FILES:
            return True
    return False


def _tail(log: BinaryIO) -> str:
    log.flush()
    size = log.seek(0, os.SEEK_END)
    log.seek(max(0, size - LOG_MAX_BYTES))
    data = log.read(LOG_MAX_BYTES)
    text = data.decode("utf-8", errors="replace")
    if size > LOG_MAX_BYTES:
        text = "[… earlier output cut …]\n" + text.partition("\n")[2]
    return text


def _read_pdf(work_fd: int, name: str) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=work_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BUILD_BYTES:
            return None
        data = handle.read(MAX_BUILD_BYTES + 1)
    return data if data.startswith(b"%PDF-") and len(data) <= MAX_BUILD_BYTES else None


# --- What is installed


def _which(program: str) -> str | None:
    return shutil.which(program, path=SAFE_PATH)


def _missing(*programs: str) -> str | None:
    return next((program for program in programs if _which(program) is None), None)


def _check_timeout(timeout: object) -> None:
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise BuildRefused(f"A build timeout is a whole number of seconds, not {timeout!r}.")


@functools.lru_cache(maxsize=1)
def _sandbox_problem() -> str | None:
    """None if bwrap can start a sandbox here; else why not, in one line."""
    bwrap = _which("bwrap")
    if bwrap is None:
        return "bwrap (bubblewrap) is not installed; drafts are built inside it"
    with tempfile.TemporaryDirectory(prefix="jarvis-build-") as tmp:
        try:
            probe = subprocess.run(
                [*_sandbox_argv(bwrap, Path(tmp), Path(tmp)), "true"],
                env={"PATH": SAFE_PATH, "LANG": "C.UTF-8"},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the bwrap sandbox does not start: {exc}"
    if probe.returncode != 0:
        reason = probe.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"the bwrap sandbox does not start: {reason[-1] if reason else probe.returncode}"
    return None


@functools.lru_cache(maxsize=1)
def _pandoc_version() -> tuple[int, ...]:
    pandoc = _which("pandoc")
    if pandoc is None:
        return ()
    try:
        out = subprocess.run(
            [pandoc, "--version"],
            env={"PATH": SAFE_PATH, "LANG": "C.UTF-8"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        ).stdout.decode("utf-8", errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return ()
    found = re.match(r"pandoc\S*\s+([0-9]+(?:\.[0-9]+)*)", out)
    return tuple(int(part) for part in found.group(1).split(".")) if found else ()
