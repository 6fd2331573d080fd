"""Chat folders in the sidebar: a person's own, to group their chats.

Create, rename, delete (the chats go back to the top level), move a chat in
or out, and whether a folder is shown collapsed, kept on the server so it is
the same on every device. Everything is scoped to the owner: another
person's folder or chat is a 404 (the lookups go through `folder_for` and
`selectors.chat_for`), and a chat can only go into its owner's folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Max, QuerySet
from django.shortcuts import get_object_or_404

from apps.chats.models import Chat, Folder
from apps.core.errors import Refused

NAME_CHARS = 80
# A sidebar is not a filing cabinet; past this many the list stops being scannable.
MAX_FOLDERS = 50


def folders_of(user) -> QuerySet[Folder]:
    if not user.is_authenticated or not user.is_active:
        return Folder.objects.none()
    return Folder.objects.filter(owner=user)


def folder_for(user, pk: int) -> Folder:
    # 404, not 403: another person's folder does not exist for you.
    return get_object_or_404(folders_of(user), pk=pk)


def _clean_name(name: str) -> str:
    name = " ".join((name or "").split())
    if not name:
        raise Refused("give the folder a name")
    if len(name) > NAME_CHARS:
        raise Refused(f"a folder's name has at most {NAME_CHARS} characters")
    return name


def folder_create(*, user, name: str) -> Folder:
    name = _clean_name(name)
    with transaction.atomic():
        mine = folders_of(user)
        if mine.count() >= MAX_FOLDERS:
            raise Refused(f"you have {MAX_FOLDERS} folders already; delete one first")
        last = mine.aggregate(last=Max("order"))["last"]
        return Folder.objects.create(owner=user, name=name, order=0 if last is None else last + 1)


def folder_rename(*, folder: Folder, name: str) -> Folder:
    folder.name = _clean_name(name)
    folder.save(update_fields=["name"])
    return folder


def folder_delete(*, folder: Folder) -> int:
    """Remove the folder; its chats stay, at the top level. Returns how many there were."""
    with transaction.atomic():
        count = Chat.objects.filter(folder=folder).update(folder=None)
        folder.delete()
    return count


def folder_collapse_set(*, folder: Folder, collapsed: bool) -> None:
    Folder.objects.filter(pk=folder.pk).update(collapsed=collapsed)
    folder.collapsed = collapsed


def chat_folder_set(*, chat: Chat, folder: Folder | None) -> None:
    """Put `chat` into `folder` (None: back to the top level). The folder
    must be the chat's owner's: a view looks both up as the person."""
    if folder is not None and folder.owner_id != chat.owner_id:
        raise Refused("that folder is not yours")
    # Not `save()`: moving a chat is not a change to it (updated_at orders the list).
    Chat.objects.filter(pk=chat.pk).update(folder=folder)
    chat.folder = folder


@dataclass
class FolderGroup:
    folder: Folder
    chats: list[Chat] = field(default_factory=list)


def sidebar_groups(user, chats: list[Chat]) -> tuple[list[FolderGroup], list[Chat]]:
    """The person's folders, each with its chats (in the list's own order),
    and the chats in no folder. A folder with no chat among `chats` is still
    shown (it can be dropped into)."""
    groups = {f.pk: FolderGroup(folder=f) for f in folders_of(user)}
    loose = []
    for chat in chats:
        group = groups.get(chat.folder_id)
        if group is None:
            loose.append(chat)
        else:
            group.chats.append(chat)
    return list(groups.values()), loose


def sidebar_context(user, chats: list[Chat]) -> dict:
    """What templates/chats/_chat_list.html needs besides the chats."""
    groups, loose = sidebar_groups(user, chats)
    return {"folder_groups": groups, "loose_chats": loose, "folders": [g.folder for g in groups]}
