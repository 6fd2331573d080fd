"""Outside tools in Django admin: an MCP server's Check stores the tools the
real server lists, or refuses the listing with the reason on the page (200
tools, a schema that is not JSON Schema); a token is stored encrypted and
never rendered back; an HTTP tool's template with a placeholder in its host
or a non-public address is refused at save."""

from __future__ import annotations

import sys

import pytest

from apps.toolbox.models import HttpTool, McpServer
from apps.toolbox.services import mcp_server_renamed, schema_problem
from tests.toolbox.conftest import FAKE, stdio_server

pytestmark = pytest.mark.django_db(transaction=True)


def check(admin_client, server: McpServer) -> str:
    response = admin_client.post(f"/admin/toolbox/mcpserver/{server.pk}/check/", follow=True)
    assert response.status_code == 200
    return response.content.decode()


def test_check_lists_and_stores_the_servers_tools(admin_client):
    server = stdio_server()
    page = check(admin_client, server)
    assert "The server fake lists 3 tools: weather, hang, echo_headers." in page
    assert "fake__weather" in page  # the inline shows the stored tools
    assert sorted(server.tools.values_list("name", flat=True)) == [
        "echo_headers",
        "hang",
        "weather",
    ]


def test_a_server_advertising_200_tools_is_refused_with_the_reason_in_admin(admin_client):
    server = stdio_server(None, "--tools", "197")
    page = check(admin_client, server)
    reason = "Refused: the server advertises 200 tools; Jarvis offers at most 50 from one server."
    assert reason in page
    server.refresh_from_db()
    assert server.check_error.startswith(reason)
    assert server.tools.count() == 0
    listing = admin_client.get("/admin/toolbox/mcpserver/").content.decode()
    assert "advertises 200 tools" in listing


def test_an_invalid_input_schema_is_refused_with_the_reason_and_earlier_tools_removed(
    admin_client,
):
    server = stdio_server()
    check(admin_client, server)
    assert server.tools.count() == 3
    server.args = [FAKE, "stdio", "--bad-schema"]
    server.save()
    page = check(admin_client, server)
    assert (
        "Refused: the input schema of the tool &#x27;weather&#x27; is not valid JSON Schema" in page
    )
    assert server.tools.count() == 0  # nothing of a server in a refused state is offered


def test_the_token_is_stored_encrypted_and_never_shown(admin_client):
    token = "very-secret-token-123456"
    response = admin_client.post(
        "/admin/toolbox/mcpserver/add/",
        {
            "name": "remote",
            "transport": "http",
            "url": "http://127.0.0.1:9/mcp",
            "token": token,
            "location": "outside",
            "timeout_seconds": "30",
            "enabled": "on",
            "args": "[]",
            "tools-TOTAL_FORMS": "0",
            "tools-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    server = McpServer.objects.get(name="remote")
    assert server.token == token and token not in server.token_encrypted
    page = admin_client.get(f"/admin/toolbox/mcpserver/{server.pk}/change/").content.decode()
    assert token not in page and "ver…3456" in page


def test_a_stdio_server_needs_a_program_that_exists_and_a_list_of_arguments(admin_client):
    response = admin_client.post(
        "/admin/toolbox/mcpserver/add/",
        {
            "name": "local",
            "transport": "stdio",
            "command": "no-such-program-here",
            "args": '"serve --port 1"',
            "location": "local",
            "timeout_seconds": "30",
            "tools-TOTAL_FORMS": "0",
            "tools-INITIAL_FORMS": "0",
        },
    )
    page = response.content.decode()
    assert "No program &#x27;no-such-program-here&#x27; found" in page
    assert "JSON list of strings" in page
    assert not McpServer.objects.exists()
    response = admin_client.post(
        "/admin/toolbox/mcpserver/add/",
        {
            "name": "local",
            "transport": "stdio",
            "command": sys.executable,
            "args": f'["{FAKE}", "stdio"]',
            "location": "local",
            "timeout_seconds": "30",
            "tools-TOTAL_FORMS": "0",
            "tools-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302
    assert McpServer.objects.get(name="local").args == [FAKE, "stdio"]


def _http_tool(admin_client, template: str, name: str = "weather"):
    return admin_client.post(
        "/admin/toolbox/httptool/add/",
        {
            "name": name,
            "description": "Today's weather.",
            "url_template": template,
            "location": "outside",
            "timeout_seconds": "10",
            "max_kb": "512",
            "enabled": "on",
        },
    )


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("https://{host}/weather?city={city}", "the host must be written out"),
        ("https://api.example.org{path}", "the host must be written out"),
        ("https://api.example.org:{port}/w", "the host must be written out"),
        ("https://{city}.example.org/", "the host must be written out"),
        ("ftp://api.example.org/{city}", "only http and https"),
        ("https://user@api.example.org/{city}", "user name or password"),
        ("http://169.254.169.254/latest/{key}", "169.254.169.254 is not a public address"),
        ("https://api.example.org/w#{city}", "no #fragment"),
    ],
)
def test_a_template_whose_host_is_not_written_out_is_refused_at_save(
    admin_client, template, reason
):
    page = _http_tool(admin_client, template).content.decode()
    assert "Refused:" in page and reason in page
    assert not HttpTool.objects.exists()


def test_a_good_template_is_saved_and_a_name_of_jarvis_own_tools_is_refused(admin_client):
    assert (
        _http_tool(admin_client, "https://api.example.org/weather?city={city}").status_code == 302
    )
    page = _http_tool(admin_client, "https://api.example.org/{q}", name="search_notes")
    assert "one of Jarvis" in page.content.decode()


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {"city": {"type": "string"}}}, ""),
        ({"type": "object", "properties": {"city": {"type": "text"}}}, "is not valid JSON Schema"),
        ({"type": "array"}, 'does not describe an object ("type": "object")'),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://evil.example/s.json"}}},
            "refers to 'https://evil.example/s.json' outside itself",
        ),
        ({"type": "object", "$defs": {"c": {}}, "properties": {"a": {"$ref": "#/$defs/c"}}}, ""),
    ],
)
def test_schema_problems_are_named(schema, problem):
    found = schema_problem(schema)
    assert (problem in found) if problem else found == ""


def test_a_renamed_server_offers_its_tools_under_the_new_name(admin_client):
    server = stdio_server()
    check(admin_client, server)
    server.name = "renamed"
    server.save()
    mcp_server_renamed(server=server)
    assert sorted(server.tools.values_list("exposed_name", flat=True))[0] == "renamed__echo_headers"


@pytest.mark.parametrize("name", ["a__b", "home_", "Home", "1home"])
def test_a_server_name_that_would_make_tool_names_ambiguous_is_refused(admin_client, name):
    response = admin_client.post(
        "/admin/toolbox/mcpserver/add/",
        {"name": name, "transport": "http", "url": "https://tools.example.org/mcp",
         "location": "outside", "timeout_seconds": "30", "args": "[]",
         "tools-TOTAL_FORMS": "0", "tools-INITIAL_FORMS": "0"},
    )  # fmt: skip
    assert response.status_code == 200 and "single _ between them" in response.content.decode()
    assert not McpServer.objects.exists()
