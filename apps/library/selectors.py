"""Reads of the library, always scoped to the person asking.

`visible_to(user)` is the one definition of who may read what; every listing,
search, tool, page and download goes through it (or through
`visible_partitions`, its form for the vector index). Owners see all of their
sources; a shared source is visible read-only to the household or to its
groups, minus its private folders, which stay owner-only whatever the sharing.
Superusers get nothing extra here: admins configure, they do not read.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, Count, Exists, F, OuterRef, Q, QuerySet, When
from django.shortcuts import get_object_or_404

from apps.accounts.models import HOUSEHOLD_GROUP
from apps.core.errors import Refused
from apps.core.ids import parse_id
from apps.library import formats
from apps.library.index.tables import slice_partitions
from apps.library.ingest.parsing.frontmatter import split_frontmatter
from apps.library.ingest.parsing.markdown import BREADCRUMB_SEPARATOR, section_breadcrumbs
from apps.library.ingest.pipeline import content_hash
from apps.library.ingest.storage import original_path
from apps.library.models import Chunk, Document, Source
from apps.library.paths import under
from apps.library.versions.queries import family_in, newer_version_in

# Re-exported for apps that read notes themselves (the project registry), so
# they see a note's sections and folders exactly as the library does.
__all__ = ["BREADCRUMB_SEPARATOR", "section_breadcrumbs", "split_frontmatter", "under"]


def shared_sources_q(user) -> Q:
    """Sources shared with `user` by someone else."""
    groups = list(user.groups.values_list("id", "name"))  # one query: every search asks
    group_ids = [group_id for group_id, _ in groups]
    household = any(name == HOUSEHOLD_GROUP for _, name in groups)
    shared = Q(sharing=Source.Sharing.GROUPS, shared_groups__in=group_ids)
    if household:
        shared |= Q(sharing=Source.Sharing.HOUSEHOLD)
    return shared & ~Q(owner=user)


def sources_visible_to(user) -> QuerySet[Source]:
    if not user.is_authenticated or not user.is_active:
        return Source.objects.none()
    return Source.objects.filter(Q(owner=user) | shared_sources_q(user)).distinct()


def visible_to(user) -> QuerySet[Document]:
    """Every document `user` may read."""
    if not user.is_authenticated or not user.is_active:
        return Document.objects.none()
    shared_ids = Source.objects.filter(shared_sources_q(user)).values("id")
    return Document.objects.filter(
        Q(source__owner=user) | (Q(source_id__in=shared_ids) & Q(in_private_dir=False))
    )


def chunks_visible_to(user, document: Document, *, cloud_only: bool = False) -> QuerySet[Chunk]:
    """The passages of `document` (one `user` may read) that they may see, in
    reading order. A section its note marks private is its owner's alone, and
    never for a cloud model, even inside a shared note."""
    chunks = document.chunks.order_by("ordinal")
    if cloud_only or document.source.owner_id != user.pk:
        chunks = chunks.exclude(private=True)
    return chunks


def has_private_sections(document: Document) -> bool:
    return document.chunks.filter(private=True).exists()


def get_document_for(user, pk: int) -> Document:
    # 404, not 403: a document you may not see does not exist for you.
    return get_object_or_404(visible_to(user).select_related("source"), pk=pk)


def owned_source_for(user, pk: int) -> Source:
    return get_object_or_404(Source.objects.filter(owner=user), pk=pk)


@dataclass(frozen=True)
class Pool:
    """A slice of the index one person may search: a source, private or not."""

    source_id: int
    private: bool

    def partitions(self, latest_only: bool, buckets: int) -> list[int]:
        latest = slice_partitions(self.source_id, self.private, True, buckets)
        if latest_only:
            return latest
        return slice_partitions(self.source_id, self.private, False, buckets) + latest


def visible_pools(user, *, cloud_only: bool = False, source_ids=None) -> list[Pool]:
    """The privacy filter in the form the index understands, computed at query
    time from the sources' current sharing and cloud policy (so a change takes
    effect on the next search, with nothing re-embedded). `cloud_only` keeps
    cloud-allowed sources and never a private folder."""
    pools: list[Pool] = []
    sources = sources_visible_to(user).only("id", "owner_id", "cloud")
    if source_ids is not None:
        sources = sources.filter(id__in=list(source_ids))
    for source in sources:
        if cloud_only and source.cloud != Source.Cloud.ALLOWED:
            continue
        pools.append(Pool(source.pk, private=False))
        if source.owner_id == user.pk and not cloud_only:
            pools.append(Pool(source.pk, private=True))
    return pools


# Newest first by the date people see (Document.shown_date): a file-time
# ("mtime-weak") date is shown as undated, so it sorts with the undated ones,
# below every dated document, as the table reads.
SHOWN_DATE = Case(
    When(Q(date_source="") | Q(date_source=Document.DateSource.MTIME), then=None),
    default=F("effective_date"),
)
LISTING_ORDER = (F("shown_on").desc(nulls_last=True), "-id")


@dataclass
class ListingFilters:
    source: int | None = None
    kind: str = ""
    category: str = ""
    status: str = ""
    entity: str = ""
    tag: str = ""
    latest: bool = False

    @classmethod
    def from_query(cls, query) -> ListingFilters:
        return cls(
            source=parse_id(query.get("collection", "")),
            kind=query.get("kind", "")[:20],
            category=query.get("category", "")[:100],
            status=query.get("status", "")[:100],
            entity=query.get("entity", "")[:200],
            tag=query.get("tag", "").lstrip("#").lower()[:100],
            latest=query.get("latest") in ("1", "on", "true"),
        )

    @property
    def active(self) -> bool:
        return any(
            [self.source, self.kind, self.category, self.status, self.entity, self.tag, self.latest]
        )


# The library's kind filters, each with its kinds (apps.library.formats).
KIND_GROUPS = {group: formats.kinds_in_group(group) for group in formats.groups()}


def newer_version_for(user) -> Exists:
    """True for a document with a newer readable version `user` may see. A
    newer version in its owner's private folder does not count: for everyone
    else the newest copy they can read is the latest there is (the rule:
    apps.library.versions.queries)."""
    return newer_version_in(visible_to(user))


def library_documents(user, filters: ListingFilters) -> QuerySet[Document]:
    """The library listing: what `user` may see, filtered, newest first; each
    with `superseded` (a newer version they may see exists)."""
    documents = visible_to(user).select_related("source", "source__owner")
    documents = documents.annotate(
        superseded=newer_version_for(user),
        shown_on=SHOWN_DATE,
        # A section its note marks private, labelled for its owner only (nobody
        # else sees those sections, nor learns that they exist).
        has_private_sections=Exists(
            Chunk.objects.filter(
                document=OuterRef("pk"), private=True, document__source__owner=user
            )
        ),
    )
    if filters.source:
        documents = documents.filter(source_id=filters.source)
    if filters.kind in KIND_GROUPS:
        documents = documents.filter(kind__in=KIND_GROUPS[filters.kind])
    elif filters.kind:
        documents = documents.filter(kind=filters.kind)
    if filters.category:
        documents = documents.filter(category__iexact=filters.category)
    if filters.status:
        documents = documents.filter(record_status__iexact=filters.status)
    if filters.entity:
        documents = documents.filter(entity__iexact=filters.entity)
    if filters.tag:
        documents = documents.filter(tag_rows__tag=filters.tag)
    if filters.latest:
        documents = documents.filter(
            Q(is_latest=True) | (Q(superseded=False) & Q(status=Document.Status.READY))
        )
    return documents.order_by(*LISTING_ORDER)


def in_flight(user) -> QuerySet[Document]:
    """Documents of `user` still being added or reprocessed (for live status)."""
    return Document.objects.filter(
        source__owner=user, status__in=[Document.Status.PENDING, Document.Status.PARSING]
    ).select_related("source")


def family_of(user, document: Document) -> list[Document]:
    """Every version of `document` that `user` may see, oldest first."""
    return family_in(visible_to(user), document)


def record_categories(user) -> list[tuple[str, int]]:
    rows = (
        visible_to(user)
        .exclude(category="")
        .values_list("category")
        .annotate(n=Count("id"))
        .order_by("category")
    )
    return list(rows)


def facet_values(user, field: str, *, category: str = "") -> list[str]:
    documents = visible_to(user)
    if category:
        documents = documents.filter(category__iexact=category)
    values = documents.exclude(**{field: ""}).values_list(field, flat=True).distinct()
    return sorted(set(values), key=str.lower)[:200]


def collection_owners(user, source_ids) -> dict[int, str]:
    """The owner's name for each of these collections that `user` does not own
    (one query), so two people's "Demo vault" read "Demo vault · Alice" and
    "Demo vault · Bob" wherever collections are listed."""
    rows = (
        sources_visible_to(user)
        .filter(id__in=list(source_ids))
        .exclude(owner=user)
        .select_related("owner")
    )
    return {source.pk: source.owner.name for source in rows}


def indexed_note_text(document: Document, *, max_bytes: int) -> str | None:
    """A note's text as the library indexed it: None when it is not a note,
    its file is over `max_bytes` or gone, or the file on disk has changed
    since (the next sync catches up). Not scoped: `document` was read
    through a scoped selector already."""
    if document.kind != Document.Kind.NOTE:
        return None
    try:
        path = original_path(document)
        if path.stat().st_size > max_bytes:
            return None
        data = path.read_bytes()
    except (OSError, Refused):
        return None
    if content_hash(data) != document.content_hash:
        return None
    return data.decode("utf-8-sig", errors="replace")
