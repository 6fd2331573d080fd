"""The keyword index: one FTS5 row per chunk, in columns bm25 weighs apart.

A passage is found by more than its own words. People ask "boiler" of a note
whose body never repeats the word its title and file name carry, or "which
jobs turned me down" of records whose status says `rejected`. So each row has:

- `title`     the document's title, with its other names and summary from
              the frontmatter (`aliases`, `description`) and the acronyms
              it defines ("Extended Project Qualification (EPQ)"): a
              question that uses a note's alias has found the note as surely
              as its title
- `headings`  the section breadcrumb (`Projects › PixelNet`)
- `path`      the folder names and the file name as words, with dates,
              version and copy markers stripped
              (`home/boiler_service_2026-10.md` → `home boiler service`)
- `record`    the record fields, written `category: job_application`,
              `status: rejected`, `entity: Acme`, `tags: remote python`
- `text`      the passage itself

bm25 weighs a title or heading match above a body match (`WEIGHTS`): a word
in a short, descriptive field says more about the passage than the same word
somewhere in its body. The embedded text keeps its header (title, record line,
section) on the vector side; this module is the keyword side only.

Tokenizer: `porter unicode61 remove_diacritics 2`. Case and accents fold
(`Müller` = `muller`, `café` = `cafe`, `jährlich` = `jahrlich`), English words
are stemmed. German compounds are handled at query time
(apps.library.search.query: prefixes and splitting against the index); see
docs/library.md for what that does and does not do.

The whole table can be rebuilt from the stored rows without re-embedding
anything (`rebuild()`, used by the migration and `manage.py reindex --fts`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.db import connection

from apps.library.models import DocumentTag
from apps.library.versions.naming import family_stem

FTS_TABLE = "library_chunk_fts"
COLUMNS = ("title", "headings", "path", "record", "text")
# bm25 weight per column, in COLUMNS order.
WEIGHTS = (4.0, 2.0, 2.0, 2.0, 1.0)
TOKENIZER = "porter unicode61 remove_diacritics 2"

CREATE_SQL = (
    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5({', '.join(COLUMNS)}, tokenize = '{TOKENIZER}')"
)
_INSERT = (
    f"INSERT INTO {FTS_TABLE}(rowid, {', '.join(COLUMNS)}) "
    f"VALUES (%s, {', '.join('%s' for _ in COLUMNS)})"
)


@dataclass(frozen=True)
class DocumentFields:
    """What every chunk of one document carries into its keyword row."""

    title: str
    path: str
    record: str


# Frontmatter fields searched with the title (apps.library.ingest.parsing.frontmatter).
TITLE_EXTRAS = ("x_aliases", "x_description", "x_acronyms")


def title_text(title: str, extra: dict | str | None) -> str:
    """The title column: the title, then the note's aliases and description."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra or "{}")
        except ValueError:
            extra = {}
    extra = extra if isinstance(extra, dict) else {}
    parts = [title or ""]
    parts += [str(extra[key]) for key in TITLE_EXTRAS if extra.get(key)]
    return "\n".join(p for p in parts if p)


def path_words(path: str) -> str:
    """Folder names and the file's name as words: dates, version and copy
    markers stripped, separators become spaces. A name that is only a date
    contributes nothing."""
    pure = PurePosixPath(path)
    folders = [part for part in pure.parent.parts if part not in ("", ".", "/")]
    words = [*folders, family_stem(pure.stem)]
    return " ".join(re.sub(r"[\W_]+", " ", w).strip() for w in words if w).strip()


def record_line(*, category: str, status: str, entity: str, tags: Iterable[str]) -> str:
    lines = [
        f"{name}: {value}"
        for name, value in (("category", category), ("status", status), ("entity", entity))
        if value
    ]
    tags = sorted(t for t in tags if t)
    if tags:
        lines.append("tags: " + " ".join(tags))
    return "\n".join(lines)


def document_fields(document, tags: Iterable[str] | None = None) -> DocumentFields:
    if tags is None:
        tags = document.tag_rows.values_list("tag", flat=True) if document.pk else []
    return DocumentFields(
        title=title_text(document.title or "", document.extra),
        path=path_words(document.path or ""),
        record=record_line(
            category=document.category,
            status=document.record_status,
            entity=document.entity,
            tags=tags,
        ),
    )


def insert_rows(rows: Sequence[tuple[int, DocumentFields, str, str]]) -> None:
    """Write keyword rows: (chunk id, its document's fields, section, text).
    Runs in the caller's transaction."""
    if not rows:
        return
    with connection.cursor() as cursor:
        cursor.executemany(
            _INSERT,
            [
                (chunk_id, fields.title, section, fields.path, fields.record, text)
                for chunk_id, fields, section, text in rows
            ],
        )


def insert_chunks(chunks: Sequence) -> None:
    """Keyword rows for Chunk objects whose `document` is loaded."""
    fields: dict[int, DocumentFields] = {}
    tags: dict[int, list[str]] = defaultdict(list)
    document_ids = {c.document_id for c in chunks}
    if document_ids:
        for document_id, tag in DocumentTag.objects.filter(
            document_id__in=document_ids
        ).values_list("document_id", "tag"):
            tags[document_id].append(tag)
    rows = []
    for chunk in chunks:
        if chunk.document_id not in fields:
            fields[chunk.document_id] = document_fields(chunk.document, tags[chunk.document_id])
        rows.append((chunk.id, fields[chunk.document_id], chunk.section, chunk.text))
    insert_rows(rows)


def rebuild(cursor=None, *, batch: int = 2000) -> int:
    """Drop every keyword row and write them again from the stored chunks and
    documents. Nothing is embedded. Returns how many rows it wrote. Plain SQL
    over the tables, so a migration can run it against any state of the models."""
    own = cursor is None
    cursor = cursor or connection.cursor()
    try:
        cursor.execute(f"DELETE FROM {FTS_TABLE}")
        tags: dict[int, list[str]] = defaultdict(list)
        cursor.execute("SELECT document_id, tag FROM library_documenttag")
        for document_id, tag in cursor.fetchall():
            tags[document_id].append(tag)
        cursor.execute(
            "SELECT id, title, path, category, record_status, entity, extra FROM library_document"
        )
        fields = {
            row[0]: DocumentFields(
                title=title_text(row[1] or "", row[6]),
                path=path_words(row[2] or ""),
                record=record_line(
                    category=row[3] or "",
                    status=row[4] or "",
                    entity=row[5] or "",
                    tags=tags[row[0]],
                ),
            )
            for row in cursor.fetchall()
        }
        written, last = 0, 0
        while True:
            cursor.execute(
                "SELECT id, document_id, section, text FROM library_chunk "
                "WHERE id > %s ORDER BY id LIMIT %s",
                [last, batch],
            )
            chunks = cursor.fetchall()
            if not chunks:
                return written
            last = chunks[-1][0]
            cursor.executemany(
                _INSERT,
                [
                    (cid, fields[did].title, section, fields[did].path, fields[did].record, text)
                    for cid, did, section, text in chunks
                    if did in fields
                ],
            )
            written += len(chunks)
    finally:
        if own:
            cursor.close()


def refresh_document(document) -> None:
    """Rewrite the keyword rows of one document's chunks (its title, path or
    record changed but its text did not). Caller's transaction."""
    chunks = list(document.chunks.only("id", "document_id", "section", "text"))
    ids = [c.id for c in chunks]
    with connection.cursor() as cursor:
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("%s" for _ in batch)
            cursor.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid IN ({marks})", batch)
    for chunk in chunks:
        chunk.document = document
    insert_chunks(chunks)
