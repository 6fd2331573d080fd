"""Writes that need the model layer: checking a connection (asking the
endpoint which models it serves) and a person's own default model (only one
they may use)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from asgiref.sync import async_to_sync

from apps.core import crypto
from apps.core.errors import Refused
from apps.instance.models import Connection, ModelEntry
from apps.llm import ModelInfo, TextDelta, ToolCall, ToolSpec, describe_models, stream_chat
from apps.llm.config import ProviderConfig, provider_config_for
from apps.llm.errors import ProviderError, redact
from apps.llm.selectors import models_for

if TYPE_CHECKING:
    from apps.accounts.models import User

logger = logging.getLogger(__name__)


@dataclass
class CheckResult:
    ok: bool
    models: list[str] = field(default_factory=list)  # ids, sorted
    error: str = ""
    found: dict[str, ModelInfo] = field(default_factory=dict)  # id -> what the endpoint says


def connection_check(*, connection: Connection) -> CheckResult:
    """Ask the endpoint which models it serves. Never raises for an endpoint
    failure and never lets the key into the error text."""
    try:
        api_key = connection.api_key
    except crypto.SecretUndecryptable as exc:
        return CheckResult(ok=False, error=str(exc))
    config = ProviderConfig(
        kind=connection.kind, base_url=connection.base_url, api_key=api_key, model=""
    )
    try:
        found = async_to_sync(describe_models)(config)
    except ProviderError as exc:
        # Already redacted by the provider; once more costs nothing.
        error = redact(exc.message or str(exc), [api_key])
    except Exception as exc:  # an unexpected failure still becomes a message, logged below
        error = redact(f"{type(exc).__name__}: {exc}", [api_key])
    else:
        described = {info.id: info for info in found}
        logger.info("checked connection %s: %d models", connection, len(described))
        return CheckResult(ok=True, models=sorted(described), found=described)
    logger.warning("check of connection %s failed: %s", connection, error)
    return CheckResult(ok=False, error=error)


def user_default_model_set(*, user: User, model: ModelEntry | None) -> None:
    """A person's own default; Refused unless they may use it."""
    if model is not None and not models_for(user=user).filter(pk=model.pk).exists():
        raise Refused(f"the model {model.label!r} is not available to you")
    user.default_model = model
    user.save(update_fields=["default_model"])


# One trivial tool and a request to call it: does the model send a real tool
# call? (Many endpoints do not say; "Supports tools" unticked means the model
# gets no tools at all.)
PROBE_TOOL = ToolSpec(
    name="get_time",
    description="Returns the current time.",
    parameters={"type": "object", "properties": {}, "required": []},
)
PROBE_SECONDS = 90.0


PROBE_CALLED, PROBE_AS_TEXT, PROBE_NONE, PROBE_FAILED = "called", "as text", "none", "failed"
PROBE_WORDS = {
    PROBE_CALLED: "answered the tool probe with a tool call; tools ticked.",
    PROBE_AS_TEXT: "wrote the probe's tool call as text; tools ticked, search only "
    "(a small model: offered only the search and the document reader).",
    PROBE_NONE: "did not call the probe's tool; it gets the notes without tools.",
}


def model_probe_tools(*, entry: ModelEntry) -> str:
    """PROBE_CALLED when the model answered a tiny request with a real call of
    the one tool offered, PROBE_AS_TEXT when it wrote the call in its text (a
    shaky tool user: Jarvis reads such calls, but it should get few tools),
    PROBE_NONE when it did neither, PROBE_FAILED when the request failed (the
    endpoint's own words are logged)."""
    config = provider_config_for(entry, max_tokens=48, timeout=PROBE_SECONDS)
    turns = [
        {"role": "user", "blocks": [{"type": "text", "text": "What time is it? Use get_time."}]}
    ]

    async def probe() -> str:
        text = ""
        async for event in stream_chat(
            config, system="Call the tool the user asks for.", turns=turns, tools=[PROBE_TOOL]
        ):
            if isinstance(event, ToolCall):
                return PROBE_CALLED if event.name == PROBE_TOOL.name else PROBE_NONE
            if isinstance(event, TextDelta):
                text += event.text
        return PROBE_AS_TEXT if f'"{PROBE_TOOL.name}"' in text else PROBE_NONE

    try:
        return async_to_sync(probe)()
    except ProviderError as exc:
        logger.warning("tool probe of %s failed: %s", entry, exc.message)
        return PROBE_FAILED


def model_tools_from_probe(*, entry: ModelEntry) -> str:
    """Probe the model (model_probe_tools) and record what the probe showed,
    as Check does: tools ticked for a real call or one written as text, and
    "search only" for the latter. A failed probe changes nothing. Returns
    the probe's outcome (one of the PROBE_* words)."""
    probe = model_probe_tools(entry=entry)
    if probe != PROBE_FAILED:
        entry.supports_tools = probe in (PROBE_CALLED, PROBE_AS_TEXT)
        entry.search_only = probe == PROBE_AS_TEXT
        entry.save(update_fields=["supports_tools", "search_only"])
    return probe
