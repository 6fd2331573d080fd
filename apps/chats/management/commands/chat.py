"""manage.py chat: one turn through the same code as the browser.

  chat --user USER [--chat ID] [--model CONNECTION:MODEL]
       [--notes-only | --no-notes-only] [--json] MESSAGE
  chat --user USER --agent PROFILE --dir DIR --mode plan|ask|manual|auto
       [--model CONNECTION:MODEL] [--json] MESSAGE
  chat --user USER --chat ID (--approve all|CALL_ID... | --deny all|CALL_ID...) [--json]

A new chat unless --chat (with --agent, a new agent chat). Tool calls that need
a person (removing a document) stay pending as cards in the browser, exactly
as there; calls waiting for approval are listed in --json as
"pending_approvals", and --approve/--deny answers them and goes on with the turn.
"""

from __future__ import annotations

import asyncio
import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.commands import user_named
from apps.chats import approvals, services
from apps.chats.kinds import STARTERS
from apps.chats.models import Message
from apps.chats.runner import reply_resume, reply_start
from apps.chats.selectors import chats_for
from apps.core.errors import JarvisError
from apps.llm.selectors import model_for


async def _run(answer_id: int, chat_id: int) -> None:
    generation = reply_start(answer_id, chat_id)
    await generation.task


async def _resume(answer_id: int) -> None:
    generation = await reply_resume(answer_id)
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
        parser.add_argument(
            "--agent", metavar="PROFILE", help="start an agent chat on this profile"
        )
        parser.add_argument(
            "--dir", help="the agent chat's project directory on the remote machine"
        )
        parser.add_argument("--mode", choices=["plan", "ask", "manual", "auto"], default="ask")
        answer = parser.add_mutually_exclusive_group()
        answer.add_argument("--approve", nargs="+", metavar="all|CALL_ID")
        answer.add_argument("--deny", nargs="+", metavar="all|CALL_ID")
        parser.add_argument("message", nargs="?")

    def handle(self, *args, **options) -> None:
        user = user_named(options["user"], active=True)
        chat = None
        if options["chat"] is not None:
            chat = chats_for(user=user).filter(pk=options["chat"]).first()
            if chat is None:
                raise CommandError(f"no chat {options['chat']} of {user.username}")
        if options["approve"] or options["deny"]:
            if chat is None:
                raise CommandError("--approve and --deny answer a chat's calls: give --chat ID")
            answer = self._answer_card(user, chat, options)
            asyncio.run(_resume(answer.pk))
            return self._print(chat, answer, options)
        if not options["message"]:
            raise CommandError("write a message (or --approve/--deny with --chat)")
        try:
            if options["agent"]:
                if chat is not None:
                    raise CommandError("--agent starts a new chat: leave out --chat")
                chat = self._agent_chat(user, options)
            if chat is not None and options["model"]:
                services.chat_model_set(user=user, chat=chat, label=options["model"])
            if options["model"] and chat is None:
                model_for(user=user, label=options["model"])  # refuse before creating a chat
            chat, _question, answer = services.turn_start(
                user=user, chat=chat, text=options["message"], model_label=options["model"] or ""
            )
            if options["notes_only"] is not None:
                services.chat_notes_only_set(chat=chat, notes_only=options["notes_only"])
        except JarvisError as exc:
            raise CommandError(str(exc)) from None
        asyncio.run(_run(answer.pk, chat.pk))
        self._print(chat, answer, options)

    def _agent_chat(self, user, options: dict):
        starter = STARTERS.get("agent")
        if starter is None:
            raise CommandError("agent chats are not available on this instance")
        if not options["dir"]:
            raise CommandError("an agent chat needs --dir, its project directory")
        return starter(user=user, options=options)

    def _answer_card(self, user, chat, options: dict) -> Message:
        answer = chat.messages.filter(status=Message.Status.WAITING).order_by("-pk").first()
        card = approvals.waiting_card(answer) if answer is not None else None
        if card is None:
            raise CommandError(f"chat {chat.pk} has no calls waiting for approval")
        chosen = options["approve"] or options["deny"]
        named = None if chosen == ["all"] else set(chosen)
        if options["deny"]:
            asked = {c["id"] for c in card.payload["calls"] if c["verdict"] == "ask"}
            approve = set() if named is None else asked - named
        else:
            approve = named
        try:
            approvals.approvals_resolve(user=user, action=card, approve=approve)
        except JarvisError as exc:
            raise CommandError(str(exc)) from None
        return answer

    def _print(self, chat, answer: Message, options: dict) -> None:
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
    extra = {}
    policy = approvals.policy_for(chat)
    if policy is not None:
        card = approvals.waiting_card(answer) if answer.status == Message.Status.WAITING else None
        asked = [c for c in card.payload["calls"] if c["verdict"] == "ask"] if card else []
        extra = {
            "mode": policy.mode,
            "pending_approvals": [
                {"id": c["id"], "tool": c["name"], "arguments": c["arguments"]} for c in asked
            ],
        }
    return {
        **extra,
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
        # What the page shows under the reply ("Uncited…", "now private…").
        "notes": list(answer.notes),
        "stopped_reason": stopped,
    }
