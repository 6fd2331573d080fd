"""`ws/drafts/<id>/`: the owner's open editor hears about a new suggestion;
nobody else can follow someone's draft."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator

from apps.drafts import services
from jarvis_site.asgi import application
from tests.support.sockets import session_headers as headers_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_owner_hears_a_new_suggestion(owner, draft):
    headers = headers_for(owner)

    async def follow():
        communicator = WebsocketCommunicator(
            application, f"/ws/drafts/{draft.pk}/", headers=headers
        )
        connected, _ = await communicator.connect()
        assert connected
        proposal = await sync_to_async(services.proposal_create)(
            draft=draft, filename="letter.md", new_text="Dear Madam,\n"
        )
        event = await communicator.receive_json_from(timeout=5)
        await communicator.disconnect()
        return proposal, event

    proposal, event = async_to_sync(follow)()
    assert event == {"event": "proposal", "proposal_id": proposal.pk, "filename": "letter.md"}


def test_another_person_cannot_follow_the_draft(member, outsider, draft):
    for person in (member, outsider):
        headers = headers_for(person)

        async def attempt(headers=headers):
            communicator = WebsocketCommunicator(
                application, f"/ws/drafts/{draft.pk}/", headers=headers
            )
            connected, code = await communicator.connect()
            return connected, code

        assert async_to_sync(attempt)() == (False, 4404)
