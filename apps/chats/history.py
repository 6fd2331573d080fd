"""Past exchanges as searchable history (the chats list search and the
`search_chat_history` tool). Keyword search over an FTS5 table whose rows
carry their owner and their chat's privacy.

Ranking: exchanges holding every word of the query come before those holding
only some, each group by bm25 (the question weighs more than the answer: it
says what the exchange was about). The chats list shows each chat once, a
chat whose title holds every word first, with a snippet of its best exchange
and the matched words marked."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection

from apps.chats.models import Chat, Message
from apps.library.search import query_terms

TABLE = "chats_exchange_fts"


QUESTION_WEIGHT, ANSWER_WEIGHT = 2.0, 1.0
SNIPPET_WORDS = 14
# Marks FTS5's snippet() puts around matched words: control characters no
# stored text contains, so the split below cannot be fooled by the text.
_OPEN, _CLOSE = "\x02", "\x03"


@dataclass
class PastExchange:
    chat_id: int
    chat_title: str
    message_id: int
    question: str
    answer: str
    # The best-matching stretch of the exchange as (text, matched) pieces, so
    # a template marks matched words without trusting any HTML.
    snippet: list[tuple[str, bool]] = field(default_factory=list)


def snippet_parts(text: str) -> list[tuple[str, bool]]:
    parts: list[tuple[str, bool]] = []
    for piece in text.split(_OPEN):
        if _CLOSE in piece:
            marked, rest = piece.split(_CLOSE, 1)
            parts.append((marked, True))
            if rest:
                parts.append((rest, False))
        elif piece:
            parts.append((piece, False))
    return parts


def index_exchange(*, question: Message, answer: Message) -> None:
    chat = answer.chat
    index_exchange_row(
        answer_id=answer.pk,
        question=question.text,
        answer=answer.text,
        owner_id=chat.owner_id,
        chat_id=chat.pk,
        private=chat.private,
    )


def index_exchange_row(
    *, answer_id: int, question: str, answer: str, owner_id: int, chat_id: int, private: bool
) -> None:
    """The same from plain values (the end of every reply: no model rows to load)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE rowid = %s", [answer_id])
        cursor.execute(
            f"INSERT INTO {TABLE}(rowid, question, answer, owner_id, chat_id, private) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            [answer_id, question, answer, owner_id, chat_id, int(private)],
        )


def _insert(cursor, chat: Chat, question: Message, answer: Message) -> None:
    cursor.execute(
        f"INSERT INTO {TABLE}(rowid, question, answer, owner_id, chat_id, private) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        [answer.pk, question.text, answer.text, chat.owner_id, chat.pk, int(chat.private)],
    )


def index_branch(chat: Chat, exchanges: list[tuple[Message, Message]]) -> None:
    """The chat's searchable history becomes the exchanges of the branch it
    now shows (a regenerated answer or an edited question leaves it; paging
    back brings it back)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE chat_id = %s", [chat.pk])
        for question, answer in exchanges:
            _insert(cursor, chat, question, answer)


def mark_private(chat: Chat) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET private = 1 WHERE chat_id = %s", [chat.pk])


def forget_chat(chat_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE chat_id = %s", [chat_id])


def _matching(user, expression: str, *, exclude_chat, cloud_only, limit) -> list[tuple]:
    snippet = f"snippet({TABLE}, -1, '{_OPEN}', '{_CLOSE}', '…', {SNIPPET_WORDS})"
    sql = (
        f"SELECT rowid, chat_id, question, answer, {snippet} FROM {TABLE} "
        f"WHERE {TABLE} MATCH %s AND owner_id = %s"
    )
    params: list = [expression, user.pk]
    if exclude_chat is not None:
        sql += " AND chat_id != %s"
        params.append(exclude_chat)
    if cloud_only:
        sql += " AND private = 0"
    sql += f" ORDER BY bm25({TABLE}, {QUESTION_WEIGHT}, {ANSWER_WEIGHT}) LIMIT %s"
    params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def search_history(
    user, query: str, *, exclude_chat: int | None = None, cloud_only: bool = False, limit: int = 8
) -> list[PastExchange]:
    """The person's past exchanges matching `query`, most relevant first."""
    terms = query_terms(query)
    if not terms:
        return []
    options = {"exclude_chat": exclude_chat, "cloud_only": cloud_only, "limit": limit}
    rows = _matching(user, " AND ".join(f'"{t}"' for t in terms), **options)
    if len(rows) < limit and len(terms) > 1:
        seen = {row[0] for row in rows}
        some = _matching(user, " OR ".join(f'"{t}"' for t in terms), **options)
        rows += [row for row in some if row[0] not in seen][: limit - len(rows)]
    titles = dict(Chat.objects.filter(pk__in={r[1] for r in rows}).values_list("pk", "title"))
    return [
        PastExchange(
            chat_id=int(chat_id),
            chat_title=titles.get(int(chat_id), "") or f"Chat {chat_id}",
            message_id=rowid,
            question=question,
            answer=answer,
            snippet=snippet_parts(snippet),
        )
        for rowid, chat_id, question, answer, snippet in rows
    ]


@dataclass
class ChatHit:
    chat: Chat
    snippet: list[tuple[str, bool]]


def search_chats(user, query: str, limit: int = 30) -> list[ChatHit]:
    """The person's chats matching `query`, most relevant first: a chat whose
    title holds every word, then by their best exchange; each with a snippet."""
    terms = query_terms(query)
    hits = search_history(user, query, limit=limit * 3)
    best: dict[int, list[tuple[str, bool]]] = {}
    for hit in hits:
        best.setdefault(hit.chat_id, hit.snippet)
    titled = Chat.objects.filter(owner=user)
    for term in terms or [query.strip()[:100]]:
        titled = titled.filter(title__icontains=term)
    by_title = list(titled.order_by("-pk").values_list("pk", flat=True)[:limit])
    ids = list(dict.fromkeys([*by_title, *best]))[:limit]
    chats = {c.pk: c for c in Chat.objects.filter(owner=user, pk__in=ids)}
    return [ChatHit(chats[pk], best.get(pk, [])) for pk in ids if pk in chats]
