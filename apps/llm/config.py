"""What a model call needs: the endpoint, key and model (`ProviderConfig`),
built from a catalogue entry in one place (`provider_config_for`), and the
tools offered to it (`ToolSpec`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from django.conf import settings

from apps.llm.errors import host_label

if TYPE_CHECKING:
    from apps.instance.models import ModelEntry


@dataclass(frozen=True)
class ProviderConfig:
    kind: str  # "openai" (any OpenAI-compatible server) | "anthropic"
    base_url: str  # "http://localhost:11434/v1", "https://openrouter.ai/api/v1", "https://api.anthropic.com"
    api_key: str | None = field(repr=False)  # never in a repr, so never in a log line
    model: str
    timeout: float = 60.0  # connect, each read, and the wait for the first token
    max_tokens: int = 4096
    # Extra top-level request fields, merged last: {"thinking": {...}} for
    # Anthropic, {"provider": {"data_collection": "deny"}} for OpenRouter.
    extra: dict[str, Any] | None = field(default=None, hash=False)
    # Where the endpoint runs. Unknown is cloud: only a config built from a
    # connection marked local may receive local-only images (apps.llm.stream_chat).
    cloud: bool = True

    @property
    def host(self) -> str:
        return host_label(self.base_url)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON schema ({"type": "object", "properties": ...})


def provider_config_for(entry: ModelEntry, **overrides: Any) -> ProviderConfig:
    """The config to call `entry` with. Raises the connection's JarvisError
    (SecretUndecryptable) when its stored key cannot be read with the current
    Fernet keys; `overrides` set timeout, max_tokens or extra."""
    connection = entry.connection
    config = ProviderConfig(
        kind=connection.kind,
        base_url=connection.base_url,
        api_key=connection.api_key,
        model=entry.model_id,
        timeout=float(settings.CHAT_REQUEST_TIMEOUT_SECONDS),
        cloud=entry.is_cloud,
    )
    return replace(config, **overrides) if overrides else config
