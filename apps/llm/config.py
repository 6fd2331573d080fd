"""What a model call needs: the endpoint, key and model (`ProviderConfig`),
built from a catalogue entry in one place (`provider_config_for`), and the
tools offered to it (`ToolSpec`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import httpx
from django.conf import settings

if TYPE_CHECKING:
    from apps.instance.models import ModelEntry


def host_label(base_url: str) -> str:
    """host[:port] of a base URL, without any credentials in it."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        return "the configured server"
    if not url.host:
        return "the configured server"
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{url.port}" if url.port else host


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
class ModelInfo:
    """A model an endpoint lists, with what the endpoint says about it (None:
    it does not say)."""

    id: str
    context_length: int | None = None
    tools: bool | None = None
    vision: bool | None = None

    @classmethod
    def from_entry(cls, entry: dict, key: str = "id") -> ModelInfo | None:
        """Read the fields the common servers use: OpenRouter (context_length,
        supported_parameters, architecture.input_modalities or .modality),
        vLLM (max_model_len), llama.cpp (meta.n_ctx_train), servers that list
        `capabilities` (["tools", "vision"]), Anthropic (no capabilities
        listed). A zero or missing context length is unknown (None)."""
        name = entry.get(key)
        if not isinstance(name, str) or not name:
            return None
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        sources = (
            (entry, "context_length"),
            (entry, "max_model_len"),
            (entry, "context_window"),
            (meta, "n_ctx"),
            (meta, "n_ctx_train"),
        )
        context = next((d[k] for d, k in sources if positive(d.get(k))), None)
        capabilities = entry.get("capabilities")
        capabilities = capabilities if isinstance(capabilities, list) else None
        parameters = entry.get("supported_parameters")
        tools = "tools" in parameters if isinstance(parameters, list) else None
        if tools is None and capabilities is not None:
            tools = "tools" in capabilities
        architecture = entry.get("architecture") or {}
        architecture = architecture if isinstance(architecture, dict) else {}
        modalities = architecture.get("input_modalities", entry.get("input_modalities"))
        vision = "image" in modalities if isinstance(modalities, list) else None
        modality = architecture.get("modality")
        if vision is None and isinstance(modality, str) and "->" in modality:
            vision = "image" in modality.split("->")[0]  # "text+image->text"
        if vision is None and capabilities is not None:
            vision = "vision" in capabilities
        return cls(name, context, tools, vision)


def positive(value: Any) -> bool:
    """A count a server reports: an int above zero (0 is how several say "unknown")."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON schema ({"type": "object", "properties": ...})


# OpenRouter routes a request to one of several providers. A household's text
# goes only to providers that do not keep it for training, and never falls back
# to another provider than the one the model names.
OPENROUTER_HOSTS = ("openrouter.ai",)
OPENROUTER_PRIVACY = {"provider": {"data_collection": "deny", "allow_fallbacks": False}}


def is_openrouter(base_url: str) -> bool:
    host = host_label(base_url).split(":")[0].lower()
    return any(host == name or host.endswith("." + name) for name in OPENROUTER_HOSTS)


# The temperature a small model ("search only": its tool probe wrote the call
# as text) is sent when the admin set none. At llama.cpp's and Ollama's
# default of 0.8, a 1.5B model answered 9 to 11 of the seed benchmark's 45
# questions differently from one run to the next (docs/chat.md); answers from
# the notes should not hang on a dice roll.
SMALL_MODEL_TEMPERATURE = 0.2


def _extra(entry: ModelEntry) -> dict | None:
    """The admin's request options (temperature, repeat penalty, tool_choice…),
    with OpenRouter's privacy routing on top: no option can loosen it; a
    small model's temperature when the admin set none."""
    connection = entry.connection
    extra = dict(getattr(connection, "request_options", None) or {})
    if entry.search_only:
        extra.setdefault("temperature", SMALL_MODEL_TEMPERATURE)
    if is_openrouter(connection.base_url):
        extra.update(OPENROUTER_PRIVACY)
    return extra or None


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
        extra=_extra(entry),
        cloud=entry.is_cloud,
    )
    return replace(config, **overrides) if overrides else config
