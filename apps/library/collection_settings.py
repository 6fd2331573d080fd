"""Changing a collection's sharing, cloud policy and folder rules.

Sharing and cloud policy are read at query time, so changing them needs no
write beyond the source row. Private dirs change which documents are
owner-only: their flag is recomputed and their vectors re-filed into the right
partition (from the stored vectors; nothing is re-embedded). Unversioned dirs
change version families, recomputed the same way a sync does.
"""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import transaction

from apps.core.errors import Refused
from apps.library import index
from apps.library.models import Source
from apps.library.services import clean_dirs
from apps.library.sync import refresh_families
from apps.library.walk import under


def collection_update(
    *,
    source: Source,
    sharing: str,
    cloud: str,
    groups: list[Group] | None = None,
    private_dirs: list[str] | None = None,
    unversioned_dirs: list[str] | None = None,
) -> str:
    """Apply the owner's settings; returns a sentence about what else changed."""
    if sharing not in Source.Sharing.values:
        raise Refused("unknown sharing choice")
    if cloud not in Source.Cloud.values:
        raise Refused("unknown cloud policy")
    groups = list(groups or [])
    if sharing == Source.Sharing.GROUPS and not groups:
        raise Refused("choose at least one group to share with")
    notes = []
    with transaction.atomic():
        source.sharing = sharing
        source.cloud = cloud
        source.save(update_fields=["sharing", "cloud"])
        source.shared_groups.set(groups if sharing == Source.Sharing.GROUPS else [])
        if source.is_folder and private_dirs is not None:
            private = clean_dirs(private_dirs, "private dir")
            if private != source.private_dirs:
                source.private_dirs = private
                source.save(update_fields=["private_dirs"])
                moved = _refile_private(source)
                notes.append(f"{moved} documents changed privacy.")
        if source.is_folder and unversioned_dirs is not None:
            unversioned = clean_dirs(unversioned_dirs, "unversioned dir")
            if unversioned != source.unversioned_dirs:
                source.unversioned_dirs = unversioned
                source.save(update_fields=["unversioned_dirs"])
                refresh_families(source)
                notes.append("Version families recomputed.")
    return " ".join(notes)


def _refile_private(source: Source) -> int:
    moved = 0
    for document in source.documents.all():
        private = under(document.path, source.private_dirs)
        if private != document.in_private_dir:
            document.in_private_dir = private
            document.save(update_fields=["in_private_dir"])
            index.repartition(document)
            moved += 1
    return moved
