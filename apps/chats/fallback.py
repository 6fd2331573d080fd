"""With no model (or when the model failed), a question still gets the most
relevant passages, with citations, clearly labelled as search results."""

from __future__ import annotations

from asgiref.sync import sync_to_async

from apps.chats import tools
from apps.chats.models import Message
from apps.chats.reply import Generation
from apps.chats.setup import question_of
from apps.library.search import search

# What a member (not an admin: admins get a link) reads when no model answers.
ASK_AN_ADMIN = "To get answers, ask an admin to connect a model in Admin → Connections."
SEARCH_FALLBACK_HEAD = (
    "**Search results** (no model answered, so these are the most relevant passages):"
)


async def search_fallback(generation: Generation, *, no_model: bool = False) -> None:
    """The most relevant passages, with citations, clearly labelled as search results."""
    passages = await sync_to_async(_fallback_passages, thread_sensitive=False)(generation.pk)
    if no_model:
        generation.status = Message.Status.DONE
    who = "" if generation.configure_link else " " + ASK_AN_ADMIN
    if not passages:
        if no_model:
            generation.text = (
                "No language model is set up yet, and nothing in your library"
                f" matches this question.{who}"
            )
        generation.touch("answer")
        return
    lines = [SEARCH_FALLBACK_HEAD, ""]
    for p in passages:
        r = p.result
        version = "latest" if r.is_latest else f"superseded by {p.superseded_by}"
        excerpt = " ".join(r.text.split())[:400]
        lines.append(
            f"- **{r.title}** ({r.path}, {r.date or 'undated'}, {version}) [{p.n}]: {excerpt}"
        )
    block = "\n".join(lines)
    generation.text = f"{generation.text}\n\n{block}" if generation.text else block
    generation.citations = [p.citation() for p in passages]
    if no_model:
        generation.notes.append(
            "No language model is configured: these are search results, not an answer." + who
        )
    generation.touch("answer", "sources", "notes")


def _fallback_passages(message_id: int) -> list[tools.Passage]:
    answer = Message.objects.select_related("chat", "chat__owner", "parent").get(pk=message_id)
    question = question_of(answer)
    if question is None:
        return []
    ctx = tools.TurnContext(user=answer.chat.owner, chat=answer.chat, cloud=False, notes_only=True)
    # Only passages past the relevance floor: nearest neighbours of an
    # unrelated question are not "the most relevant passages".
    results = search(user=answer.chat.owner, query=question.text, limit=5).relevant
    return [ctx.number(tools.passage_from_result(r, ctx.user)) for r in results]
