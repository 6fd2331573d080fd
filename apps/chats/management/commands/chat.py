"""manage.py chat: one turn through the same code as the browser.

  chat --user USER [--chat ID] [--model CONNECTION:MODEL]
       [--notes-only | --no-notes-only] [--json] MESSAGE

A new chat unless --chat. Tool calls that need a person (removing a
document) stay pending as cards in the browser, exactly as there.
"""

from __future__ import annotations

import asyncio
import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.commands import user_named
from apps.chats import services
from apps.chats.models import Message
from apps.chats.runner import reply_start
from apps.chats.selectors import chats_of
from apps.core.errors import JarvisError
from apps.llm.selectors import resolve_model


async def _run(answer_id: int, chat_id: int) -> None:
    generation = reply_start(answer_id, chat_id)
    await generation.task


class Command(BaseCommand):
    help = "Send one message as USER and print the reply."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True)
        parser.add_argument("--chat", type=int)
        parser.add_argument("--model", help="CONNECTION:MODEL (default: the person's default)")
        notes = parser.add_mutually_exclusive_group()
        notes.add_argument("--notes-only", dest="notes_only", action="store_true", default=None)
        notes.add_argument("--no-notes-only", dest="notes_only", action="store_false")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("message")

    def handle(self, *args, **options) -> None:
        user = user_named(options["user"], active=True)
        chat = None
        if options["chat"] is not None:
            chat = chats_of(user).filter(pk=options["chat"]).first()
            if chat is None:
                raise CommandError(f"no chat {options['chat']} of {user.username}")
        try:
            if chat is not None and options["model"]:
                services.chat_model_set(user=user, chat=chat, label=options["model"])
            if options["model"] and chat is None:
                resolve_model(user, options["model"])  # refuse before creating a chat
            chat, _question, answer = services.turn_start(
                user=user, chat=chat, text=options["message"], model_label=options["model"] or ""
            )
            if options["notes_only"] is not None:
                services.chat_notes_only_set(chat=chat, notes_only=options["notes_only"])
        except JarvisError as exc:
            raise CommandError(str(exc)) from None
        asyncio.run(_run(answer.pk, chat.pk))
        answer.refresh_from_db()
        chat.refresh_from_db()
        if options["json"]:
            self.stdout.write(json.dumps(_as_json(chat, answer)))
        else:
            self.stdout.write(answer.text)
            for c in answer.citations:
                version = "" if c["is_latest"] else " (older version)"
                self.stdout.write(
                    f"[{c['n']}] {c['title']} — {c['path']} · {c.get('date') or 'undated'}{version}"
                )
            for note in answer.notes:
                self.stdout.write(f"· {note}")
        if answer.status == Message.Status.ERROR:
            raise CommandError("the reply failed (see above)")


def _as_json(chat, answer: Message) -> dict:
    stopped = answer.usage.get("stop_reason") or answer.status
    if answer.status != Message.Status.DONE:
        stopped = answer.status
    return {
        "chat_id": chat.pk,
        "message_id": answer.pk,
        "model": answer.model_label,
        "private": chat.private,
        "reply": answer.text,
        "citations": [
            {k: c.get(k) for k in ("n", "document_id", "path", "date", "is_latest")}
            for c in answer.citations
        ],
        "tool_calls": [
            {"name": a["name"], "arguments": a.get("arguments", ""), "ok": a.get("state") == "ok"}
            for a in answer.activity
        ],
        "stopped_reason": stopped,
    }
