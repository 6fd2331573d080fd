"""Admin-defined HTTP tools against a real local web server (tests/fakes/web.py):
a chat turn fills the template and reads the answer as data; an argument that
tries to change the host (`x@evil.com/`, `../`, `//evil`) stays in its one
path segment or query value on the template's origin, or is refused; the SSRF
guard refuses a template that leads to the metadata address; a redirect is not
followed and an answer over the size cap is refused."""

from __future__ import annotations

import json

import pytest

from apps.toolbox.models import HttpTool
from apps.toolbox.url_templates import TemplateError, check_template, fill
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply
from tests.fakes.web import FakeDNS, FakeWeb

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def web(settings):
    with FakeWeb() as fake:
        # The fake is on loopback: exempt it from the public-address rule, as
        # an admin would for a service on the home network.
        settings.FETCH_ALLOW_HOSTS = [fake.host_port]
        yield fake


def http_tool(group, template: str, **fields) -> HttpTool:
    tool = HttpTool.objects.create(
        name=fields.pop("name", "weather"),
        description="Today's weather for a city.",
        url_template=template,
        **fields,
    )
    tool.groups.add(group)
    return tool


def tool_messages(llm) -> list[str]:
    return [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


def call(owner, llm, arguments: dict, name: str = "weather") -> tuple[str, object]:
    llm.queue(Reply(tool_calls=[(name, json.dumps(arguments))]), Reply(text="Done."))
    _, answer = run_turn(owner, "Use the tool")
    return tool_messages(llm)[0], answer


def test_a_chat_turn_fills_the_template_and_reads_the_answer_as_data(
    owner, member, tool_users, local_model, llm, web
):
    web.route(
        "/weather",
        body=json.dumps({"city": "Leeds", "sky": "drizzle"}).encode(),
        content_type="application/json",
    )
    http_tool(tool_users, web.url("/weather?city={city}&units=metric"))
    result, answer = call(owner, llm, {"city": "Leeds"})
    assert web.paths() == ["/weather?city=Leeds&units=metric"]
    assert '"sky": "drizzle"' in result and result.startswith("<retrieved_data>")
    tools = llm.chat_requests[0].json["tools"]
    [spec] = [t["function"] for t in tools if t["function"]["name"] == "weather"]
    assert spec["parameters"]["required"] == ["city"]
    assert [a["state"] for a in answer.activity if a["name"] == "weather"] == ["ok"]

    llm.queue(Reply(text="Hello."))
    run_turn(member, "Hi")  # not in the tool's group
    assert "weather" not in [t["function"]["name"] for t in llm.chat_requests[-1].json["tools"]]


@pytest.mark.parametrize(
    ("city", "sent"),
    [
        ("x@evil.com/", "/weather?city=x%40evil.com%2F"),
        ("//evil.example/", "/weather?city=%2F%2Fevil.example%2F"),
        ("a&units=imperial#frag", "/weather?city=a%26units%3Dimperial%23frag"),
        ("../../admin", "/weather?city=..%2F..%2Fadmin"),
    ],
)
def test_a_query_argument_that_tries_to_change_the_host_stays_one_value(
    owner, tool_users, local_model, llm, web, city, sent
):
    web.route("/weather", body=b"fine", content_type="text/plain")
    http_tool(tool_users, web.url("/weather?city={city}"))
    result, _ = call(owner, llm, {"city": city})
    assert web.paths() == [sent]
    assert web.requests[0].headers["host"] == web.host_port
    assert "fine" in result


@pytest.mark.parametrize(
    ("name", "sent"),
    [
        ("../../etc/passwd", "/files/..%2F..%2Fetc%2Fpasswd"),
        ("//evil.example", "/files/%2F%2Fevil.example"),
        ("@evil.example", "/files/%40evil.example"),
        ("%2e%2e", "/files/%252e%252e"),
    ],
)
def test_a_path_argument_stays_in_its_one_segment(
    owner, tool_users, local_model, llm, web, name, sent
):
    web.route("/files/", body=b"listing", content_type="text/plain")
    http_tool(tool_users, web.url("/files/{name}"), name="files")
    call(owner, llm, {"name": name}, name="files")
    assert web.paths() == [sent]


@pytest.mark.parametrize("name", ["..", "."])
def test_a_dot_segment_is_refused_and_nothing_is_fetched(
    owner, tool_users, local_model, llm, web, name
):
    http_tool(tool_users, web.url("/files/{name}"), name="files")
    result, answer = call(owner, llm, {"name": name}, name="files")
    assert f"Refused: name cannot be '{name}'." in result
    assert web.paths() == []
    assert [a["state"] for a in answer.activity if a["name"] == "files"] == ["error"]


def test_fill_compares_the_origin_and_refuses_unknown_or_missing_arguments():
    template = check_template("https://api.example.org/v1/{kind}?q={q}")
    url = fill(template, {"kind": "x@evil.com:443", "q": "https://evil.com/"})
    assert url == "https://api.example.org/v1/x%40evil.com%3A443?q=https%3A%2F%2Fevil.com%2F"
    with pytest.raises(TemplateError, match="unknown argument host"):
        fill(template, {"kind": "a", "q": "b", "host": "evil.com"})
    with pytest.raises(TemplateError, match="missing argument q"):
        fill(template, {"kind": "a"})
    with pytest.raises(TemplateError, match="must be a string"):
        fill(template, {"kind": {"host": "evil"}, "q": "b"})


def test_a_template_leading_to_the_metadata_address_is_refused_at_call(
    owner, tool_users, local_model, llm, monkeypatch
):
    dns = FakeDNS(monkeypatch)
    dns.add("metadata.example.org", ["169.254.169.254"])
    http_tool(tool_users, "http://metadata.example.org/latest/meta-data/{key}")
    result, _ = call(owner, llm, {"key": "iam"})
    assert "weather failed: refused: metadata.example.org leads to a non-public address" in result


def test_a_template_written_with_the_metadata_address_is_never_offered_or_run(
    owner, tool_users, local_model, llm
):
    # Saved past the admin form (which refuses it): the call is refused all the same.
    http_tool(tool_users, "http://169.254.169.254/latest/meta-data/{key}")
    result, _ = call(owner, llm, {"key": "iam"})
    assert "Unknown tool 'weather'" in result


def test_a_redirect_is_not_followed(owner, tool_users, local_model, llm, web):
    web.redirect("/weather", "http://169.254.169.254/latest/")
    http_tool(tool_users, web.url("/weather?city={city}"))
    result, _ = call(owner, llm, {"city": "Leeds"})
    assert "it answered with a redirect, and an HTTP tool follows none" in result
    assert web.paths() == ["/weather?city=Leeds"]


def test_an_answer_over_the_size_cap_is_refused(owner, tool_users, local_model, llm, web):
    web.route("/weather", body=b"x" * 5000, content_type="text/plain")
    http_tool(tool_users, web.url("/weather?city={city}"), max_kb=1)
    result, _ = call(owner, llm, {"city": "Leeds"})
    assert "weather failed: the answer is larger than 1 KB." in result
