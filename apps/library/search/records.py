"""Everyday words reach records: the record leg.

People ask "which jobs turned me down?" of notes whose frontmatter says
`status: rejected` and whose body says "went with someone else". The keyword
leg cannot bridge that, and the semantic leg only sometimes does. So a
question is read for record values (apps.library.schema: the categories,
statuses and entities in the person's visible records) and for the everyday
ways of saying a status (`STATUS_GROUPS`, one small table), and the documents
carrying a matching value form a third ranking, fused like the other two:

- a status named or paraphrased ("finished", "put on hold", "said no",
  "haven't heard back") matches records whose status is in that group;
- a category named by one of its words ("jobs" → `job_application`,
  "universities" → `university_application`, "projects" → `project`) narrows
  those to that category (a category word alone boosts nothing: "my job hunt"
  is not a question about every job application);
- an entity named by its distinctive words ("Kestrel" → `Kestrel Labs`).

Within the leg, matching documents are ordered by how close their best
passage is to the question (exact cosine over the few documents that match,
the privacy filter in the same SQL); one passage per document.

Only values that exist in the records this person may see count, so a
question's "done" does nothing in a library without a `done` record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from django.db import connection

from apps.library.index.tables import emb_table
from apps.library.search.query import pool_sql

RECORD_DEPTH = 20  # documents the record leg contributes to the fusion


@dataclass(frozen=True)
class StatusGroup:
    """Statuses that mean the same, and the everyday phrases that name them."""

    name: str
    statuses: frozenset[str]
    phrases: tuple[str, ...]  # regular expressions, matched on word boundaries


def _group(name: str, statuses: str, *phrases: str) -> StatusGroup:
    values = frozenset(s.strip() for s in statuses.split(",") if s.strip())
    return StatusGroup(name, values, tuple(phrases) + tuple(re.escape(v) for v in values))


# The one table of status synonyms (documented in docs/library.md). A record's
# status matches a group when it is one of the group's statuses; a question
# names a group by any of its phrases or statuses. Groups may share statuses:
# an application at interview stage is still waiting for an answer.
STATUS_GROUPS: tuple[StatusGroup, ...] = (
    _group(
        "done",
        "done, finished, complete, completed, built, closed",
        r"finish(ed|ing)?",
        r"complet(e|ed|ion)",
        r"(get|got|been) built",
        r"wrapped up",
    ),
    _group(
        "in progress",
        "in progress, ongoing, underway, started, active",
        r"under ?way",
        r"how far along",
        r"working on",
        r"on ?going",
    ),
    _group(
        "on hold",
        "on hold, paused, stalled, shelved, blocked",
        r"(put|is|been|are) on hold",
        r"paus(e|ed|ing)",
        r"holding (it |things |us |this )?up",
        r"held up",
        r"stuck",
    ),
    _group("planning", "planning, planned, idea, proposed", r"plann(ed|ing)"),
    _group(
        "accepted",
        "accepted, hired, successful, approved",
        r"got the (job|place|role)",
        r"got in",
        r"said yes",
        r"accept(ed)?",
    ),
    _group("offer", "offer, offered, offers", r"offer(s|ed)?", r"made (me|him|her|us) an offer"),
    _group(
        "rejected",
        "rejected, declined, unsuccessful, refused, turned down",
        r"reject(ed|ion|ions)?",
        r"turn(ed)? (me |him |her |us |them )?down",
        r"(said|say|says|saying) no",
        r"knock(ed)? back",
        r"didn'?t get",
        r"not successful",
    ),
    _group(
        "pending",
        "pending, applied, submitted, waiting, awaiting, interview, interviewing, shortlisted",
        r"wait(ing)? (for|on) (an? )?(answer|reply|decision|response)",
        r"(heard|hear) back",
        r"(got|get|getting) back to",
        r"no (answer|reply|decision|response) yet",
        r"still waiting",
    ),
    _group("interview", "interview, interviewing, shortlisted", r"interview(s|ed|ing)?"),
    _group(
        "withdrawn",
        "withdrawn, withdrew, cancelled, canceled",
        r"withdr(a|e)w(n)?",
        r"(pull|pulled|pulling) out",
        r"(drop|dropped|dropping) out",
        r"(back|backed|backing) out",
        r"(step|stepped|stepping) (out|back|away)",
        r"call(ed)? off",
    ),
    _group(
        "abandoned",
        "abandoned, dropped, given up",
        r"abandon(ed)?",
        r"gave up",
        r"given up",
    ),
)

_COMPILED = [
    (group, re.compile(r"\b(" + "|".join(group.phrases) + r")\b", re.I)) for group in STATUS_GROUPS
]

# Words of entity names that say nothing on their own ("University of Leeds").
_GENERIC_ENTITY_WORDS = frozenset(
    """the of and for ltd limited plc inc llc gmbh co company group university college
    school council district labs lab services service centre center""".split()  # noqa: SIM905
)


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


@dataclass
class RecordMatch:
    """What a question names among the person's record values."""

    statuses: set[str] = field(default_factory=set)  # lower-case status values
    categories: set[str] = field(default_factory=set)
    entities: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.statuses or self.categories or self.entities)


