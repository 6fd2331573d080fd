"""What metadata the library actually holds (`kb schema`): Jarvis enforces no
vocabulary, so a typo (`stauts: rejected`) becomes its own key that silently
never matches a filter; listing what is there is how you catch it."""

from __future__ import annotations

from collections import Counter

from django.db.models import Count

from apps.library.models import Document, DocumentTag
from apps.library.selectors import visible_to

NAMED = {"category": "category", "status": "record_status", "entity": "entity"}


def _documents(user):
    return visible_to(user) if user is not None else Document.objects.all()


def schema_keys(*, user=None) -> list[tuple[str, int]]:
    documents = _documents(user)
    counts: Counter[str] = Counter()
    for key, field in NAMED.items():
        counts[key] = documents.exclude(**{field: ""}).count()
    counts["event_date"] = documents.exclude(event_date=None).count()
    counts["tags"] = documents.filter(tag_rows__isnull=False).distinct().count()
    for extra in documents.exclude(extra={}).values_list("extra", flat=True).iterator():
        counts.update(extra.keys())
    return sorted(((k, n) for k, n in counts.items() if n), key=lambda kv: (-kv[1], kv[0]))


def schema_values(key: str, *, user=None) -> list[tuple[str, int]]:
    documents = _documents(user)
    if key in NAMED:
        field = NAMED[key]
        rows = documents.exclude(**{field: ""}).values_list(field).annotate(n=Count("id"))
        return sorted(((str(v), n) for v, n in rows), key=lambda kv: (-kv[1], kv[0]))
    if key == "tags":
        rows = (
            DocumentTag.objects.filter(document__in=documents)
            .values_list("tag")
            .annotate(n=Count("id"))
        )
        return sorted(rows, key=lambda kv: (-kv[1], kv[0]))
    counts: Counter[str] = Counter()
    for extra in documents.exclude(extra={}).values_list("extra", flat=True).iterator():
        if key in extra:
            counts[str(extra[key])] += 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
