"""The compiled string hash of `hashing.hash64` (numba; imported only when a hash is first needed)."""

from __future__ import annotations

import numpy as np

from ..jit import njit


@njit(cache=True, nogil=True)
def _mix(x):
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def word_hash(offsets, data, weights, out):
    """`hashing._numpy_hash64`, a string at a time: the length times the golden ratio plus each 8-byte word
    (little-endian, the last one zero-padded) through splitmix64's finaliser times its position's weight (the
    table's, times 2k + 1 in its k-th repeat), all through the finaliser again (uint64 arithmetic wraps, as
    numpy's does)."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    size = len(weights)
    for i in range(len(out)):
        start, stop = offsets[i], offsets[i + 1]
        h = np.uint64(stop - start) * golden
        j, factor = 0, np.uint64(1)  # the word's place in the table, and its repeat's factor
        first = start
        while first <= stop - 8:
            word = (np.uint64(data[first]) | (np.uint64(data[first + 1]) << np.uint64(8))
                    | (np.uint64(data[first + 2]) << np.uint64(16)) | (np.uint64(data[first + 3]) << np.uint64(24))
                    | (np.uint64(data[first + 4]) << np.uint64(32)) | (np.uint64(data[first + 5]) << np.uint64(40))
                    | (np.uint64(data[first + 6]) << np.uint64(48)) | (np.uint64(data[first + 7]) << np.uint64(56)))
            h += weights[j] * factor * _mix(word)
            j += 1
            if j == size:
                j, factor = 0, factor + np.uint64(2)
            first += 8
        if first < stop:
            word = np.uint64(0)
            for b in range(stop - first):
                word |= np.uint64(data[first + b]) << np.uint64(8 * b)
            h += weights[j] * factor * _mix(word)
        out[i] = _mix(h)


BUCKET_FROM = 1 << 18  # past this many hashes, a table of twice as many slots (9 bytes each) leaves the cache
BUCKET_HASHES = 1 << 14  # about how many hashes a bucket holds: its table (~300 KB) stays in the cache


@njit(cache=True, nogil=True)
def shared_hashes(hashes, out):
    """out[i]: whether another entry of `hashes` equals hashes[i] (`hashing.shared_hashes`'s sort), by an
    open-addressing table of twice the entries. Its slots are the hashes' high bits: a spill partition holds the
    hashes of one remainder, so their low bits are all the same and would crowd one slot in 64. Past
    `BUCKET_FROM` hashes, a table's every probe would miss the cache (43 ns a hash at 1.5M, against 5 at 150k):
    the hashes are first laid out in buckets by their top bits (one sequential pass) and each bucket gets a
    table of its own that stays in the cache (13 ns a hash at 1.5M)."""
    n = len(hashes)
    if n <= BUCKET_FROM:
        _mark_shared(hashes, out, np.uint64(0))
        return
    bits = 0
    while (n >> bits) > BUCKET_HASHES:
        bits += 1
    shift = np.uint64(64 - bits)
    starts = np.zeros((1 << bits) + 1, np.int64)
    for i in range(n):
        starts[np.int64(hashes[i] >> shift) + 1] += 1
    for b in range(1 << bits):
        starts[b + 1] += starts[b]
    fill = starts[:-1].copy()
    placed, where = np.empty(n, np.uint64), np.empty(n, np.int64)
    for i in range(n):
        b = np.int64(hashes[i] >> shift)
        placed[fill[b]] = hashes[i]
        where[fill[b]] = i
        fill[b] += 1
    marks = np.empty(n, np.bool_)
    for b in range(1 << bits):
        _mark_shared(placed[starts[b]:starts[b + 1]], marks[starts[b]:starts[b + 1]], np.uint64(bits))
    for k in range(n):
        out[where[k]] = marks[k]


@njit(cache=True, nogil=True)
def _mark_shared(hashes, out, skip):
    """`shared_hashes` by one table, its slots the bits below the top `skip` (which a bucket's hashes share)."""
    n = len(hashes)
    size, bits = 1, 0
    while size < 2 * n:
        size *= 2
        bits += 1
    shift = np.uint64(64 - bits) if bits else np.uint64(63)
    keys = np.zeros(size, np.uint64)
    counts = np.zeros(size, np.uint8)  # 0, 1, or 2 for more than one: a small table stays in cache
    slots = np.empty(n, np.int64)
    for i in range(n):
        h = hashes[i]
        s = np.int64((h << skip) >> shift) if bits else np.int64(0)
        while counts[s] and keys[s] != h:
            s = (s + 1) & (size - 1)
        keys[s] = h
        if counts[s] < 2:
            counts[s] += 1
        slots[i] = s
    for i in range(n):
        out[i] = counts[slots[i]] > 1


@njit(cache=True, nogil=True)
def set_bits(bits, rows):
    """Sets bit r % 8 of byte r // 8 of `bits` for each r of `rows` (any order, repeats allowed; every byte
    there already); returns how many of them were not set before (`row_bits.RowBits.add`'s count)."""
    added = 0
    for i in range(len(rows)):
        r = rows[i]
        mask = np.uint8(1) << np.uint8(r & 7)
        byte = r >> 3
        if not bits[byte] & mask:
            bits[byte] |= mask
            added += 1
    return added


@njit(cache=True, nogil=True)
def partition_order(hashes, partitions, order, bounds):
    """A counting sort of the rows by partition (`hashes[i] % partitions`): order[k] is the row at place k,
    the rows of a partition in the order given (`hashing.partition_order`'s stable sort); bounds[p] is where
    partition p starts (bounds[partitions]: the row count)."""
    count = np.zeros(partitions + 1, np.int64)
    modulus = np.uint64(partitions)
    for i in range(len(hashes)):
        count[np.int64(hashes[i] % modulus) + 1] += 1
    for p in range(partitions):
        count[p + 1] += count[p]
    bounds[:] = count
    for i in range(len(hashes)):
        p = np.int64(hashes[i] % modulus)
        order[count[p]] = i
        count[p] += 1
