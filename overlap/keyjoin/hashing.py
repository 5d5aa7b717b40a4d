"""A 64-bit hash of every string of an Arrow array (pyarrow has no hash kernel): compiled with numba, and
the same function in numpy where numba cannot run (`OVERLAP_HASH_JIT=0`; the tests hold the two equal).

Used to route rows (spill partitions) and to find which rows may share a string: two equal strings always
hash alike, and every decision is then taken on the strings themselves, so a collision costs a little work,
never a wrong count.

The hash is a random linear form over the strings' 8-byte words (each word through splitmix64's finaliser,
times one fixed, seeded 64-bit multiplier per word position), plus the length, through the finaliser again:
deterministic across processes and machines (a Ray worker and the driver agree), a few numpy passes over the
bytes, and one load per word rather than a multiply per byte in the compiled loop. The multipliers are a
table of `WEIGHTS` word positions, repeated past it times an odd factor per repeat (2k + 1 for repeat k): a
hostile 20 MB id costs one pass over its bytes, not a table of its length.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from ..ids.compiled import string_buffers

_SEED = 0x6F7665726C6170  # fixed: partitions must not depend on the process
_BLOCK = 256
WEIGHTS = 512  # word positions with a multiplier of their own (4 KiB of a string)


def _table() -> np.ndarray:
    """Multipliers of word positions 0..WEIGHTS-1 (odd, so no byte is lost), block by block, each block from its
    own seed (the table of a shorter length was its prefix)."""
    blocks = [np.random.default_rng([_SEED, block]).integers(0, np.iinfo(np.uint64).max, size=_BLOCK,
                                                                dtype=np.uint64, endpoint=True)
              for block in range(WEIGHTS // _BLOCK)]
    return np.concatenate(blocks) | np.uint64(1)


_WEIGHTS = _table()


def _position_weights(positions: np.ndarray) -> np.ndarray:
    """The multiplier of each word position: the table's, times 2k + 1 in its k-th repeat."""
    with np.errstate(over="ignore"):
        return _WEIGHTS.take(positions % WEIGHTS) * (positions // WEIGHTS * 2 + 1).astype(np.uint64)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit reaches every output bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _buffers(values) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """(int64 offsets, uint8 bytes, the null slots or None) of a string array, read in place (a null slot may
    still span bytes: its hash is then replaced by the hash of "")."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = values.cast(pa.string())
    if len(values) == 0:
        return None
    offsets, data, valid = string_buffers(values)
    return offsets, data, (~valid if values.null_count else None)


_KERNEL: list = []
# Loading numba costs ~0.5-1 s once per process: a side whose batches are all smaller is hashed in numpy
# (the same function), so a small compare never pays it.
COMPILED_FROM = 20_000


def _kernel():
    """The compiled hash, or None (numba missing or failing here, or OVERLAP_HASH_JIT=0)."""
    if not _KERNEL:
        kernel = None
        if os.environ.get("OVERLAP_HASH_JIT", "1") != "0":
            try:
                from .hash_kernel import word_hash

                probe = np.zeros(1, np.uint64)
                word_hash(np.array([0, 1], np.int64), np.array([97], np.uint8), _WEIGHTS, probe)
                kernel = word_hash
            except Exception:  # noqa: BLE001 - numba missing, or its compiler failing here: the numpy path
                kernel = None
        _KERNEL.append(kernel)
    return _KERNEL[0]


def hash64(values) -> np.ndarray:
    """uint64 hash of each string of `values` (a string array or chunked array; a null hashes as "")."""
    found = _buffers(values)
    if found is None:
        return np.zeros(0, np.uint64)
    offsets, data, nulls = found
    kernel = _kernel() if len(offsets) > COMPILED_FROM else None
    out = _compiled_hash64(kernel, offsets, data) if kernel is not None else _numpy_hash64(offsets, data)
    if nulls is not None:
        out[nulls] = _EMPTY
    return out


