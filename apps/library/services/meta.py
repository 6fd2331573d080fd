"""What the library is told about a document beyond its bytes (`DocumentMeta`):
known metadata that wins over what the parser would guess, and the documents
it replaces. JSON-safe, so the same object travels from the caller that knows
it (arXiv's metadata, a digest entry) through the queue to the ingest."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import date

from apps.library.models import Document


@dataclass(frozen=True)
class DocumentMeta:
    """Known metadata. Empty fields mean "not known": the parser's guess stands.

    `published` is an ISO date (a `date` is accepted and kept as its ISO
    form); `replaces` names documents of the same owner that this one
    supersedes, removed in the transaction that writes it. `url`, `arxiv_id`
    and `site` are set on the document when it is added (the library's
    duplicate checks find a paper by them)."""

    title: str = ""
    authors: str = ""
    doi: str = ""
    published: str = ""
    replaces: tuple[int, ...] = ()
    url: str = ""
    arxiv_id: str = ""
    site: str = ""

    def __post_init__(self) -> None:
        # Frozen: normalise through object.__setattr__ so every copy is JSON-safe.
        if isinstance(self.published, date):
            object.__setattr__(self, "published", self.published.isoformat())
        elif self.published:
            date.fromisoformat(self.published)  # a wrong date fails here, not in the worker
        object.__setattr__(self, "replaces", tuple(int(pk) for pk in self.replaces))

    def to_json(self) -> dict:
        """The fields that are set, as JSON values (what a queued task carries)."""
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in asdict(self).items()
            if value
        }

    @classmethod
    def from_json(cls, data: dict | None) -> DocumentMeta:
        """The inverse of `to_json`; a key it does not know is an error."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise TypeError(f"DocumentMeta has no field {', '.join(sorted(unknown))}")
        return cls(**data)

    @property
    def published_date(self) -> date | None:
        return date.fromisoformat(self.published) if self.published else None

    def date_override(self) -> tuple[date, str] | None:
        """The effective date the pipeline takes instead of resolving one."""
        day = self.published_date
        return (day, Document.DateSource.PUBLISHED) if day else None
