"""Things Jarvis remembers about a person: their approved memories.

The write path and the reads, always for one person. A memory is private to
its person; which of them may reach a cloud model is their choice per memory
(`cloud_allowed`, off by default) and is enforced where the system prompt is
built (apps.chats.setup), never by the prompt's words.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.accounts.models import Memory, User
from apps.core.errors import Refused

MAX_MEMORIES = 50  # each costs tokens in every request of every chat


def clean_memory_text(text: str) -> str:
    text = " ".join((text or "").split())
    if not text:
        raise Refused("a memory needs some text")
    if len(text) > Memory.MAX_CHARS:
        raise Refused(f"a memory is at most {Memory.MAX_CHARS} characters (this is {len(text)})")
    return text


def memories_of(user: User) -> QuerySet[Memory]:
    return Memory.objects.filter(owner=user).order_by("created_at", "id")


def memory_for(user: User, pk: int) -> Memory:
    # 404, not 403: another person's memory does not exist for you.
    return get_object_or_404(memories_of(user), pk=pk)


def memories_for_prompt(user: User, *, cloud: bool) -> list[str]:
    """The texts that may go into `user`'s system prompt: all of them for a
    local model, only the cloud-allowed ones for a cloud model."""
    memories = memories_of(user)
    if cloud:
        memories = memories.filter(cloud_allowed=True)
    return list(memories.values_list("text", flat=True))


def memory_add(*, owner: User, text: str, cloud_allowed: bool = False) -> Memory:
    text = clean_memory_text(text)
    if memories_of(owner).count() >= MAX_MEMORIES:
        raise Refused(f"you already have {MAX_MEMORIES} memories: delete one first")
    existing = memories_of(owner).filter(text__iexact=text).first()
    if existing is not None:
        return existing
    return Memory.objects.create(owner=owner, text=text, cloud_allowed=cloud_allowed)


def memory_update(*, memory: Memory, text: str, cloud_allowed: bool) -> Memory:
    memory.text = clean_memory_text(text)
    memory.cloud_allowed = cloud_allowed
    memory.save(update_fields=["text", "cloud_allowed", "updated_at"])
    return memory


def memory_delete(*, memory: Memory) -> None:
    memory.delete()