def _compiled_hash64(kernel, offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    out = np.empty(len(offsets) - 1, np.uint64)
    kernel(offsets, data, _WEIGHTS, out)
    return out


def _numpy_hash64(offsets: np.ndarray, data_all: np.ndarray) -> np.ndarray:
    lengths = np.diff(offsets)
    out = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    first, total = int(offsets[0]), int(offsets[-1] - offsets[0])
    if total:
        # each string's bytes laid out from a word boundary, the last word zero-padded, read as words
        words = (lengths + 7) // 8
        nonempty = words > 0
        word_starts = np.concatenate([[0], np.cumsum(words)[:-1]])
        padded = np.zeros(int(words.sum()) * 8, np.uint8)
        shift = np.repeat(word_starts[nonempty] * 8 - (offsets[:-1][nonempty] - first), lengths[nonempty])
        padded[np.arange(total, dtype=np.int64) + shift] = data_all[first:first + total]
        values = padded.view("<u8").astype(np.uint64)
        position = np.arange(len(values), dtype=np.int64) - np.repeat(word_starts[nonempty], words[nonempty])
        with np.errstate(over="ignore"):
            terms = _position_weights(position) * _mix(values)
            out[nonempty] += np.add.reduceat(terms, word_starts[nonempty])
    return _mix(out)


_EMPTY = _mix(np.zeros(1, np.uint64))[0]  # the hash of "" (a null hashes as "")


def partition_of(values, partitions: int, chunk: int = 65536) -> np.ndarray:
    """The spill partition (0..partitions-1) of each value of `values`: an unsigned integer (a hash already)
    by its remainder, a string by its hash, a chunk at a time (the numpy path's per-byte temporaries of a
    million strings at once cost more in page faults than the hashing)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_unsigned_integer(values.type):
        hashes = values.to_numpy(zero_copy_only=False).astype(np.uint64, copy=False)
        if partitions & (partitions - 1) == 0:  # a power of two: the low bits, as the remainder gives them
            return (hashes & np.uint64(partitions - 1)).astype(np.int64)
        return (hashes % np.uint64(partitions)).astype(np.int64)
    out = np.empty(len(values), np.int64)
    for start in range(0, len(values), chunk):
        out[start:start + chunk] = hash64(values.slice(start, chunk)) % np.uint64(partitions)
    return out


def partition_order(values, partitions: int) -> tuple[np.ndarray, np.ndarray]:
    """(the rows in partition order, stable; where each partition starts, and the row count last) of the
    values' `partition_of`: one compiled counting pass over a large array of hashes, else a sort of the
    partitions (its reference: the tests hold the two equal)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    kernel = _order_kernel() if len(values) > COMPILED_FROM and pa.types.is_uint64(values.type) else None
    if kernel is not None and not values.null_count:
        order, bounds = np.empty(len(values), np.int64), np.empty(partitions + 1, np.int64)
        kernel(values.to_numpy(), np.int64(partitions), order, bounds)
        return order, bounds
    where = partition_of(values, partitions)
    return np.argsort(where, kind="stable"), np.concatenate([[0], np.cumsum(np.bincount(where,
                                                                                      minlength=partitions))])


def shared_hashes(hashes: np.ndarray) -> np.ndarray:
    """Whether another entry of `hashes` (uint64) equals each one: a compiled pass over a hash table for a
    large array, else (and where numba cannot run) a sort, its reference (the tests hold the two equal)."""
    kernel = _shared_kernel() if len(hashes) > COMPILED_FROM else None
    if kernel is not None:
        out = np.empty(len(hashes), bool)
        kernel(np.ascontiguousarray(hashes, np.uint64), out)
        return out
    return _sorted_shared(hashes)


def _sorted_shared(hashes: np.ndarray) -> np.ndarray:
    ordered = np.sort(hashes)
    twice = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    if not len(twice):
        return np.zeros(len(hashes), bool)
    at = np.minimum(np.searchsorted(twice, hashes), len(twice) - 1)
    return twice[at] == hashes


def _order_kernel():
    """The compiled counting sort, or None (as `_shared_kernel`)."""
    if _kernel() is None:
        return None
    from .hash_kernel import partition_order as kernel

    return kernel


def _shared_kernel():
    """The compiled table pass, or None (when the string hash's compiled loop is not available either)."""
    if _kernel() is None:
        return None
    from .hash_kernel import shared_hashes as kernel

    return kernel
