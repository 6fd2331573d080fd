"""The version rules as database queries: a newer version exists, a family's members.

Each takes the documents the asker may see (the selectors pass
`visible_to(user)`), so the scoping stays in the selectors."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet

from apps.library.models import Document


def is_versioned(document: Document) -> bool:
    """False for a document that is its own family (an unversioned folder, a
    name that is only a date) or has none."""
    return bool(document.family) and not document.family.startswith("file:")


def newer_version_in(visible: QuerySet[Document]) -> Exists:
    """True for a document with a newer readable version among `visible`. A
    newer version in its owner's private folder is not in anyone else's
    `visible`: for them the newest copy they can read is the latest there is."""
    newer = visible.filter(
        source_id=OuterRef("source_id"),
        family=OuterRef("family"),
        family_position__gt=OuterRef("family_position"),
        status=Document.Status.READY,
    )
    return Exists(newer.exclude(family="").exclude(family__startswith="file:"))


def family_in(visible: QuerySet[Document], document: Document) -> list[Document]:
    """Every readable version of `document` among `visible`, oldest first."""
    if not is_versioned(document):
        return [document]
    members = visible.filter(source=document.source, family=document.family)
    members = members.exclude(status=Document.Status.FAILED)
    # family_position is the order sync worked out (dates, version markers, file times).
    return sorted(members, key=lambda d: (d.family_position, d.pk))
