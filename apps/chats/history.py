"""Past exchanges as searchable history (the chats list search and the
`search_chat_history` tool). Keyword search over an FTS5 table whose rows
carry their owner and their chat's privacy."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from apps.chats.models import Chat, Message
from apps.library.search import query_terms

TABLE = "chats_exchange_fts"


@dataclass
class PastExchange:
    chat_id: int
    chat_title: str
    message_id: int
    question: str
    answer: str


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


def search_history(
    user, query: str, *, exclude_chat: int | None = None, cloud_only: bool = False, limit: int = 8
) -> list[PastExchange]:
    terms = query_terms(query)
    if not terms:
        return []
    expression = " OR ".join(f'"{t}"' for t in terms)
    sql = (
        f"SELECT rowid, chat_id, question, answer FROM {TABLE} "
        f"WHERE {TABLE} MATCH %s AND owner_id = %s"
    )
    params: list = [expression, user.pk]
    if exclude_chat is not None:
        sql += " AND chat_id != %s"
        params.append(exclude_chat)
    if cloud_only:
        sql += " AND private = 0"
    sql += f" ORDER BY bm25({TABLE}) LIMIT %s"
    params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    titles = dict(Chat.objects.filter(pk__in={r[1] for r in rows}).values_list("pk", "title"))
    return [
        PastExchange(
            chat_id=int(chat_id),
            chat_title=titles.get(int(chat_id), "") or f"Chat {chat_id}",
            message_id=rowid,
            question=question,
            answer=answer,
        )
        for rowid, chat_id, question, answer in rows
    ]


def search_chats(user, query: str, limit: int = 30) -> list[Chat]:
    """The person's chats whose title or exchanges match `query`."""
    hits = search_history(user, query, limit=limit)
    ids = list(dict.fromkeys(h.chat_id for h in hits))
    by_title = Chat.objects.filter(owner=user, title__icontains=query.strip()[:100]).values_list(
        "pk", flat=True
    )
    ids += [pk for pk in by_title if pk not in ids]
    chats = {c.pk: c for c in Chat.objects.filter(owner=user, pk__in=ids)}
    return [chats[pk] for pk in ids if pk in chats][:limit]