@dataclass
class RecordValues:
    categories: set[str]
    statuses: set[str]
    entities: set[str]


def record_values(pools) -> RecordValues:
    """The categories, statuses and entities of the records in `pools` (lower
    case). A partial index holds only documents with record fields, so this
    reads the records, not the whole library."""
    in_pools, params = pool_sql(pools, chunks=False)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT lower(d.category), lower(d.record_status), lower(d.entity) "
            "FROM library_document d INDEXED BY library_doc_records "
            "WHERE NOT (d.category = '' AND d.entity = '' AND d.record_status = '') "
            f"AND {in_pools} AND d.status = 'ready'",
            params,
        )
        rows = cursor.fetchall()
    return RecordValues(
        categories={r[0] for r in rows if r[0]},
        statuses={r[1] for r in rows if r[1]},
        entities={r[2] for r in rows if r[2]},
    )


def match_question(question: str, values: RecordValues) -> RecordMatch:
    text = " ".join(question.lower().replace("’", "'").split())
    words = {_singular(w) for w in _words(text)}
    match = RecordMatch()
    for group, pattern in _COMPILED:
        if pattern.search(text):
            match.statuses |= {s for s in values.statuses if s in group.statuses}
    # A status value said outright ("interview", "on hold") counts even when
    # no group lists it.
    for status in values.statuses:
        if re.search(rf"\b{re.escape(status)}\b", text):
            match.statuses.add(status)
    for category in values.categories:
        if words & {_singular(w) for w in _words(category) if len(w) > 2}:
            match.categories.add(category)
    for entity in values.entities:
        distinctive = {w for w in _words(entity) if len(w) > 2} - _GENERIC_ENTITY_WORDS
        if distinctive and distinctive <= words | set(_words(text)):
            match.entities.add(entity)
    return match


def record_leg(question: str, vector: np.ndarray, pools, generation: int) -> list[int]:
    """Chunk ids, best first: one passage per document whose record fields the
    question names. Empty when it names none."""
    if not pools:
        return []
    match = match_question(question, record_values(pools))
    if not match.statuses and not match.entities:
        return []
    in_pools, params = pool_sql(pools)
    documents_in_pools, document_params = pool_sql(pools, chunks=False)
    clauses, values = [], []
    if match.statuses:
        marks = ",".join("%s" for _ in match.statuses)
        status_sql = f"lower(d.record_status) IN ({marks})"
        if match.categories:
            cats = ",".join("%s" for _ in match.categories)
            clauses.append(f"({status_sql} AND lower(d.category) IN ({cats}))")
            values += [*match.statuses, *match.categories]
            if not _exists(documents_in_pools, document_params, clauses[-1], values):
                clauses, values = [status_sql], list(match.statuses)
        else:
            clauses.append(status_sql)
            values += list(match.statuses)
    if match.entities:
        marks = ",".join("%s" for _ in match.entities)
        clauses.append(f"lower(d.entity) IN ({marks})")
        values += list(match.entities)
    sql = (
        "SELECT c.id, c.document_id, e.vector FROM library_chunk c "
        "JOIN library_document d ON d.id = c.document_id "
        f"JOIN {emb_table(generation)} e ON e.chunk_id = c.id "
        f"WHERE {in_pools} AND ({' OR '.join(clauses)})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *values])
        rows = cursor.fetchall()
    if not rows:
        return []
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    scores = matrix @ vector
    best: dict[int, tuple[float, int]] = {}
    for (chunk_id, document_id, _), score in zip(rows, scores, strict=True):
        if document_id not in best or score > best[document_id][0]:
            best[document_id] = (float(score), chunk_id)
    ordered = sorted(best.values(), key=lambda item: -item[0])
    return [chunk_id for _, chunk_id in ordered[:RECORD_DEPTH]]


def _exists(in_pools: str, params: list, clause: str, values: list) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM library_document d WHERE {in_pools} AND {clause} LIMIT 1",
            [*params, *values],
        )
        return cursor.fetchone() is not None
