"""fastembed's ONNX models, loaded from a local directory and never downloaded:
the embedding models (index/embeddings.py) and the reranker's cross-encoder
(search/rerank.py).

Importing this module imports fastembed, which pulls in onnxruntime (about a
second and 100 MB): both callers import it when they first load a model, so a
process that never embeds or reranks (the web serving pages, most commands)
does not pay for it. fastembed knows models by name: a local directory is
registered as a custom model under a key of the caller's, once per process.
"""

from __future__ import annotations

import os
import threading

from fastembed import TextEmbedding
from fastembed.common.model_description import ModelSource, PoolingType
from fastembed.rerank.cross_encoder import TextCrossEncoder

MODEL_FILE = "model.onnx"

# fastembed keeps its custom models in one list per class: two sessions loading
# at once (a sync's and a search's) must not both add the same key.
_register_lock = threading.Lock()


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub


def text_embedding(
    *, key: str, directory: str, dimension: int, pooling: str, threads: int
) -> TextEmbedding:
    """A sentence embedding session for the model in `directory` (`pooling`:
    "cls" or "mean"; vectors normalised)."""
    _offline()
    with _register_lock:
        if key not in {m["model"] for m in TextEmbedding.list_supported_models()}:
            TextEmbedding.add_custom_model(
                model=key,
                pooling=PoolingType.CLS if pooling == "cls" else PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf=key),
                dim=dimension,
                model_file=MODEL_FILE,
            )
    return TextEmbedding(model_name=key, specific_model_path=directory, threads=threads)


def cross_encoder(*, key: str, directory: str, threads: int) -> TextCrossEncoder:
    """A cross-encoder session for the model in `directory`."""
    _offline()
    with _register_lock:
        if key not in {m["model"] for m in TextCrossEncoder.list_supported_models()}:
            TextCrossEncoder.add_custom_model(
                model=key, sources=ModelSource(hf=key), model_file=MODEL_FILE
            )
    return TextCrossEncoder(model_name=key, specific_model_path=directory, threads=threads)
