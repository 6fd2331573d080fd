"""An optional reranker after fusion: a cross-encoder re-orders the top passages.

Off unless an admin chooses one (instance settings → search: reranker):

- `directory`: a cross-encoder ONNX export in a directory on the server
  (model.onnx and its tokenizer files, e.g. ms-marco-MiniLM-L-6-v2), run here
  by fastembed's TextCrossEncoder. Never downloaded.
- `endpoint`: a `/rerank` endpoint of a configured connection: the Jina/Cohere
  shape that llama.cpp, vLLM and Infinity serve (`{query, documents}` →
  `{results: [{index, relevance_score}]}`) or Hugging Face TEI's
  (`{query, texts}` → `[{index, score}]`). A connection marked cloud only ever
  receives passages from cloud-allowed collections outside private folders and private sections;
  the others keep their fused place.

The top `TOP` fused passages are scored with their document's title and
section (what the embedding model also reads); their new order takes over the
same slots and the same range of fused scores, so everything after fusion
(family expansion, latest-first, per-document limits) works on the reranked
list unchanged. A reranker that fails (endpoint down, bad answer) is logged
and the fused order stands: search never fails because of it.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from dataclasses import dataclass
from typing import Protocol

import httpx

from apps.instance.models import InstanceSettings
from apps.library.index.tables import embed_text
from apps.library.models import Chunk, Source

logger = logging.getLogger(__name__)

TOP = 30  # fused passages the reranker re-orders
TIMEOUT = 10.0  # seconds for an endpoint's answer
PASSAGE_CHARS = 2000  # of each passage sent (cross-encoders read ~512 tokens)
SETTINGS_TTL = 5.0  # seconds the instance's reranker choice is reused between searches


class RerankFailed(Exception):
    pass


class Reranker(Protocol):
    name: str

    def rerank_fused(self, query: str, fused: list) -> list: ...


@dataclass
class _Passage:
    chunk_id: int
    text: str
    shareable: bool  # may reach a cloud service


def _passages(chunk_ids: list[int]) -> dict[int, _Passage]:
    chunks = Chunk.objects.filter(id__in=chunk_ids).select_related("document__source")
    found = {}
    for chunk in chunks:
        document = chunk.document
        shareable = document.source.cloud == Source.Cloud.ALLOWED and not chunk.owner_only
        text = embed_text(document.title, chunk.section, chunk.text)[:PASSAGE_CHARS]
        found[chunk.id] = _Passage(chunk.id, text, shareable)
    return found


class BaseReranker:
    name = "reranker"
    cloud = False  # True: only shareable passages may be sent

    def score(self, query: str, texts: list[str]) -> list[float]:
        raise NotImplementedError

    def rerank_fused(self, query: str, fused: list) -> list:
        """`fused` is [(chunk id, score, legs)], best first. The top TOP are
        re-ordered by the cross-encoder's scores within their own slots."""
        head, tail = fused[:TOP], fused[TOP:]
        passages = _passages([cid for cid, _, _ in head])
        slots = [
            i
            for i, (cid, _, _) in enumerate(head)
            if cid in passages and (passages[cid].shareable or not self.cloud)
        ]
        if len(slots) < 2:
            return fused
        try:
            scores = self.score(query, [passages[head[i][0]].text for i in slots])
        except RerankFailed as exc:
            logger.warning("reranker %s failed, keeping the fused order: %s", self.name, exc)
            return fused
        order = sorted(range(len(slots)), key=lambda k: -scores[k])
        moved = [head[slots[k]] for k in order]
        reranked = list(head)
        for slot, (cid, _, legs) in zip(slots, moved, strict=True):
            reranked[slot] = (cid, head[slot][1], [*legs, "rerank"])
        return reranked + tail


