"""Rolling hashes of word-id windows, and the window / span position arithmetic around them.

Each word id has a random 64-bit value ``r``; the hash of the window ``w[i:i+n]`` is
``sum_t r[w[i+t]] * B**t (mod 2**64)``, computed for all windows of a chunk at once from one prefix sum
(``(P[i+n] - P[i]) * B**-i``), so the cost per token does not grow with n and every n shares the prefix.
Id -1 (a word no bench item uses) has r = 0; it never matches because matches are verified word by word.
"""

from __future__ import annotations

import numpy as np

HASH_SEED = 20240613
_MOD = 1 << 64
_B = 0x9E3779B97F4A7C15  # odd, so invertible mod 2**64
_BINV = pow(_B, -1, _MOD)
U64 = np.uint64


def word_values(vocabulary_size: int) -> np.ndarray:
    """The random value of each vocabulary id, shifted by one: slot 0 (id -1, unseen) is 0."""
    rng = np.random.default_rng(HASH_SEED)
    r64 = rng.integers(1, np.iinfo(np.uint64).max, size=vocabulary_size + 1, dtype=np.uint64, endpoint=True)
    r64[0] = 0
    return r64


class Powers:
    """B**i and B**-i mod 2**64 for i < size, grown by doubling."""

    def __init__(self) -> None:
        self.pow = np.ones(1, dtype=U64)
        self.inv = np.ones(1, dtype=U64)

    def get(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        if size > len(self.pow):
            new = max(size, 2 * len(self.pow), 1 << 16)
            with np.errstate(over="ignore"):
                p = np.full(new, U64(_B))
                p[0] = 1
                self.pow = np.cumprod(p, dtype=U64)
                q = np.full(new, U64(_BINV))
                q[0] = 1
                self.inv = np.cumprod(q, dtype=U64)
        return self.pow[:size], self.inv[:size]


POWERS = Powers()


def prefix_hashes(ids: np.ndarray, r64: np.ndarray) -> np.ndarray:
    """P[k] = sum_{j<k} r[ids[j]] * B**j (mod 2**64), len(ids)+1 values."""
    n = len(ids)
    bpow, _ = POWERS.get(n + 1)
    out = np.empty(n + 1, dtype=U64)
    out[0] = 0
    vals = r64[ids + 1]  # ids == -1 (unseen) -> r64[0] == 0
    np.multiply(vals, bpow[:n], out=vals)
    np.cumsum(vals, out=out[1:])
    return out


def window_hashes(prefix: np.ndarray, n: int) -> np.ndarray:
    """Hash of every window of n tokens, position independent (len(prefix) - n values)."""
    m = len(prefix) - n
    if m <= 0:
        return np.zeros(0, dtype=U64)
    _, binv = POWERS.get(m)
    h = np.subtract(prefix[n:], prefix[:m])
    np.multiply(h, binv, out=h)
    return h


def hashes_at(prefix: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """Hashes of the windows of n tokens that begin at ``starts`` (which must fit in the prefix)."""
    _, binv = POWERS.get(len(prefix))
    return (prefix[starts + n] - prefix[starts]) * binv[starts]


def gather_windows(ids: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """The token ids of the windows of n tokens at ``starts``, one row per window (for verification)."""
    return ids[starts[:, None] + np.arange(n)]


def row_window_starts(offsets: np.ndarray, n: int) -> np.ndarray:
    """Flat start positions of all windows of n tokens that stay inside one row."""
    counts = np.diff(offsets)
    k = np.maximum(counts - n + 1, 0)
    total = int(k.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    row = np.repeat(np.arange(len(counts)), k)
    first = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(k, out=first[1:])
    return offsets[row] + (np.arange(total, dtype=np.int64) - first[row])


def spans_mask(length: int, starts: np.ndarray, n: int | np.ndarray) -> np.ndarray:
    """bool[length]: positions covered by any [start, start+n)."""
    diff = np.zeros(length + 1, dtype=np.int32)
    np.add.at(diff, starts, 1)
    np.add.at(diff, starts + n, -1)
    return np.cumsum(diff[:-1]) > 0
