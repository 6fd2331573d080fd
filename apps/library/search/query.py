"""What a question and its filters become: the words the keyword leg looks
for (stopwords out, FTS syntax made inert, very common words left to the
semantic leg, hyphenated words also joined, German-style compounds split and
matched as prefixes) and the SQL that keeps a leg inside the person's pools
and filters."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import date

from django.db import connection

from apps.library.index.fts import FTS_TABLE
from apps.library.models import DocumentTag
from apps.library.selectors import Pool

FTS_MAX_TERMS = 32


COMMON_TERM_SHARE = 0.05  # a word in more than 5% of chunks is left out of the keyword leg…


COMMON_TERM_FLOOR = 500  # …once it is in more than this many


_STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i
    in is it its me my of on or our that the their them then there these they this to
    was we were what when where which who whom why will with would you your about into
    than any all also just should""".split()  # noqa: SIM905
)


@dataclass
class Filters:
    source_ids: list[int] | None = None
    kinds: list[str] | None = None
    category: str = ""
    status: str = ""
    entity: str = ""
    tags: list[str] = field(default_factory=list)
    date_from: date | None = None
    date_to: date | None = None
    document_ids: list[int] | None = None

    @property
    def narrows_beyond_sources(self) -> bool:
        return bool(
            self.kinds
            or self.category
            or self.status
            or self.entity
            or self.tags
            or self.date_from
            or self.date_to
            or self.document_ids is not None
        )


PREFIX_MIN = 6  # words at least this long also match as the head of a compound
SPLIT_MIN = 8  # words at least this long may be a compound of two indexed words
PART_MIN = 4  # each part of a split compound
# German linking elements between the parts of a compound (Fugenelemente):
# Heizung+s+wartung, Straße+n+bahn, Kind+er+garten.
_LINKS = ("s", "es", "n", "en", "e", "er", "")


def query_terms(text: str) -> list[str]:
    words = [w for w in re.findall(r"\w+", text.lower()) if len(w) > 1 or w.isdigit()]
    # "to-do", "wi-fi", "e-mail" are also written as one word (todo.md, wifi).
    joined = [
        "".join(m.lower().split("-")) for m in re.findall(r"\b\w+(?:-\w+)+\b", text) if len(m) <= 40
    ]
    content = [w for w in words if w not in _STOPWORDS] or words
    return list(dict.fromkeys(content + joined))[:FTS_MAX_TERMS]


@dataclass
class KeywordQuery:
    """The keyword leg's expression parts: each word, a compound's head as a
    prefix, and a compound split into two indexed words (matched together)."""

    terms: list[str]
    prefixes: list[str] = field(default_factory=list)
    splits: list[tuple[str, str]] = field(default_factory=list)

    def expression(self) -> str:
        """An FTS5 expression: words only, each quoted (so `"`, `*`, `NEAR(`,
        `-` or `:` in a question can never be FTS syntax), joined by OR."""
        parts = [f'"{w}"' for w in self.terms]
        parts += [f'"{w}"*' for w in self.prefixes]
        parts += [f'("{a}" AND "{b}")' for a, b in self.splits]
        return " OR ".join(parts)


def fts_query(text: str, terms: list[str] | None = None) -> str:
    """The question's words as an FTS5 expression (each quoted, joined by OR)."""
    return KeywordQuery(query_terms(text) if terms is None else terms).expression()


def _indexed(cursor, word: str, cache: dict[str, bool]) -> bool:
    if word not in cache:
        cursor.execute(
            f"SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s LIMIT 1", [f'"{word}"']
        )
        cache[word] = cursor.fetchone() is not None
    return cache[word]


def compound_split(word: str, cursor, cache: dict[str, bool]) -> tuple[str, str] | None:
    """Two indexed words this one is made of (with a German linking element
    between them), the split with the longest shorter part; None if none.
    `heizungswartung` → (`heizung`, `wartung`) when both occur in the index."""
    best = None
    for cut in range(PART_MIN, len(word) - PART_MIN + 1):
        tail = word[cut:]
        for link in _LINKS:
            head = word[:cut]
            if link:
                if not head.endswith(link):
                    continue
                head = head[: -len(link)]
            if len(head) < PART_MIN or head in _STOPWORDS or tail in _STOPWORDS:
                continue
            if best and min(len(head), len(tail)) <= min(len(best[0]), len(best[1])):
                continue
            if _indexed(cursor, head, cache) and _indexed(cursor, tail, cache):
                best = (head, tail)
    return best


