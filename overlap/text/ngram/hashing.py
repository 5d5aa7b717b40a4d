"""Rolling hashes of word windows, and the window / span position arithmetic around them.

Each word has a 64-bit value ``r`` computed from its bytes alone: the bytes are read 8 at a time as
little-endian integers (zero-padded; a token never holds a zero byte, so short words are packed exactly),
chained and mixed (:func:`token_values`). An ASCII word is *case-folded* first by setting bit 0x20 of
every byte: on the bytes a word can hold (letters, digits, ``_``, ``'``) that lowercases the letters and
changes nothing else but ``_`` (to 0x7F, which no word holds), so it is one operation per 8 bytes and
two words have one folded form exactly when they are the same lowercased word. A train token therefore
gets its value without a vocabulary lookup: the same word has the same value on both sides. The bench
vocabulary's values are ``r64`` (slot 0, a word no bench item uses, is 0). The hash of the window ``w[i:i+n]`` is
``sum_t r[w[i+t]] * B**t (mod 2**64)``, computed for all windows of a chunk at once from one prefix sum
(``(P[i+n] - P[i]) * B**-i``), so the cost per token does not grow with n and every n shares the prefix.
Id -1 (a word no bench item uses) has r = 0 where ids are hashed, and its own value where bytes are; either
way it never matches, because matches are verified word by word (by vocabulary id, looked up only for the
few windows found in a table).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

HASH_SEED = 20240613
_MOD = 1 << 64
_B = 0x9E3779B97F4A7C15  # odd, so invertible mod 2**64
_BINV = pow(_B, -1, _MOD)
U64 = np.uint64


_M1 = U64(0xFF51AFD7ED558CCD)
_M2 = U64(0xC4CEB9FE1A85EC53)
_SEED64 = U64((HASH_SEED * 0x9E3779B97F4A7C15) % _MOD)
# _LOW[k]: the low k bytes of a 64-bit word
_LOW = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=U64)
_FOLD = U64(0x2020202020202020)


def _mix(h: np.ndarray) -> np.ndarray:
    """A bijective 64-bit mix (multiply, xor-shift, multiply), in place."""
    tmp = np.empty_like(h)
    h *= _M1
    np.right_shift(h, U64(32), out=tmp)
    h ^= tmp
    h *= _M2
    return h


def unaligned_u64(buf: np.ndarray) -> np.ndarray:
    """A uint64 view that starts at every byte of ``buf`` (len(buf) - 7 values; no copy)."""
    return np.ndarray((max(len(buf) - 7, 0),), dtype="<u8", buffer=buf, strides=(1,))


def token_values(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, *, fold: bool,
                 max_bytes: int) -> np.ndarray:
    """The value of each token ``buf[start:start+length]`` (``buf`` readable 8 bytes past every token).

    ``fold``: case-fold first (for ASCII tokens only; see the module). A token longer than ``max_bytes``
    (the longest bench word) gets 0: it can never be a bench word."""
    if len(starts) == 0:
        return np.zeros(0, U64)
    words = unaligned_u64(buf)
    lengths = np.asarray(lengths)
    with np.errstate(over="ignore"):
        w = words[starts]
        if fold:
            w |= _FOLD
        w &= np.take(_LOW, np.minimum(lengths, 8))  # (np.take: a fancy index of a 9-entry table is 2x slower)
        w ^= _SEED64
        more = np.flatnonzero((lengths > 8) & (lengths <= max_bytes))
        k = 8
        while len(more):  # the next 8 bytes of the tokens that have them, chained through the mix
            rest = lengths[more] - k
            blk = words[starts[more] + k]
            if fold:
                blk |= _FOLD
            blk &= _LOW[np.minimum(rest, 8)]
            w[more] = _mix(w[more]) ^ blk
            more = more[rest > 8]
            k += 8
        _mix(w)
    if len(lengths) and int(lengths.max()) > max_bytes:
        w[lengths > max_bytes] = 0
    return w


def string_values(strings: pa.Array, max_bytes: int | None = None, fold: bool = True) -> np.ndarray:
    """:func:`token_values` of every string of an Arrow string array (``fold``: case-fold the ASCII ones)."""
    large = pa.types.is_large_string(strings.type)
    offs = np.frombuffer(strings.buffers()[1], np.int64 if large else np.int32)
    offs = offs[strings.offset : strings.offset + len(strings) + 1].astype(np.int64)
    if len(strings) == 0:
        return np.zeros(0, U64)
    lo, hi = int(offs[0]), int(offs[-1])
    buf = np.zeros(hi - lo + 8, np.uint8)
    data = strings.buffers()[2]
    if data is not None and hi > lo:
        buf[: hi - lo] = np.frombuffer(data, np.uint8)[lo:hi]
    lengths = np.diff(offs)
    if max_bytes is None:
        max_bytes = max(int(lengths.max()), 1)
    starts = offs[:-1] - lo
    out = token_values(buf, starts, lengths, fold=False, max_bytes=max_bytes)
    if fold:
        ascii_ = np.flatnonzero(pc.fill_null(pc.string_is_ascii(strings), False).to_numpy(zero_copy_only=False))
        out[ascii_] = token_values(buf, starts[ascii_], lengths[ascii_], fold=True, max_bytes=max_bytes)
    return out


def vocab_values(vocab: pa.Array, fold: bool = True) -> np.ndarray:
    """The value of each bench vocabulary word, shifted by one: slot 0 (id -1) is 0."""
    r64 = np.zeros(len(vocab) + 1, U64)
    r64[1:] = string_values(vocab, fold=fold)
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


def prefix_hashes(ids, r64: np.ndarray) -> np.ndarray:
    """P[k] = sum_{j<k} r[ids[j]] * B**j (mod 2**64), len(ids)+1 values.

    ``ids``: vocabulary ids, or an object with the token values themselves in ``.values``."""
    n = len(ids)
    bpow, _ = POWERS.get(n + 1)
    out = np.empty(n + 1, dtype=U64)
    out[0] = 0
    vals = ids.values.copy() if hasattr(ids, "values") else r64[ids + 1]  # id -1 (unseen) -> r64[0] == 0
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
    """The token ids of the windows of n tokens at ``starts``, one row per window (for verification).

    ``ids``: an id array, or an object that looks ids up on demand (``ids_at``)."""
    pos = starts[:, None] + np.arange(n)
    return ids.ids_at(pos) if hasattr(ids, "ids_at") else ids[pos]


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
