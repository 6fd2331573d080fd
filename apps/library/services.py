"""The library's write path for sources and single files."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction

from apps.accounts.permissions import MANAGE_FOLDER_SOURCES
from apps.core.errors import AlreadyExists, Refused
from apps.library import index
from apps.library.embeddings import Embedder
from apps.library.models import Document, Source
from apps.library.sync import check_folder

UPLOADS_NAME = "Uploads"


def clean_dirs(values: list[str] | None, label: str) -> list[str]:
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
            private_dirs=clean_dirs(
                ["private"] if private_dirs is None else private_dirs, "private dir"
            ),
            unversioned_dirs=clean_dirs(unversioned_dirs, "unversioned dir"),
            skip_dirs=[".obsidian", ".trash", *clean_dirs(skip_dirs, "skipped dir")],
        )
        source.shared_groups.set(chosen)
    return source


def add_file(*, owner, path: Path, embedder: Embedder | None = None) -> Document:
    """Add one local file to the owner's uploads and index it now (`kb add PATH`).
    The same checks as a browser upload; the original is only read."""
    from apps.library.adding import upload
    from apps.library.documents import ingest_document

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Refused(f"{path}: cannot read ({exc.strerror})") from None
    index.require_matching_model()
    added = upload(owner=owner, name=path.name, data=data)
    if added.existing:
        return added.existing[0]
    if added.document is None:
        raise Refused(f"{path.name}: {added.error}")
    return ingest_document(added.document, embedder=embedder)