class DirectoryReranker(BaseReranker):
    """A cross-encoder in a local directory, run by fastembed (ONNX on the CPU)."""

    def __init__(self, directory: str, threads: int = 2) -> None:
        self.name = f"cross-encoder in {directory}"
        self.directory = directory
        self._threads = threads
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is None:
            # Imported on first use: only a process that reranks loads fastembed
            # and onnxruntime for it (apps.library.index.onnx_models).
            from apps.library.index import onnx_models

            self._model = onnx_models.cross_encoder(
                key=f"jarvis-rerank/{abs(hash(self.directory)) % 10**12}",
                directory=self.directory,
                threads=self._threads,
            )
        return self._model

    def score(self, query: str, texts: list[str]) -> list[float]:
        try:
            with self._lock:
                return [float(s) for s in self._load().rerank(query, texts, batch_size=32)]
        except Exception as exc:  # a broken model directory: the fused order stands
            raise RerankFailed(f"{type(exc).__name__}: {exc}") from exc


class EndpointReranker(BaseReranker):
    """A `/rerank` endpoint (llama.cpp, vLLM, Infinity, Jina, Cohere; or TEI)."""

    def __init__(
        self, *, base_url: str, api_key: str | None, model: str, api: str, cloud: bool
    ) -> None:
        self.name = f"{base_url}/rerank"
        self.url = f"{base_url.rstrip('/')}/rerank"
        self.api_key = api_key
        self.model = model
        self.api = api
        self.cloud = cloud

    def score(self, query: str, texts: list[str]) -> list[float]:
        if self.api == "tei":
            body: dict = {"query": query, "texts": texts, "truncate": True}
        else:
            body = {"query": query, "documents": texts, "top_n": len(texts)}
            if self.model:
                body["model"] = self.model
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            # No environment proxies or .netrc, no redirects (a redirect would
            # carry the key and the passages elsewhere).
            with httpx.Client(timeout=TIMEOUT, trust_env=False, follow_redirects=False) as client:
                response = client.post(self.url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise RerankFailed(f"{type(exc).__name__} talking to {self.url}") from exc
        if response.status_code != 200:
            raise RerankFailed(f"{self.url} answered HTTP {response.status_code}")
        try:
            return parse_scores(response.json(), len(texts))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise RerankFailed(f"{self.url} answered something else than scores: {exc}") from exc


def parse_scores(data, count: int) -> list[float]:
    """Scores in input order from either answer shape; passages the endpoint
    left out score below every scored one."""
    rows = data["results"] if isinstance(data, dict) else data
    scores = [float("-inf")] * count
    for row in rows:
        index = int(row["index"])
        if not 0 <= index < count:
            raise IndexError(f"index {index} out of range")
        value = row.get("relevance_score", row.get("score"))
        scores[index] = float(value)
    return scores


_cache: dict = {"checked": 0.0, "key": None, "reranker": None}
_cache_lock = threading.Lock()


def configured_reranker() -> Reranker | None:
    """The reranker an admin chose, or None (the default)."""
    with _cache_lock:
        if time.monotonic() - _cache["checked"] < SETTINGS_TTL:
            return _cache["reranker"]
        row = InstanceSettings.objects.filter(pk=1).select_related("reranker_connection").first()
        key = _settings_key(row)
        if key != _cache["key"]:
            _cache["reranker"] = _build(row, key)
            _cache["key"] = key
        _cache["checked"] = time.monotonic()
        return _cache["reranker"]


def _settings_key(row) -> tuple:
    if row is None or not row.reranker:
        return ("off",)
    connection = row.reranker_connection
    if row.reranker == "endpoint" and connection is not None:
        return (
            "endpoint",
            connection.pk,
            connection.base_url,
            connection.api_key_encrypted,
            connection.location,
            connection.enabled,
            row.reranker_model,
            row.reranker_api,
        )
    return (row.reranker, row.reranker_dir.strip())


def _build(row, key: tuple) -> Reranker | None:
    if key[0] == "directory" and key[1]:
        return _directory_reranker(key[1])
    if key[0] == "endpoint":
        connection = row.reranker_connection
        if not connection.enabled:
            return None
        return EndpointReranker(
            base_url=connection.base_url,
            api_key=connection.api_key,
            model=row.reranker_model,
            api=row.reranker_api,
            cloud=connection.is_cloud,
        )
    return None


@functools.cache
def _directory_reranker(directory: str) -> DirectoryReranker:
    # One loaded model per directory for the life of the process.
    return DirectoryReranker(directory)


def forget_configured_reranker() -> None:
    """Read the instance's choice again on the next search (tests, admin saves)."""
    with _cache_lock:
        _cache.update(checked=0.0, key=None, reranker=None)