def keyword_query(text: str, terms: list[str]) -> KeywordQuery:
    """`terms` (already pruned of very common words) as the keyword leg's
    query: long words also match as a prefix (the head of a compound, and
    inflections the English stemmer does not know), and a long word the index
    does not hold that is two indexed words run together also matches those
    two words."""
    prefixes = prune_common_prefixes([t for t in terms if len(t) >= PREFIX_MIN and t.isalpha()])
    splits: list[tuple[str, str]] = []
    long_words = [t for t in terms if len(t) >= SPLIT_MIN and t.isalpha()]
    if long_words:
        cache: dict[str, bool] = {}
        with connection.cursor() as cursor:
            for word in long_words:
                if _indexed(cursor, word, cache):
                    continue  # the index has it as one word: nothing to split
                split = compound_split(word, cursor, cache)
                if split:
                    splits.append(split)
    return KeywordQuery(terms=terms, prefixes=prefixes, splits=splits)


_chunk_count: tuple[float, int] = (0.0, 0)


def _indexed_chunks() -> int:
    global _chunk_count
    checked, count = _chunk_count
    if time.monotonic() - checked > 60:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM library_chunk")
            count = cursor.fetchone()[0]
        _chunk_count = (time.monotonic(), count)
    return count


RAREST_DEPTH = 8  # a question of common words only: counted up to this many times the cap


TERM_COUNT_TTL = 60.0  # seconds a word's chunk count is reused (like the chunk count)


TERM_COUNT_ENTRIES = 20_000  # words remembered before the cache starts afresh


_term_counts: dict[tuple[str, int], tuple[float, int]] = {}


def _term_chunks(term: str, cap: int, *, prefix: bool = False) -> int:
    """How many chunks hold `term` (with `prefix`, any word it begins), counted
    up to cap + 1. Questions repeat their words and counting a word costs a
    walk over its chunks, so a count is reused for a minute: a count a minute
    old only decides whether a word is common, which a minute of syncing does
    not change."""
    now = time.monotonic()
    key = (f"{term}*" if prefix else term, cap)
    cached = _term_counts.get(key)
    if cached is not None and now - cached[0] <= TERM_COUNT_TTL:
        return cached[1]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s "
            f"LIMIT {cap + 1})",
            [f'"{term}"*' if prefix else f'"{term}"'],
        )
        count = cursor.fetchone()[0]
    if len(_term_counts) >= TERM_COUNT_ENTRIES:
        _term_counts.clear()
    _term_counts[key] = (now, count)
    return count


def _common_cap() -> int | None:
    """In how many chunks a word is common; None for a small library, which
    keeps every word."""
    cap = max(COMMON_TERM_FLOOR, int(_indexed_chunks() * COMMON_TERM_SHARE))
    return None if _indexed_chunks() <= cap else cap


def prune_common_terms(terms: list[str]) -> list[str]:
    """Leave out words that occur in a large share of all chunks. bm25 gives them
    almost no weight anyway, but an OR over them matches (and scores) a third
    of a big index; the semantic leg still reads the whole question. Small
    libraries keep every word."""
    cap = _common_cap()
    if len(terms) <= 1 or cap is None:
        return terms
    frequency = {term: _term_chunks(term, cap) for term in terms}
    kept = [t for t in terms if frequency[t] <= cap]
    if kept:
        return kept
    # Every word is common: the rarest is kept. Counted only up to the cap
    # they all tie, so they are counted further (a rarer word than the first
    # is also cheaper to score: "return" is in 35,000 of the bench's 100,000
    # chunks, "attribute" in 8,000).
    deeper = cap * RAREST_DEPTH
    return [min(terms, key=lambda t: _term_chunks(t, deeper))]


def prune_common_prefixes(words: list[str]) -> list[str]:
    """The words whose prefix form (`"return"*`) is not common: a word kept
    as not common may still begin a great many ("return" → returns,
    returned, returning: a third of the bench's 100,000 chunks), and every
    match is scored by bm25, for a prefix it weighs at almost nothing. The
    word itself still matches."""
    cap = _common_cap()
    if not words or cap is None:
        return words
    return [w for w in words if _term_chunks(w, cap, prefix=True) <= cap]


