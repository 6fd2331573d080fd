"""A chat's messages as a tree, and the branch the person is looking at.

Every message has a parent: a reply's parent is the person's message it
answers, a person's message's parent is the reply before it (None for the
first). Regenerating a reply adds a sibling reply under the same question;
editing a message adds a sibling question (and its reply) under the same
parent. `Chat.leaf` is the newest message of the branch shown; the
conversation (on the page, to the model, in the export) is the path from the
root to it. A chat whose messages were never linked (leaf unset) reads as one
line in id order.

Reads only: moving the leaf is a write (`services`).
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.chats.models import Chat, Message


@dataclass(frozen=True)
class Pager:
    """Where a message stands among its alternatives ("2 of 3")."""

    index: int  # 1-based
    count: int
    previous: int | None  # the sibling before it, or None
    next: int | None


class Tree:
    """The shape of one chat: ids, parents and roles, no message bodies."""

    def __init__(self, rows: list[tuple[int, int | None, str]], *, leaf: int | None) -> None:
        rows = sorted(rows)
        if leaf is None and rows:
            # Never linked: one line in id order, ending with the newest.
            rows = [(pk, prev[0] if prev else None, role) for prev, (pk, _, role) in _pairs(rows)]
            leaf = rows[-1][0]
        self.leaf = leaf
        self.parent: dict[int, int | None] = {pk: parent for pk, parent, _ in rows}
        self.role: dict[int, str] = {pk: role for pk, _, role in rows}
        self.children: dict[int | None, list[int]] = {}
        for pk, parent, _ in rows:
            self.children.setdefault(parent, []).append(pk)

    def __contains__(self, pk: int) -> bool:
        return pk in self.parent

    def path_to(self, pk: int | None) -> list[int]:
        """Ids from the root down to `pk` (inclusive); [] for an unknown id."""
        path: list[int] = []
        while pk is not None and pk in self.parent:
            path.append(pk)
            pk = self.parent[pk]
        path.reverse()
        return path

    def path(self) -> list[int]:
        """The branch shown: root to leaf."""
        return self.path_to(self.leaf)

    def newest_leaf_under(self, pk: int) -> int:
        """Follow the newest child down from `pk`: where paging to `pk` lands."""
        while self.children.get(pk):
            pk = self.children[pk][-1]
        return pk

    def siblings(self, pk: int) -> list[int]:
        """`pk` and its alternatives: the messages of its role under its parent."""
        role = self.role[pk]
        return [s for s in self.children.get(self.parent[pk], []) if self.role[s] == role]

    def pager(self, pk: int) -> Pager | None:
        """Paging among `pk`'s alternatives; None when it has none."""
        siblings = self.siblings(pk)
        if len(siblings) < 2:
            return None
        at = siblings.index(pk)
        return Pager(
            index=at + 1,
            count=len(siblings),
            previous=siblings[at - 1] if at > 0 else None,
            next=siblings[at + 1] if at + 1 < len(siblings) else None,
        )


def _pairs(rows):
    previous = None
    for row in rows:
        yield previous, row
        previous = row


def tree_of(chat: Chat, *, leaf: int | None = None) -> Tree:
    """The chat's tree, showing the branch ending at `leaf` (default: the chat's)."""
    rows = list(Message.objects.filter(chat=chat).values_list("pk", "parent_id", "role"))
    return Tree(rows, leaf=leaf if leaf is not None else chat.leaf_id)


def messages_on(chat: Chat, ids: list[int], *, prefetch: tuple[str, ...] = ()) -> list[Message]:
    """The messages `ids`, in that order."""
    query = Message.objects.filter(chat=chat, pk__in=ids)
    if prefetch:
        query = query.prefetch_related(*prefetch)
    by_id = {m.pk: m for m in query}
    return [by_id[pk] for pk in ids if pk in by_id]


def lineage(chat: Chat, pk: int) -> list[Message]:
    """The messages from the root down to `pk` (inclusive), or [] when `pk` is
    not a message of this chat."""
    return messages_on(chat, tree_of(chat).path_to(pk))


def shown(chat: Chat, *, prefetch: tuple[str, ...] = ()) -> tuple[Tree, list[Message]]:
    """The chat's tree and the messages of the branch shown, root first."""
    tree = tree_of(chat)
    return tree, messages_on(chat, tree.path(), prefetch=prefetch)
