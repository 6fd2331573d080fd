"""How a passage's vector is stored: the embedding table of an index generation
and the float32 blob in it.

The index writes these rows (apps.library.index.tables) and the search-time
version rules read them back (apps.library.versions.search); both take the
names from here so neither reaches into the other.
"""

from __future__ import annotations

import numpy as np


def emb_table(generation: int) -> str:
    return f"library_emb_{int(generation)}"


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)
