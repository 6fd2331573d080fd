"""Everything a turn needs, loaded in one synchronous step before streaming:
the person, the chat, the question, the model and its connection, the
prompt, and the conversation so far in provider-neutral form."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from django.utils import timezone

from apps.accounts.memories import memories_for_prompt
from apps.accounts.response_style import response_style_for
from apps.chats import tree
from apps.chats.approvals import policy_refusal
from apps.chats.attachments import expand_images, without_images
from apps.chats.kinds import prompt_parts
from apps.chats.models import Chat, Message
from apps.core.errors import JarvisError
from apps.instance.prompts import system_prompt as instance_prompt
from apps.llm import ProviderConfig, provider_config_for
from apps.llm.selectors import default_model_for, model_for
from apps.llm.transcript import images_of, is_local_only


@dataclass
class TurnSetup:
    user: object
    chat: Chat
    question: Message
    answer: Message
    model: object | None  # instance.ModelEntry
    config: ProviderConfig | None
    cloud: bool
    system: str
    history: list[dict] = field(default_factory=list)
    # The question as the model gets it (attached pictures read, or named for
    # a model that cannot see them).
    question_turns: list[dict] = field(default_factory=list)
    refusal: str = ""  # set when the turn must not run (a private chat on a cloud model…)


NOTES_ONLY = (
    "Answer only from the person's notes, papers and pages, found with your tools. If they "
    "do not contain the answer, say so plainly; do not fill gaps from general knowledge."
)
OWN_KNOWLEDGE = (
    "Search the notes first. If they do not hold the answer you may add general knowledge, "
    "but call use_own_knowledge first and say which parts are not from the notes."
)


LOCAL_IMAGE = (
    "The attached picture is local-only (this chat, its collection or its folder keeps it "
    "off cloud models), so only a local model may see it."
)


def chosen_model(user, chat: Chat):
    if chat.model_label:
        return model_for(user=user, label=chat.model_label)
    return default_model_for(user=user)


def system_prompt(user, chat: Chat, model=None) -> str:
    """The system prompt for `user`'s `chat` on `model`, in layers: the
    instance's (its prompt, the admin's note for this model, the notes rule,
    the date), the person's (answer style, their instructions, what they asked
    Jarvis to remember), the chat's own instructions, then the summary.

    Memories are `user`'s alone, and a cloud model gets only those they marked
    cloud-allowed; no model (or an unknown one) counts as cloud. Enforced here,
    in code: nothing a model or a tool says can change any of these layers."""
    cloud = model is None or model.is_cloud
    # A small model ("search only") gets the compact default; an agent chat's
    # kind brings its own long instructions, so it keeps the full one.
    compact = bool(getattr(model, "search_only", False)) and not chat.is_agent
    parts = [
        instance_prompt(compact=compact),
        (getattr(model, "prompt_note", "") or "").strip(),
        NOTES_ONLY if chat.notes_only else OWN_KNOWLEDGE,
        *prompt_parts(chat),  # what an agent chat kind says about itself (apps.chats.kinds)
        response_style_for(user),
        _labelled("The person's instructions for all their chats:", user.instructions),
        _memories(user, cloud=cloud),
        _labelled("Their instructions for this chat:", chat.instructions),
    ]
    if chat.summary:
        parts.append(f"Summary of the earlier part of this conversation:\n{chat.summary}")
    # What changes from day to day and person to person comes last, so a
    # server's prompt cache keeps everything before it (and the tool list).
    parts.append(f"Today is {timezone.localdate():%A %d %B %Y}. You are talking with {user.name}.")
    return "\n\n".join(p for p in parts if p)


def _labelled(label: str, text: str) -> str:
    text = (text or "").strip()
    return f"{label}\n{text}" if text else ""


def _memories(user, *, cloud: bool) -> str:
    texts = memories_for_prompt(user, cloud=cloud)
    if not texts:
        return ""
    lines = "\n".join(f"- {text}" for text in texts)
    return f"What the person asked you to remember about them:\n{lines}"


def conversation(chat: Chat, *, before: int) -> list[dict]:
    """Earlier turns as provider-neutral turns: the messages on the branch
    leading to message `before` (not other branches: a regenerated answer or
    an edited question is not context), after the summary, without failed
    replies (their text is an error for the person, not context)."""
    turns: list[dict] = []
    for message in after_summary(chat, tree.lineage(chat, before)[:-1]):
        if message.status in (Message.Status.ERROR, Message.Status.INTERRUPTED):
            continue
        if message.role == Message.Role.ASSISTANT and not message.turns and message.text:
            turns.append({"role": "assistant", "blocks": [{"type": "text", "text": message.text}]})
            continue
        turns.extend(message.turns)
    return without_unanswered_calls(without_images(turns))


def after_summary(chat: Chat, path: list[Message]) -> list[Message]:
    """The messages of `path` the summary does not cover."""
    for index, message in enumerate(path):
        if message.pk == chat.summary_upto:
            return path[index + 1 :]
    return path


def without_unanswered_calls(turns: list[dict]) -> list[dict]:
    """Drop a trailing assistant tool call whose result never came (a stopped
    reply, one cut at the round limit): providers refuse an unanswered tool
    call. For the conversation sent to the model and for the transcript a
    reply saves."""
    while (
        turns
        and turns[-1]["role"] == "assistant"
        and any(b["type"] == "tool_call" for b in turns[-1]["blocks"])
    ):
        turns.pop()
    return turns


def load(answer_id: int) -> TurnSetup:
    answer = Message.objects.select_related("chat", "chat__owner", "parent").get(pk=answer_id)
    chat = answer.chat
    user = chat.owner
    question = question_of(answer)
    setup = TurnSetup(
        user=user, chat=chat, question=question, answer=answer, model=None, config=None,
        cloud=False, system=system_prompt(user, chat),
    )  # fmt: skip
    # Every turn start, also a resumed or regenerated one, re-checks the
    # chat's policy (an agent chat whose right to run things was taken away).
    setup.refusal = policy_refusal(chat)
    if setup.refusal:
        return setup
    try:
        model = chosen_model(user, chat)
    except JarvisError as exc:
        setup.refusal = str(exc)
        return setup
    if model is None:
        return setup
    setup.model = model
    setup.cloud = bool(model.is_cloud)
    setup.system = system_prompt(user, chat, model)
    if chat.private and setup.cloud:
        setup.refusal = (
            "This chat has read local-only notes, so it can only continue on a local model."
        )
        return setup
    try:
        config = provider_config_for(model)  # a key the current Fernet keys cannot read: a refusal
    except JarvisError as exc:
        setup.refusal = str(exc)
        return setup
    setup.config = config
    setup.history = conversation(chat, before=question.pk if question else answer.pk)
    if question is not None:
        setup.question_turns = expand_images(
            question.turns, chat=chat, vision=bool(model.supports_vision)
        )
        if setup.cloud and any(is_local_only(b) for b in images_of(setup.question_turns)):
            # apps.llm.stream_chat would refuse it too; this says why in words.
            setup.refusal = LOCAL_IMAGE
    return setup


def question_of(answer: Message) -> Message | None:
    """The person's message `answer` replies to (its parent in the tree)."""
    if answer.parent_id is not None:
        return answer.parent
    # Never linked into a tree (written before it): the message before it.
    return (
        answer.chat.messages.filter(pk__lt=answer.pk, role=Message.Role.USER)
        .order_by("-pk")
        .first()
    )


def today() -> date:
    return timezone.localdate()
