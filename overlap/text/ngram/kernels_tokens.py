"""The tokeniser's compiled loop (numba): the tokens of a chunk and their values in one pass over the bytes.

Imported only through :mod:`.jit` (by way of :mod:`.kernels`). :func:`tokenise` gives the tokens of every
row (the rules of :mod:`overlap.text.tokenize`: maximal runs of word characters, an apostrophe between two
letters inside the word, rows never share a token) and the value of every ASCII token
(:func:`~.hashing.token_values`); tokens with non-ASCII bytes are listed, and the caller gives them their
values (Unicode lowercasing is Arrow's). The helpers shared with :mod:`.kernels` live here too.
"""

from __future__ import annotations

import numba
import numpy as np

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
def tokenise(data, words, offsets, byte_class, cp_class, fold, max_bytes, seed, starts, ends, values, wide,
             row_tokens):
    """The tokens of ``data`` cut into rows by ``offsets``, written to ``starts``, ``ends``, ``values`` (see
    ``_value``), ``wide`` (the tokens with non-ASCII bytes: no value) and ``row_tokens`` (rows + 1);
    returns (tokens, wide tokens, done). The arrays must hold ``(bytes + rows) // 2 + 1`` tokens: a token
    takes a byte and is followed by a separator or a row's end.

    ``byte_class``: per byte, bit 1 an ASCII word character, bit 2 an ASCII letter, bit 4 a non-ASCII byte,
    bit 8 the apostrophe;
    ``cp_class``: per code point, bit 1 word character, bit 2 letter (may be empty: at the first non-ASCII
    byte ``done`` is then False and nothing was done).
    ``words``: ``data`` read as a little-endian uint64 at every byte (``data`` padded by 8 bytes)."""
    nrows = len(offsets) - 1
    nt = 0
    nw = 0
    for r in range(nrows):
        row_tokens[r] = nt
        lo, end = offsets[r], offsets[r + 1]
        first = nt
        nt, special = _plain_row(data, lo, end, byte_class, starts, ends, nt)
        if special & 4:  # a non-ASCII byte: the row again, character by character
            if len(cp_class) == 0:
                return 0, 0, False
            nt = _unicode_row(data, lo, end, byte_class, cp_class, starts, ends, first)
        elif special & 8:  # an apostrophe: the row again, joining "don't"
            nt = _ascii_row(data, lo, end, byte_class, starts, ends, first)
        for t in range(U(first), U(nt)):
            s, e = U(starts[t]), U(ends[t])
            ascii_ = True
            if special & 4:
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
def _plain_row(data, lo, end, byte_class, starts, ends, nt):
    """The tokens of one row when it holds neither non-ASCII bytes nor apostrophes; returns (tokens, the
    bits of ``byte_class`` seen: 4 a non-ASCII byte, 8 an apostrophe, and then the caller reads the row
    again). No branch per byte (a word's end is not predictable): every byte writes its position as a
    start and as an end, and a word's first byte (first non-word byte) moves the start (end) count on.
    Indexes are unsigned: with signed ones numba checks each for a negative index, 3x slower here."""
    one = U(1)
    ne = U(nt)
    ns = ne
    prev = U(0)
    seen = U(0)
    p = U(lo)
    stop = U(end)
    while p < stop:
        c = U(byte_class[data[p]])
        w = c & one
        seen |= c
        starts[ns] = p
        ns += w & ~prev
        ends[ne] = p
        ne += prev & ~w
        prev = w
        p += one
    ends[ne] = stop
    ne += prev
    return np.int64(ne), np.int64(seen)


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
