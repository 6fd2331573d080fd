"""Settings → Claude, Cursor (MCP): tokens are made and revoked by their
person, shown once, stored only as a hash."""

import re

from django.test import Client

from apps.mcp.models import McpToken
from apps.mcp.tokens import token_create, user_for_token


def _token_in(page: str) -> str:
    return re.search(r"<code>(jarvis_[A-Za-z0-9_-]{40,})</code>", page).group(1)


def test_a_new_token_is_shown_once_and_stored_only_as_a_hash(client, owner):
    client.force_login(owner)
    made = client.post("/settings/mcp/tokens/", {"name": "Claude Desktop"})
    assert made.status_code == 302 and made["Location"] == "/settings/mcp/"
    shown = client.get("/settings/mcp/")  # the page after the redirect
    assert "no-store" in shown["Cache-Control"]
    token = _token_in(shown.content.decode())
    row = McpToken.objects.get()
    assert (row.owner, row.name) == (owner, "Claude Desktop")
    assert token not in str(list(McpToken.objects.values()))
    assert user_for_token(token) == owner
    # A reload shows neither the secret again nor a second token.
    again = client.get("/settings/mcp/").content.decode()
    assert token not in again and row.prefix in again
    assert McpToken.objects.count() == 1


def test_a_revoked_token_is_refused_and_only_its_person_revokes_it(client, owner, member):
    row, token = token_create(owner=owner, name="Cursor")
    client.force_login(member)
    assert client.post(f"/settings/mcp/tokens/{row.pk}/revoke/").status_code == 404
    assert user_for_token(token) == owner
    client.force_login(owner)
    client.post(f"/settings/mcp/tokens/{row.pk}/revoke/")
    assert user_for_token(token) is None
    assert "revoked" in client.get("/settings/mcp/").content.decode()


def test_a_disabled_account_s_token_is_refused(owner):
    _, token = token_create(owner=owner, name="t")
    owner.is_active = False
    owner.save()
    assert user_for_token(token) is None


def test_tokens_need_csrf(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post("/settings/mcp/tokens/", {"name": "x"}).status_code == 403
    assert not McpToken.objects.exists()


def test_the_settings_menu_lists_the_mcp_page(client, owner):
    client.force_login(owner)
    page = client.get("/settings/").content.decode()
    assert 'href="/settings/mcp/"' in page and 'href="/settings/memories/"' in page
    assert client.get("/settings/mcp/").status_code == 200
