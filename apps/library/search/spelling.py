"""Typo tolerance for the keyword leg, used only where the exact words find
nothing: a question word the keyword index does not hold at all ("Lisbin",
"reccuring") also matches the index's words within one or two edits of it
("lisbon", "recur"), so a name or a rare word typed wrong still reaches its
note by keyword. A word the index holds is never corrected, so a question
spelt right costs one indexed-or-not lookup per word and nothing more.

The vocabulary is the keyword index's own (FTS5's `fts5vocab` over the same
table, so the words are the tokenizer's: folded and Porter-stemmed). Reading
it walks the whole index, so it is read only when a question holds a word the
index lacks, and then reused for ten minutes per process (a word a sync adds
meanwhile is not offered as a correction until then). The question's words
are compared roughly stemmed (common English endings off), and only against
words of a similar length that start with the same letter: typos rarely hit
the first letter, and it keeps the comparison to a few hundred words.
"""

from __future__ import annotations

import time
from collections import defaultdict

from django.db import connection

from apps.library.index.fts import FTS_TABLE

VOCABULARY_TTL = 600.0  # seconds the index's word list is reused (reading it walks the index)
MIN_WORD = 4  # shorter words are too often another word one edit away
MAX_CORRECTIONS = 3  # index words one question word may stand for
_ENDINGS = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly")
_VOCAB = "temp.jarvis_fts_vocab"

_vocabulary: tuple[float, int, dict[tuple[str, int], list[str]]] = (0.0, 0, {})


def _rough_stem(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_WORD - 1:
            return word[: -len(ending)]
    return word


def _words_by_start() -> dict[tuple[str, int], list[str]]:
    """The index's words, by (first letter, length)."""
    global _vocabulary
    checked, connection_id, words = _vocabulary
    connection.ensure_connection()
    raw = connection.connection
    if time.monotonic() - checked <= VOCABULARY_TTL and connection_id == id(raw):
        return words
    raw.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, {FTS_TABLE}, row)"
    )
    grouped: dict[tuple[str, int], list[str]] = defaultdict(list)
    for (term,) in raw.execute(f"SELECT term FROM {_VOCAB}"):
        if len(term) >= MIN_WORD - 1 and term.isalpha():
            grouped[(term[0], len(term))].append(term)
    _vocabulary = (time.monotonic(), id(raw), dict(grouped))
    return _vocabulary[2]


def _distance(a: str, b: str, limit: int) -> int:
    """Edit distance with transpositions (optimal string alignment), or
    limit + 1 once it must exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def corrections(word: str) -> list[str]:
    """Index words within one edit (two for words of eight letters or more)
    of `word`, nearest first."""
    if len(word) < MIN_WORD or not word.isalpha():
        return []
    limit = 2 if len(word) >= 8 else 1
    words = _words_by_start()
    found: list[tuple[int, str]] = []
    for form in dict.fromkeys((word, _rough_stem(word))):
        for length in range(len(form) - limit, len(form) + limit + 1):
            for term in words.get((form[0], length), ()):
                distance = _distance(form, term, limit)
                if distance <= limit:
                    found.append((distance, term))
    ranked = sorted(set(found))
    return list(dict.fromkeys(term for _, term in ranked))[:MAX_CORRECTIONS]


def _held(cursor, word: str) -> bool:
    cursor.execute(f"SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s LIMIT 1", [f'"{word}"'])
    return cursor.fetchone() is not None


def with_corrections(terms: list[str]) -> list[str]:
    """`terms`, and for each one the index does not hold, its corrections."""
    out = list(terms)
    with connection.cursor() as cursor:
        for term in terms:
            if len(term) < MIN_WORD or not term.isalpha() or _held(cursor, term):
                continue
            out.extend(t for t in corrections(term) if t not in out)
    return out
