"""What a local server tells about its models beyond /v1/models, asked by
Check where the list left the context length or image support unknown:
llama.cpp's GET /props (the context the server was started with, whether a
vision projector is loaded) and Ollama's POST /api/show (the model's context
length and its capabilities: "tools", "vision").

A server with neither endpoint costs one refused request each: /api/show is
asked model by model only while it answers, and for at most SHOW_LIMIT models
(a cloud list of hundreds is not walked). A failure here never fails the
check; the field stays unknown."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx

from apps.llm.config import ModelInfo, ProviderConfig, positive
from apps.llm.errors import ProviderError
from apps.llm.http import get_json

PROBE_SECONDS = 5.0
SHOW_LIMIT = 20


async def _asked(config: ProviderConfig, url: str, **kwargs: Any) -> dict | None:
    try:
        answer = await get_json(config, url, purpose="details", **kwargs)
    except ProviderError:
        return None  # not this kind of server (or it failed): the field stays unknown
    return answer if isinstance(answer, dict) else None


def from_props(info: ModelInfo, props: dict) -> ModelInfo:
    """llama.cpp /props: `default_generation_settings.n_ctx` is the context
    the server runs with (it wins over the model's trained length, which the
    server may not give), `modalities.vision` whether images are read."""
    settings = props.get("default_generation_settings")
    settings = settings if isinstance(settings, dict) else {}
    context = next(
        (v for v in (settings.get("n_ctx"), props.get("n_ctx")) if positive(v)),
        info.context_length,
    )
    modalities = props.get("modalities")
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    return replace(
        info,
        context_length=context,
        vision=vision if isinstance(vision, bool) else info.vision,
    )


def from_show(info: ModelInfo, shown: dict) -> ModelInfo:
    """Ollama /api/show: `model_info["<architecture>.context_length"]` and
    `capabilities`; only what the list left unknown is filled in."""
    model_info = shown.get("model_info")
    model_info = model_info if isinstance(model_info, dict) else {}
    context = next(
        (v for k, v in model_info.items() if k.endswith(".context_length") and positive(v)),
        None,
    )
    capabilities = shown.get("capabilities")
    capabilities = capabilities if isinstance(capabilities, list) else None
    return replace(
        info,
        context_length=info.context_length or context,
        tools=info.tools
        if info.tools is not None or capabilities is None
        else "tools" in capabilities,
        vision=info.vision
        if info.vision is not None or capabilities is None
        else "vision" in capabilities,
    )


async def filled_in(
    config: ProviderConfig,
    infos: list[ModelInfo],
    *,
    headers: dict[str, str],
    client: httpx.AsyncClient | None = None,
) -> list[ModelInfo]:
    """`infos` with what /props and /api/show add (see the module's note)."""
    if not any(i.context_length is None or i.vision is None for i in infos):
        return infos
    root = config.base_url.rstrip("/").removesuffix("/v1")
    quick = replace(config, timeout=min(config.timeout, PROBE_SECONDS))
    better = {info.id: info for info in infos}
    if len(infos) == 1:
        # llama.cpp serves one model; /props describes it.
        props = await _asked(quick, root + "/props", headers=headers, client=client)
        if props is not None:
            better[infos[0].id] = from_props(infos[0], props)
    unknown = [i.id for i in better.values() if i.context_length is None or i.vision is None]
    for model_id in unknown[:SHOW_LIMIT]:
        shown = await _asked(
            quick, root + "/api/show", headers=headers, client=client, post={"model": model_id}
        )
        if shown is None:
            break  # not Ollama, or it stopped answering: ask no further
        better[model_id] = from_show(better[model_id], shown)
    return [better[i.id] for i in infos]
