"""The library's write path for sources and single files."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction

from apps.accounts.permissions import MANAGE_FOLDER_SOURCES
from apps.core.errors import AlreadyExists, Refused
from apps.library import index
from apps.library.embeddings import Embedder, get_embedder
from apps.library.ingest import (
    apply_parsed,
    content_hash,
    embed_missing,
    mark_failed,
    parse_bytes,
    prepare,
)
from apps.library.models import Document, DocumentFile, Source
from apps.library.parsing.types import UnreadableDocument
from apps.library.sync import check_folder, refresh_families
from apps.library.walk import SUPPORTED_SUFFIXES

UPLOADS_NAME = "Uploads"


def _clean_dirs(values: list[str] | None, label: str) -> list[str]:
    cleaned = []
    for value in values or []:
        raw = value.strip()
        posix = PurePosixPath(raw.rstrip("/"))
        if not raw or posix.is_absolute() or ".." in posix.parts:
            raise Refused(f"{label} {value!r} must be a folder inside the source, like 'private'")
        if str(posix) not in cleaned:
            cleaned.append(str(posix))
    return cleaned


def resolve_vault_path(path: str) -> Path:
    """A folder registered as a source must exist, be readable and lie inside
    JARVIS_VAULTS_ROOT (symlinks resolved first, so a link cannot escape)."""
    root = Path(settings.VAULTS_ROOT).resolve()
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    if not resolved.is_relative_to(root):
        raise Refused(f"{path} is outside the vaults root {root} (JARVIS_VAULTS_ROOT)")
    check_folder(resolved)
    return resolved


def source_register(
    *,
    actor,
    owner,
    name: str,
    path: str,
    kind: str = Source.Kind.VAULT,
    sharing: str = Source.Sharing.OWNER,
    groups: list[str] | None = None,
    cloud: str = Source.Cloud.LOCAL_ONLY,
    private_dirs: list[str] | None = None,
    unversioned_dirs: list[str] | None = None,
    skip_dirs: list[str] | None = None,
) -> Source:
    """Register a server folder as a source. Only admins and holders of the
    manage-folder-sources permission may; only under JARVIS_VAULTS_ROOT."""
    if not actor.has_perm(MANAGE_FOLDER_SOURCES):
        raise Refused("registering folders needs the 'manage folder sources' permission")
    if kind not in (Source.Kind.VAULT, Source.Kind.INBOX):
        raise Refused("only vault and inbox sources are folders")
    if sharing not in Source.Sharing.values:
        raise Refused(f"sharing must be one of {', '.join(Source.Sharing.values)}")
    if cloud not in Source.Cloud.values:
        raise Refused(f"cloud policy must be one of {', '.join(Source.Cloud.values)}")
    name = name.strip()
    if not name:
        raise Refused("a source needs a name")
    folder = resolve_vault_path(path)
    if Source.objects.filter(owner=owner, name__iexact=name).exists():
        raise AlreadyExists(f"{owner} already has a source named {name!r}")
    chosen = list(Group.objects.filter(name__in=groups or []))
    missing = set(groups or []) - {g.name for g in chosen}
    if missing:
        raise Refused(f"no group named {', '.join(sorted(missing))}")
    if chosen and sharing == Source.Sharing.OWNER:
        sharing = Source.Sharing.GROUPS
    with transaction.atomic():
        source = Source.objects.create(
            owner=owner,
            name=name,
            kind=kind,
            root_path=str(folder),
            sharing=sharing,
            cloud=cloud,
            private_dirs=_clean_dirs(
                ["private"] if private_dirs is None else private_dirs, "private dir"
            ),
            unversioned_dirs=_clean_dirs(unversioned_dirs, "unversioned dir"),
            skip_dirs=[".obsidian", ".trash", *_clean_dirs(skip_dirs, "skipped dir")],
        )
        source.shared_groups.set(chosen)
    return source


def uploads_source(owner) -> Source:
    """The owner's uploads collection (created on first use; cloud-allowed, as
    uploads are things people hand to Jarvis on purpose)."""
    source, _ = Source.objects.get_or_create(
        owner=owner,
        kind=Source.Kind.UPLOADS,
        name=UPLOADS_NAME,
        defaults={"cloud": Source.Cloud.ALLOWED, "private_dirs": []},
    )
    return source


def upload_store_path(source: Source, filename: str) -> Path:
    folder = Path(settings.UPLOADS_DIR) / str(source.owner_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / filename


def add_file(*, owner, path: Path, embedder: Embedder | None = None) -> Document:
    """Copy one file into the owner's uploads and index it (`kb add`).
    The original is only read; Jarvis writes only inside its data dir."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise Refused(
            f"{path.name}: unsupported type (use {', '.join(sorted(SUPPORTED_SUFFIXES))})"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Refused(f"{path}: cannot read ({exc.strerror})") from None
    index.require_matching_model()
    source = uploads_source(owner)
    digest = content_hash(data)
    existing = source.documents.filter(content_hash=digest).first()
    if existing is not None:
        return existing
    rel = _free_name(source, path.name)
    stored = upload_store_path(source, rel)
    stored.write_bytes(data)
    mtime_ns = os.stat(stored).st_mtime_ns
    kind = SUPPORTED_SUFFIXES[suffix]
    document = Document(source=source, kind=kind, content_hash=digest, size=len(data))
    try:
        parsed = parse_bytes(data, kind=kind, filename=rel)
        prepared = prepare(parsed, parsed.title)
        embed_missing(prepared, embedder=embedder or get_embedder(), source=source)
    except UnreadableDocument as exc:
        with transaction.atomic():
            mark_failed(document, source=source, path=rel, reason=str(exc))
            DocumentFile.objects.create(
                document=document, source=source, path=rel, size=len(data), mtime_ns=mtime_ns
            )
        return document
    with transaction.atomic():
        apply_parsed(
            document, source=source, parsed=parsed, prepared=prepared, path=rel, mtime_ns=mtime_ns
        )
        DocumentFile.objects.create(
            document=document, source=source, path=rel, size=len(data), mtime_ns=mtime_ns
        )
    refresh_families(source)
    document.refresh_from_db()
    return document


def _free_name(source: Source, name: str) -> str:
    """`name`, or `name (2)`… if the owner already uploaded a different file so named."""
    stem, suffix = Path(name).stem, Path(name).suffix
    candidate, n = name, 1
    while DocumentFile.objects.filter(source=source, path=candidate).exists():
        n += 1
        candidate = f"{stem} ({n}){suffix}"
    return candidate
