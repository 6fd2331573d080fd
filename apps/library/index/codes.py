"""Bit codes for the KNN first pass.

sqlite-vec's PyPI build scans without SIMD, so comparing float vectors over a
large index is slow. The first pass compares bit codes instead (hamming
distance over `bit[N]` vec0 columns) and the best few hundred candidates are
re-scored exactly with the stored float vectors.

The sign bits of the raw 384 dimensions lose too much (recall@10 ~0.8 at 100k
chunks with 100 candidates). Signs of a longer projection keep more of the
angle, and scanning 768 bits costs little more than 384: the vector is
multiplied by randomised Hadamard blocks (a Hadamard matrix with random column
signs is orthogonal, so each block is a random rotation), giving 768 bits;
recall@10 stays above 0.95 with a few hundred candidates. The projection is
built from integers only (a Sylvester Hadamard matrix and signs from numpy's
frozen legacy RandomState), so every process and every numpy version derives
exactly the same one from the seed stored in IndexState.
bench/search_latency.py prints the recall it gets.
"""

from __future__ import annotations

import functools

import numpy as np


def _hadamard(size: int) -> np.ndarray:
    matrix = np.ones((1, 1), dtype=np.float32)
    while matrix.shape[0] < size:
        matrix = np.block([[matrix, matrix], [matrix, -matrix]])
    return matrix


@functools.lru_cache(maxsize=4)
def projection(dimension: int, code_bits: int, seed: int) -> np.ndarray:
    """A (dimension, code_bits) matrix; codes are the signs of vector @ it."""
    size = 1
    while size < dimension:
        size *= 2
    blocks = -(-code_bits // size)
    hadamard = _hadamard(size)[:, :dimension]
    signs = np.random.RandomState(seed).choice([-1.0, 1.0], size=(blocks, dimension))
    stacked = np.concatenate([hadamard * s[None, :] for s in signs], axis=0)[:code_bits]
    return np.ascontiguousarray(stacked.T, dtype=np.float32)


def encode(vectors: np.ndarray, *, code_bits: int, seed: int) -> np.ndarray:
    """Rows of packed bits (uint8), one per vector."""
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    return np.packbits(matrix @ projection(matrix.shape[1], code_bits, seed) > 0, axis=1)