# "not remote", "not tagged remote", "weren't fully remote", "without the tag
# draft", "non-urgent", "except #work": the word after a negation (and the
# words that only say how or that it is a tag) is a tag the question leaves out.
_NEGATED = re.compile(
    r"(?:\bnot|n't|\bnever|\bwithout|\bnon|\bexcept|\bexcluding)[\s-]+"
    r"(?:(?:tagged|marked|labell?ed|fully|entirely|completely|quite|totally|the|a|any|"
    r"tag|tags|as|with)\s+)*#?(\w[\w/-]*)",
    re.IGNORECASE,
)


def negated_tags(query: str, pools: list[Pool]) -> list[str]:
    """Tags a question says to leave out ("jobs that weren't fully remote"),
    only those that some document this person may see carries (so "not now"
    leaves nothing out in a library without a `now` tag). A plural also names
    its singular tag ("not drafts" → `draft`)."""
    words = [m.group(1).lower() for m in _NEGATED.finditer(query)]
    if not words or not pools:
        return []
    wanted = set(words) | {w[:-1] for w in words if len(w) > 3 and w.endswith("s")}
    where, params = pool_sql(pools, chunks=False)
    sql = (
        "SELECT DISTINCT t.tag FROM library_documenttag t "
        "JOIN library_document d ON d.id = t.document_id "
        f"WHERE t.tag IN ({','.join('%s' for _ in wanted)}) AND {where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*sorted(wanted), *params])
        return sorted(row[0] for row in cursor.fetchall())


def without_tags(candidates: list, tags: list[str]) -> list:
    """`candidates` (search passages) less those of documents carrying any of `tags`."""
    if not tags or not candidates:
        return candidates
    documents = {c.chunk.document_id for c in candidates}
    tagged = set(
        DocumentTag.objects.filter(document_id__in=documents, tag__in=tags).values_list(
            "document_id", flat=True
        )
    )
    return [c for c in candidates if c.chunk.document_id not in tagged]


def pool_sql(pools: list[Pool], *, chunks: bool = True) -> tuple[str, list]:
    """SQL keeping rows inside `pools` (`d` the document, `c` the chunk). A chunk
    is private when its document is in a private folder or it sits in a section
    its note marks private (the same slices as the vector index). With
    `chunks=False` the query reads documents alone (their record fields, which
    come from the frontmatter, never from a section)."""
    values = ",".join("(%s, %s)" for _ in pools)
    params: list = []
    for pool in pools:
        params += [pool.source_id, 1 if pool.private else 0]
    private = "(d.in_private_dir OR c.private)" if chunks else "d.in_private_dir"
    return f"(d.source_id, {private}) IN (VALUES {values})", params


def _filter_sql(filters: Filters, latest_only: bool) -> tuple[str, list]:
    clauses: list[str] = []
    params: list = []
    if latest_only:
        clauses.append("c.is_latest = 1")
    if filters.kinds:
        clauses.append(f"d.kind IN ({','.join('%s' for _ in filters.kinds)})")
        params += list(filters.kinds)
    for column, value in (
        ("d.category", filters.category),
        ("d.record_status", filters.status),
        ("d.entity", filters.entity),
    ):
        if value:
            clauses.append(f"lower({column}) = lower(%s)")
            params.append(value)
    for tag in filters.tags:
        # Tags are rows: an exact match, never a substring.
        clauses.append(
            "d.id IN (SELECT document_id FROM library_documenttag WHERE tag = lower(%s))"
        )
        params.append(tag.lstrip("#"))
    if filters.date_from or filters.date_to:
        # Undated documents (only a file mtime) have no date to filter on.
        clauses.append("(c.section_date IS NOT NULL OR d.date_source NOT IN ('', 'mtime-weak'))")
    if filters.date_from:
        clauses.append("COALESCE(c.section_date, d.effective_date) >= %s")
        params.append(filters.date_from.isoformat())
    if filters.date_to:
        clauses.append("COALESCE(c.section_date, d.effective_date) <= %s")
        params.append(filters.date_to.isoformat())
    if filters.document_ids is not None:
        ids = list(filters.document_ids) or [0]
        clauses.append(f"d.id IN ({','.join('%s' for _ in ids)})")
        params += ids
    return " AND ".join(clauses), params


def where_sql(pools, filters, latest_only) -> tuple[str, list]:
    pool_where, params = pool_sql(pools)
    extra, extra_params = _filter_sql(filters, latest_only)
    where = pool_where + (f" AND {extra}" if extra else "")
    return where, params + extra_params
