"""`ws/drafts/<id>/`: an open editor hears about new suggestions for its draft."""

from __future__ import annotations

from channels.db import database_sync_to_async

from apps.core.consumers import AuthenticatedConsumer
from apps.drafts.realtime import draft_group
from apps.drafts.selectors import drafts_for


class DraftConsumer(AuthenticatedConsumer):
    async def authorize(self) -> bool:
        self.draft_id = int(self.scope["url_route"]["kwargs"]["draft_id"])
        return await self._owns_draft()

    @database_sync_to_async
    def _owns_draft(self) -> bool:
        return drafts_for(user=self.user).filter(pk=self.draft_id).exists()

    async def on_authenticated(self) -> None:
        # Best effort: an editor that is not told finds a suggestion when it next loads the file.
        await self.join(draft_group(self.draft_id))

    async def receive_json(self, content, **kwargs) -> None:
        pass  # the editor only listens

    async def draft_event(self, event: dict) -> None:
        await self.send_json({k: v for k, v in event.items() if k != "type"})
