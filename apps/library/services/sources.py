"""Registering folder sources and changing a collection's settings.

Sharing and cloud policy are read at query time, so changing them needs no
write beyond the source row. Private dirs change which documents are
owner-only: their flag is recomputed and their vectors re-filed into the right
partition (from the stored vectors; nothing is re-embedded). Unversioned dirs
change version families, recomputed the same way a sync does.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.template.defaultfilters import pluralize

from apps.accounts.permissions import MANAGE_FOLDER_SOURCES
from apps.core.datapaths import holds_jarvis_data
from apps.core.errors import AlreadyExists, Refused
from apps.instance.models import validate_ocr_languages
from apps.library.index import tables
from apps.library.ingest.sync import check_folder, refresh_families
from apps.library.ingest.walk import WHOLE_SOURCE
from apps.library.models import Source
from apps.library.paths import under


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


def private_dir_notes(source: Source) -> list[str]:
    """What the person saving a folder source should know about its private
    folders: "." makes everything private; a name that matches no folder on
    disk protects nothing yet (a typo looks exactly like this)."""
    notes = []
    root = Path(source.root_path)
    for folder in source.private_dirs:
        if folder == WHOLE_SOURCE:
            notes.append(
                "Private folder '.' is the whole collection: every document in it is "
                "owner-only and never sent to a cloud model."
            )
        elif not (root / folder).is_dir():
            notes.append(
                f"Warning: private folder '{folder}' matches no folder in {root}; "
                "nothing is private under it until such a folder exists."
            )
    return notes


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
    if holds_jarvis_data(resolved):
        raise Refused(
            f"{path} holds Jarvis's own data ({settings.DATA_DIR}); register a folder that does not"
        )
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
    project_dirs: list[str] | None = None,
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
            project_dirs=clean_dirs(project_dirs, "projects dir"),
            skip_dirs=[".obsidian", ".trash", *clean_dirs(skip_dirs, "skipped dir")],
        )
        source.shared_groups.set(chosen)
    return source


def source_update(
    *,
    source: Source,
    sharing: str,
    cloud: str,
    groups: list[Group] | None = None,
    private_dirs: list[str] | None = None,
    unversioned_dirs: list[str] | None = None,
    project_dirs: list[str] | None = None,
    ocr_languages: str | None = None,
    describe_images: str | None = None,
) -> str:
    """Apply the owner's settings; returns a sentence about what else changed.
    OCR languages and image descriptions apply to files read from then on."""
    if sharing not in Source.Sharing.values:
        raise Refused("unknown sharing choice")
    if cloud not in Source.Cloud.values:
        raise Refused("unknown cloud policy")
    if describe_images is not None and describe_images not in Source.Describe.values:
        raise Refused("unknown choice for describing figures and photos")
    if ocr_languages is not None:
        try:
            validate_ocr_languages(ocr_languages)
        except ValidationError as exc:
            raise Refused(" ".join(exc.messages)) from None
    groups = list(groups or [])
    if sharing == Source.Sharing.GROUPS and not groups:
        raise Refused("choose at least one group to share with")
    notes = []
    with transaction.atomic():
        source.sharing = sharing
        source.cloud = cloud
        fields = ["sharing", "cloud"]
        if ocr_languages is not None:
            source.ocr_languages = ocr_languages
            fields.append("ocr_languages")
        if describe_images is not None:
            source.describe_images = describe_images
            fields.append("describe_images")
        source.save(update_fields=fields)
        source.shared_groups.set(groups if sharing == Source.Sharing.GROUPS else [])
        if source.is_folder and private_dirs is not None:
            private = clean_dirs(private_dirs, "private dir")
            if private != source.private_dirs:
                source.private_dirs = private
                source.save(update_fields=["private_dirs"])
                moved = _refile_private(source)
                notes.append(
                    f"{moved} document{pluralize(moved)} moved in or out of a private folder."
                )
            notes.extend(private_dir_notes(source))
        if source.is_folder and unversioned_dirs is not None:
            unversioned = clean_dirs(unversioned_dirs, "unversioned dir")
            if unversioned != source.unversioned_dirs:
                source.unversioned_dirs = unversioned
                source.save(update_fields=["unversioned_dirs"])
                refresh_families(source)
                notes.append("Version families recomputed.")
        if source.is_folder and project_dirs is not None:
            projects = clean_dirs(project_dirs, "projects dir")
            if projects != source.project_dirs:
                source.project_dirs = projects
                source.save(update_fields=["project_dirs"])
                notes.append("The project registry picks this up on its next refresh.")
    return " ".join(notes)


def _refile_private(source: Source) -> int:
    moved = 0
    for document in source.documents.all():
        private = under(document.path, source.private_dirs)
        if private != document.in_private_dir:
            document.in_private_dir = private
            document.save(update_fields=["in_private_dir"])
            tables.repartition(document)
            moved += 1
    return moved
