"""The compiled string hash of `hashing.hash64` (numba; imported only when a hash is first needed)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def linear_hash(offsets, data, weights, out):
    """`hashing._numpy_hash64`, a string at a time: the length times the golden ratio plus each byte (+1) times
    its position's weight (the table's, times 2k + 1 in its k-th repeat), through splitmix64's finaliser
    (uint64 arithmetic wraps, as numpy's does)."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    size = len(weights)
    for i in range(len(out)):
        start, stop = offsets[i], offsets[i + 1]
        h = np.uint64(stop - start) * golden
        for first in range(start, stop, size):
            factor = np.uint64(2 * ((first - start) // size) + 1)
            for p in range(min(size, stop - first)):
                h += weights[p] * factor * (np.uint64(data[first + p]) + np.uint64(1))
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        out[i] = h ^ (h >> np.uint64(31))
