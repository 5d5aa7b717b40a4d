"""The tokeniser's compiled loop (numba): the tokens of a chunk and their values in one pass over the bytes.

Imported only through :mod:`.jit` (by way of :mod:`.kernels`). :func:`tokenise` gives the tokens of every
row (the rules of :mod:`overlap.text.tokenize`: maximal runs of word characters, an apostrophe between two
letters inside the word, rows never share a token) and the value of every ASCII token
(:func:`~.hashing.token_values`); tokens with non-ASCII bytes are listed, and the caller gives them their
values (Unicode lowercasing is Arrow's). The helpers shared with :mod:`.kernels` live here too.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros

from ...jit import numba

U = np.uint64
_M1 = U(0xFF51AFD7ED558CCD)
_M2 = U(0xC4CEB9FE1A85EC53)
_FOLD = U(0x2020202020202020)
_ONE = U(1)
_63 = U(63)
_32 = U(32)
_LOW = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=U)


def _njit(fn):
    try:
        return numba.njit(cache=True, nogil=True, boundscheck=False)(fn)
    except RuntimeError:  # no writable cache folder (a read-only install, no NUMBA_CACHE_DIR): compile each time
        return numba.njit(nogil=True, boundscheck=False)(fn)


@_njit
def _mix(h):
    h *= _M1
    h ^= h >> _32
    return h * _M2


@_njit
def _char(data, p, end, cp_class):
    """(class bits, bytes) of the non-ASCII character at ``p`` (its code point's class)."""
    b = np.int64(data[p])
    if b < 0xE0:
        n, cp = 2, b & 0x1F
    elif b < 0xF0:
        n, cp = 3, b & 0x0F
    else:
        n, cp = 4, b & 0x07
    if b < 0xC0:  # not a lead byte (never in valid UTF-8): one byte, no word
        return np.int64(0), 1
    for k in range(1, n):
        c = np.int64(data[p + k]) if p + k < end else 0
        cp = (cp << 6) | (c & 0x3F)
    return np.int64(cp_class[min(cp, 0x10FFFF)]), n


@_njit
def _value(words, s, length, ascii_, fold, max_bytes, seed):
    """``hashing.token_values`` of one token (unsigned ``s``, ``length``, ``max_bytes``); 0 when not ASCII."""
    if not ascii_ or length > max_bytes:
        return U(0)
    eight = U(8)
    w = words[s]
    if fold:
        w |= _FOLD
    w = (w & _LOW[min(length, eight)]) ^ seed
    k = eight
    while k < length:
        blk = words[s + k]
        if fold:
            blk |= _FOLD
        w = _mix(w) ^ (blk & _LOW[min(length - k, eight)])
        k += eight
    return _mix(w)


@_njit
def _letter_before(data, p, lo, cp_class):
    """Whether the character that ends just before byte ``p`` (and starts at or after ``lo``) is a letter."""
    if data[p - 1] < 0x80:
        return 97 <= (data[p - 1] | 0x20) <= 122
    q = p - 1
    while q > lo and data[q] < 0xC0:  # back to the character's lead byte
        q -= 1
    return (_char(data, q, p, cp_class)[0] & 2) != 0


@_njit
def tokenise(data, words, offsets, byte_class, cp_class, fold, max_bytes, seed, edges, values, wide, row_tokens,
             cls, cls_words):
    """The tokens of ``data`` cut into rows by ``offsets``: their byte edges written to ``edges`` (start, end,
    start, end, ...), their ``values`` (see ``_value``), ``wide`` (the tokens with non-ASCII bytes: no value)
    and ``row_tokens`` (rows + 1); returns (tokens, wide tokens, done). The arrays must hold
    ``(bytes + rows) // 2 + 1`` tokens (``edges`` twice that): a token takes a byte and is followed by a
    separator or a row's end.

    ``byte_class``: per byte, bit 1 an ASCII word character, bit 2 an ASCII letter, bit 4 a non-ASCII byte,
    bit 8 the apostrophe;
    ``cp_class``: per code point, bit 1 word character, bit 2 letter (may be empty: at the first non-ASCII
    byte ``done`` is then False and nothing was done).
    ``words``: ``data`` read as a little-endian uint64 at every byte (``data`` padded by 8 bytes);
    ``cls``: scratch, at least ``len(data) + 72`` bytes, and ``cls_words`` the same read as ``words``."""
    nbytes = len(data) - 8
    _classify(data, nbytes, (byte_class[95] & 1) != 0, cls)
    cls[nbytes : nbytes + 72] = 0
    starts, ends = edges[0::2], edges[1::2]
    nrows = len(offsets) - 1
    nt = 0
    nw = 0
    for r in range(nrows):
        row_tokens[r] = nt
        lo, end = offsets[r], offsets[r + 1]
        first = nt
        nt, special = _plain_row(cls_words, lo, end, edges, nt)
        if special:  # a non-ASCII byte or an apostrophe: the row again, by the exact loop for it
            special = 0
            for q in range(lo, end):
                if data[q] >= 0x80:
                    special = 4
                    break
            if special:
                if len(cp_class) == 0:
                    return 0, 0, False
                nt = _unicode_row(data, lo, end, byte_class, cp_class, starts, ends, first)
            else:
                nt = _ascii_row(data, lo, end, byte_class, starts, ends, first)
        for t in range(U(first), U(nt)):
            s, e = U(starts[t]), U(ends[t])
            ascii_ = True
            if special:
                for q in range(s, e):
                    if data[q] >= 0x80:
                        ascii_ = False
                        break
            values[t] = _value(words, s, e - s, ascii_, fold, max_bytes, seed)
            if not ascii_:
                wide[nw] = t
                nw += 1
    row_tokens[nrows] = nt
    return nt, nw, True


@_njit
def _classify(data, nbytes, underscore, cls):
    """Per byte of ``data[:nbytes]``: 1 an ASCII word character, 2 a non-ASCII byte or the apostrophe.
    Arithmetic on bytes, no table: the compiler makes it a vector loop (64 bytes a step)."""
    u = np.uint8(1) if underscore else np.uint8(0)
    for i in range(nbytes):
        b = data[i]
        low = b | np.uint8(32)
        word = ((low >= np.uint8(97)) & (low <= np.uint8(122))) | ((b >= np.uint8(48)) & (b <= np.uint8(57)))
        word |= (b == np.uint8(95)) & (u == np.uint8(1))
        odd = (b >= np.uint8(128)) | (b == np.uint8(39))
        cls[i] = np.uint8(word) | (np.uint8(odd) << np.uint8(1))


_BYTE0 = U(0x0101010101010101)
_BYTE1 = U(0x0202020202020202)
_GATHER = U(0x0102040810204080)  # bit 0 of each of 8 bytes times this: the 8 bits in the top byte


@_njit
def _plain_row(cls_words, lo, end, edges, nt):
    """The tokens of one row when it holds neither non-ASCII bytes nor apostrophes: 64 bytes a step, their
    word bits gathered into one 64-bit mask, whose changes (word starts and ends) are written out one set bit
    at a time. Returns (tokens, whether a non-ASCII byte or an apostrophe is in the row: then the caller
    reads it again). ``cls_words``: ``_classify``'s bytes read as ``words``, up to 71 bytes past ``end``.
    Indexes are unsigned: with signed ones numba checks each for a negative index, 3x slower here."""
    one = U(1)
    ne = U(2 * nt)
    p = U(lo)
    stop = U(end)
    carry = U(0)
    odd = U(0)
    while p < stop:
        m = U(0)
        left = stop - p
        for k in range(8):
            x = cls_words[p + U(8 * k)]
            m |= (((x & _BYTE0) * _GATHER) >> U(56)) << U(8 * k)
            if left < U(8 * k + 8):  # the row's last bytes: none after its end counts
                x &= _LOW[min(max(left, U(8 * k)) - U(8 * k), U(8))]
            odd |= x & _BYTE1
        change = m ^ ((m << one) | carry)
        carry = m >> U(63)
        if left < U(64):
            change &= (one << left) - one
        while change:
            edges[ne] = p + U(_trailing_zeros(change))
            ne += one
            change &= change - one
        p += U(64)
    if ne & one:  # the row ends inside a word
        edges[ne] = stop
        ne += one
    return np.int64(ne >> one), odd != 0


@_njit
def _ascii_row(data, lo, end, byte_class, starts, ends, nt):
    """The tokens of one ASCII row, an apostrophe between two letters inside the word ("don't")."""
    in_word = False
    for p in range(U(lo), U(end)):
        b = data[p]
        w = (byte_class[b] & 1) != 0
        if w != in_word:
            if w:
                starts[nt] = p
            elif (b == 0x27 and p + 1 < end and (byte_class[data[p - 1]] & 2) != 0
                  and (byte_class[data[p + 1]] & 2) != 0):
                continue
            else:
                ends[nt] = p
                nt += 1
            in_word = w
    if in_word:
        ends[nt] = end
        nt += 1
    return nt


@_njit
def _unicode_row(data, lo, end, byte_class, cp_class, starts, ends, nt):
    """The tokens of one row, character by character (code point classes for the non-ASCII ones)."""
    p = lo
    while p < end:
        c = byte_class[data[p]]
        if (c & 1) == 0:
            if (c & 4) == 0:  # an ASCII separator
                p += 1
                continue
            cc, step = _char(data, p, end, cp_class)
            if (cc & 1) == 0:
                p += step
                continue
        s = p
        while True:  # to the end of the word
            while p < end:
                c = byte_class[data[p]]
                if c & 1:
                    p += 1
                    continue
                if (c & 4) == 0:
                    break
                cc, step = _char(data, p, end, cp_class)
                if (cc & 1) == 0:
                    break
                p += step
            # an apostrophe between two letters belongs to the word ("don't")
            if p + 1 < end and data[p] == 0x27 and _letter_before(data, p, s, cp_class):
                nb = data[p + 1]
                nc = np.int64(byte_class[nb]) if nb < 0x80 else _char(data, p + 1, end, cp_class)[0]
                if nc & 2:
                    p += 1
                    continue
            break
        starts[nt], ends[nt] = s, p
        nt += 1
    return nt
