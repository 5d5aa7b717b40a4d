"""A 64-bit hash of every string of an Arrow array, vectorised in numpy (pyarrow has no hash kernel).

Used only to spread rows over spill partitions: two equal strings always land in the same partition, and
every decision is then taken on the strings themselves (exact grouping in Arrow), so a collision costs a
little balance, never a wrong count.

The hash is a random linear form over the bytes (one fixed, seeded 64-bit multiplier per byte position),
plus the length, through the splitmix64 finaliser: deterministic across processes and machines (a Ray
worker and the driver agree), a few numpy passes over the bytes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_SEED = 0x6F7665726C6170  # fixed: partitions must not depend on the process
_BLOCK = 256
_weights = np.zeros(0, np.uint64)


def _position_weights(length: int) -> np.ndarray:
    """Multipliers of byte positions 0..length-1 (odd, so no byte is lost); grown block by block, each
    block from its own seed, so the table never depends on the longest string seen first."""
    global _weights
    while len(_weights) < length:
        block = len(_weights) // _BLOCK
        rng = np.random.default_rng([_SEED, block])
        fresh = rng.integers(0, np.iinfo(np.uint64).max, size=_BLOCK, dtype=np.uint64, endpoint=True)
        _weights = np.concatenate([_weights, fresh | np.uint64(1)])
    return _weights[:length]


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit reaches every output bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def hash64(values) -> np.ndarray:
    """uint64 hash of each string of `values` (a string array or chunked array; a null hashes as "")."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.null_count:
        values = values.fill_null("")  # a null slot may still span bytes: "" spans none
    values = values.cast(pa.large_string())
    n = len(values)
    if n == 0:
        return np.zeros(0, np.uint64)
    _, offsets_buffer, data_buffer = values.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int64, count=n + 1, offset=values.offset * 8)
    lengths = np.diff(offsets)
    out = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    first, total = int(offsets[0]), int(offsets[-1] - offsets[0])
    if total:
        # the strings' bytes are contiguous: each byte times its position's weight, summed per string
        data = np.frombuffer(data_buffer, np.uint8, count=total, offset=first)
        nonempty = lengths > 0
        starts = (offsets[:-1] - first)[nonempty]
        position = np.arange(total, dtype=np.int64)
        position -= np.repeat(starts, lengths[nonempty])
        with np.errstate(over="ignore"):
            terms = _position_weights(int(lengths.max())).take(position)
            terms *= data.astype(np.uint64) + np.uint64(1)
            out[nonempty] += np.add.reduceat(terms, starts)
    return _mix(out)


def partition_of(values, partitions: int, chunk: int = 65536) -> np.ndarray:
    """The spill partition (0..partitions-1) of each string of `values`, hashed a chunk at a time (the
    per-byte temporaries of a million strings at once cost more in page faults than the hashing)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    out = np.empty(len(values), np.int64)
    for start in range(0, len(values), chunk):
        out[start:start + chunk] = hash64(values.slice(start, chunk)) % np.uint64(partitions)
    return out
