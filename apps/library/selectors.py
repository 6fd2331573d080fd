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

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404

from apps.accounts.models import HOUSEHOLD_GROUP
from apps.library.index import slice_partitions
from apps.library.models import Document, Source


def shared_sources_q(user) -> Q:
    """Sources shared with `user` by someone else."""
    group_ids = list(user.groups.values_list("id", flat=True))
    household = user.groups.filter(name=HOUSEHOLD_GROUP).exists()
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


def get_document_for(user, pk: int) -> Document:
    # 404, not 403: a document you may not see does not exist for you.
    return get_object_or_404(visible_to(user).select_related("source"), pk=pk)


def get_source_for(user, pk: int) -> Source:
    return get_object_or_404(sources_visible_to(user), pk=pk)


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
