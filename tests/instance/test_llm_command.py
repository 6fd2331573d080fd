"""`manage.py llm`: connections add/list, models add/list; keys never printed."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings
from tests.support.processes import manage

KEY = "sk-cli-0123456789abcdefghij5a7e"


def run(*args: str, stdin: str | None = None, monkeypatch=None) -> str:
    out = StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", StringIO(stdin))
    call_command("llm", *args, stdout=out)
    return out.getvalue()


def add_cloud(monkeypatch) -> str:
    return run(
        "connections", "add", "--name", "openai", "--kind", "openai",
        "--base-url", "https://api.openai.example/v1", "--api-key-stdin",
        "--location", "cloud",
        stdin=KEY + "\n", monkeypatch=monkeypatch,
    )  # fmt: skip


def test_connections_add_prints_the_id_and_encrypts_the_key(db, monkeypatch):
    out = add_cloud(monkeypatch)
    connection = Connection.objects.get(name="openai")
    assert out.strip() == str(connection.pk)
    assert connection.api_key == KEY and KEY not in connection.api_key_encrypted
    assert connection.is_cloud


def test_location_defaults_to_cloud_and_no_key_is_fine(db):
    run(
        "connections",
        "add",
        "--name",
        "box",
        "--kind",
        "openai",
        "--base-url",
        "http://box:8080/v1",
    )
    box = Connection.objects.get(name="box")
    assert box.location == "cloud" and box.api_key is None


def test_connections_list_masks_keys(db, monkeypatch):
    add_cloud(monkeypatch)
    run(
        "connections", "add", "--name", "ollama", "--kind", "openai",
        "--base-url", "http://localhost:11434/v1", "--location", "local",
    )  # fmt: skip
    out = run("connections", "list")
    assert KEY not in out
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "BASE", "URL", "LOCATION", "ENABLED", "KEY"]
    assert lines[1].split() == [
        "ollama",
        "openai",
        "http://localhost:11434/v1",
        "local",
        "yes",
        "-",
    ]
    assert lines[2].split() == [
        "openai", "openai", "https://api.openai.example/v1", "cloud", "yes", "sk-…5a7e",
    ]  # fmt: skip


def test_bad_input_is_a_command_error(db, monkeypatch):
    with pytest.raises(CommandError, match="base_url"):
        run("connections", "add", "--name", "x", "--kind", "openai", "--base-url", "ftp://x")
    with pytest.raises(CommandError, match="no API key"):
        run(
            "connections", "add", "--name", "x", "--kind", "openai", "--base-url", "http://x",
            "--api-key-stdin", stdin="\n", monkeypatch=monkeypatch,
        )  # fmt: skip
    with pytest.raises(CommandError):
        run("connections", "add", "--name", "x", "--kind", "gemini", "--base-url", "http://x")
    assert not Connection.objects.exists()


def test_models_add_and_list(db, monkeypatch):
    add_cloud(monkeypatch)
    run("connections", "add", "--name", "ollama", "--kind", "openai", "--base-url", "http://h:1")
    out = run(
        "models", "add", "--connection", "ollama", "--model", "qwen3:32b",
        "--tools", "--context", "32768", "--default",
    )  # fmt: skip
    assert "ollama:qwen3:32b" in out
    run("models", "add", "--connection", "openai", "--model", "gpt-x", "--vision")
    qwen = ModelEntry.objects.get(model_id="qwen3:32b")
    assert qwen.supports_tools and not qwen.supports_vision and qwen.context_length == 32768
    assert instance_settings().default_model == qwen
    listing = run("models", "list")
    assert KEY not in listing
    lines = listing.splitlines()
    assert lines[0].split() == [
        "LABEL",
        "DISPLAY",
        "NAME",
        "TOOLS",
        "VISION",
        "CONTEXT",
        "ENABLED",
        "DEFAULT",
    ]
    assert lines[1].split() == ["ollama:qwen3:32b", "-", "yes", "no", "32768", "yes", "*"]
    assert lines[2].split() == ["openai:gpt-x", "-", "no", "yes", "?", "yes"]


def test_models_add_errors(db):
    run("connections", "add", "--name", "ollama", "--kind", "openai", "--base-url", "http://h:1")
    with pytest.raises(CommandError, match="no connection named 'nope'"):
        run("models", "add", "--connection", "nope", "--model", "m")
    run("models", "add", "--connection", "ollama", "--model", "m")
    with pytest.raises(CommandError, match="already in the catalogue"):
        run("models", "add", "--connection", "ollama", "--model", "m")
    with pytest.raises(CommandError, match="--context"):
        run("models", "add", "--connection", "ollama", "--model", "n", "--context", "-1")


def test_reencrypt(db, monkeypatch, settings):
    from cryptography.fernet import Fernet

    from apps.core import crypto

    add_cloud(monkeypatch)
    settings.FERNET_KEYS = [Fernet.generate_key().decode(), crypto.key_file().read_text().strip()]
    assert "re-encrypted 1 key(s)" in run("connections", "reencrypt")
    settings.FERNET_KEYS = settings.FERNET_KEYS[:1]
    assert Connection.objects.get(name="openai").api_key == KEY


@pytest.mark.django_db(transaction=True)
def test_a_real_process_a_taken_name_exits_1():
    first = manage(
        "llm", "connections", "add", "--name", "ollama", "--kind", "openai",
        "--base-url", "http://localhost:11434/v1", "--location", "local",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == str(Connection.objects.get(name="ollama").pk)
    again = manage(
        "llm", "connections", "add", "--name", "Ollama", "--kind", "openai",
        "--base-url", "http://localhost:11434/v1", "--api-key-stdin",
    input=KEY + "\n")  # fmt: skip
    assert again.returncode == 1
    assert "a connection named 'Ollama' already exists" in again.stderr
    assert KEY not in again.stderr + again.stdout
    assert Connection.objects.count() == 1
