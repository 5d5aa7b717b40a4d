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


def _njit(fn=None, **options):
    if fn is None:  # @_njit(inline="always")
        return lambda f: _njit(f, **options)
    try:
        return numba.njit(cache=True, nogil=True, boundscheck=False, **options)(fn)
    except RuntimeError:  # no writable cache folder (a read-only install, no NUMBA_CACHE_DIR): compile each time
        return numba.njit(nogil=True, boundscheck=False, **options)(fn)


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
def tokenise(data, words, offsets, byte_class, cp_class, fold, max_bytes, seed, edges, values, wide, row_tokens,
             cls, cls_words):
    """The tokens of ``data`` cut into rows by ``offsets``: their byte edges written to ``edges`` (start, end,
    start, end, ...), their ``values`` (see ``_value``), ``wide`` (the tokens with non-ASCII bytes: no value)
    and ``row_tokens`` (rows + 1); returns (tokens, wide tokens, done). The arrays must hold
    ``(bytes + rows) // 2 + 1`` tokens (``edges`` twice that): a token takes a byte and is followed by a
    separator or a row's end.

    ``byte_class``: per byte, bit 1 an ASCII word character (only its ``_`` is read here: whether the
    underscore is a word character);
    ``cp_class``: per code point, bit 1 word character, bit 2 letter (may be empty: at the first non-ASCII
    byte ``done`` is then False and nothing was done).
    ``words``: ``data`` read as a little-endian uint64 at every byte (``data`` padded by 8 bytes);
    ``cls``: scratch, at least ``len(data) + 72`` bytes, and ``cls_words`` the same read as ``words``.

    Every byte is classed first (``_classify``: a contraction's apostrophe is a word byte there; then, from
    the first row with a non-ASCII byte on, ``_unicode_classes``: each non-ASCII character by its code
    point), so every row, apostrophes, non-ASCII text or not, is cut by one loop, 64 bytes a step
    (``_plain_row``)."""
    nbytes = len(data) - 8
    _classify(data, nbytes, (byte_class[95] & 1) != 0, cls)
    cls[nbytes : nbytes + 72] = 0
    classed = False  # the non-ASCII characters classed (from the first row that has one to the end)
    nrows = len(offsets) - 1
    nt = 0
    nw = 0
    for r in range(nrows):
        row_tokens[r] = nt
        lo, end = offsets[r], offsets[r + 1]
        _row_edges(data, lo, end, cls)
        first = nt
        nt, wide_row = _plain_row(cls_words, lo, end, edges, nt)
        if wide_row and not classed:
            if len(cp_class) == 0:
                return 0, 0, False
            _unicode_classes(data, words, lo, nbytes, cp_class, cls)
            classed = True
            _row_edges(data, lo, end, cls)
            nt, _ = _plain_row(cls_words, lo, end, edges, first)
        for t in range(U(first), U(nt)):
            s, e = U(edges[2 * t]), U(edges[2 * t + 1])
            ascii_ = not wide_row or _is_ascii(words, s, e)  # (checked apart: ASCII rows stay 1.5x faster)
            values[t] = _value(words, s, e - s, ascii_, fold, max_bytes, seed)
            if not ascii_:
                wide[nw] = t
                nw += 1
    row_tokens[nrows] = nt
    return nt, nw, True


@_njit(inline="always")
def _row_edges(data, lo, end, cls):
    """An apostrophe at a row's edge joins nothing: its neighbour is in another row."""
    if end > lo:
        if data[lo] == 0x27:
            cls[lo] = 0
        if data[end - 1] == 0x27:
            cls[end - 1] = 0


@_njit
def _classify(data, nbytes, underscore, cls):
    """Per byte of ``data[:nbytes]``: 1 a word byte (an ASCII word character, or an apostrophe between two
    ASCII letters: "don't"), 2 a non-ASCII byte, 4 an ASCII letter. Arithmetic on bytes, no table: the
    compiler makes it a vector loop (64 bytes a step; not with a reduction in it, 30x slower). ``data`` is
    readable one byte past ``nbytes``; an apostrophe at a row's edge is set apart by the caller."""
    if nbytes == 0:
        return
    u = np.uint8(1) if underscore else np.uint8(0)
    cls[0] = _byte_class(data[0], np.uint8(0), np.uint8(0), u)
    for i in range(U(1), U(nbytes)):
        cls[i] = _byte_class(data[i], data[i - U(1)], data[i + U(1)], u)


@_njit(inline="always")
def _byte_class(b, before, after, u):
    """``_classify``'s class of byte ``b`` between ``before`` and ``after``."""
    low = b | np.uint8(32)
    letter = (low >= np.uint8(97)) & (low <= np.uint8(122))
    lb, la = before | np.uint8(32), after | np.uint8(32)
    apostrophe = ((b == np.uint8(39)) & (lb >= np.uint8(97)) & (lb <= np.uint8(122)) & (la >= np.uint8(97))
                  & (la <= np.uint8(122)))
    word = letter | ((b >= np.uint8(48)) & (b <= np.uint8(57))) | ((b == np.uint8(95)) & (u == np.uint8(1)))
    return (np.uint8(word | apostrophe) | (np.uint8(b >= np.uint8(128)) << np.uint8(1))
            | (np.uint8(letter) << np.uint8(2)))


@_njit
def _unicode_classes(data, words, lo, end, cp_class, cls):
    """Class the non-ASCII characters of ``data[lo:end]`` by code point (every byte of a character gets its
    class: 1 word character, 2 non-ASCII, 4 letter), and decide again each apostrophe next to one: a word
    byte when the characters on both sides are letters (one at a row's edge is set apart by the caller: a
    character never spans two rows of valid UTF-8). ASCII bytes are skipped 8 at a time."""
    q = U(lo)
    stop = U(end)
    while q < stop:
        if q + U(8) <= stop and (words[q] & _HIGH) == U(0):
            q += U(8)
            continue
        if data[q] < 0x80:
            q += U(1)
            continue
        c, n = _char(data, q, end, cp_class)
        bits = np.uint8(2 | (c & 1) | ((c & 2) << 1))
        after = min(q + U(n), stop)
        for k in range(q, after):
            cls[k] = bits
        # an apostrophe before it (its other side is classed already), or after it when an ASCII byte
        # follows (a non-ASCII one decides it when its turn comes)
        if q > U(lo) + U(1) and data[q - U(1)] == 0x27:
            _apostrophe(cls, q - U(1))
        if after + U(1) < stop and data[after] == 0x27 and data[after + U(1)] < 0x80:
            _apostrophe(cls, after)
        q = after


@_njit(inline="always")
def _apostrophe(cls, p):
    """The apostrophe at ``p`` (inside a row) is a word byte when the characters on both sides are letters."""
    cls[p] = np.uint8(1) if (cls[p - U(1)] & 4) != 0 and (cls[p + U(1)] & 4) != 0 else np.uint8(0)


@_njit(inline="always")
def _is_ascii(words, s, e):
    """Whether the bytes ``s .. e`` (read through ``words``, 8 at a time) are all ASCII."""
    k = s
    while k < e:
        w = words[k]
        if e - k < U(8):
            w &= _LOW[e - k]
        if w & _HIGH:
            return False
        k += U(8)
    return True


_HIGH = U(0x8080808080808080)


_BYTE0 = U(0x0101010101010101)
_BYTE1 = U(0x0202020202020202)
_GATHER = U(0x0102040810204080)  # bit 0 of each of 8 bytes times this: the 8 bits in the top byte


@_njit
def _plain_row(cls_words, lo, end, edges, nt):
    """The tokens of one row of classed bytes (``_classify``): 64 bytes a step, their word bits gathered into
    one 64-bit mask, whose changes (word starts and ends) are written out one set bit at a time. Returns
    (tokens, whether a non-ASCII byte is in the row: then the caller classes its characters and reads it
    again). ``cls_words``: ``_classify``'s bytes read as ``words``, up to 71 bytes past ``end``.
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


_X99 = U(0x9999999999999999)


@_njit
def right_quotes(words, nbytes, pos):
    """The positions of the typographic apostrophes (U+2019: bytes E2 80 99) in the bytes ``words`` reads
    (``nbytes`` of them, padded by 8), written to ``pos`` while it has room; returns how many there are.
    8 bytes a step: a step holds a candidate only when one of its bytes is 0x99."""
    m = 0
    cap = len(pos)
    i = U(0)
    while i < U(nbytes):
        v = words[i] ^ _X99
        if ((v - _BYTE0) & ~v & _HIGH) != U(0):  # a byte 0x99 among these 8
            for q in range(i, min(i + U(8), U(nbytes))):
                if q >= U(2) and (words[q] & U(0xFF)) == U(0x99) and (words[q - U(2)] & U(0xFFFF)) == U(0x80E2):
                    if m < cap:
                        pos[m] = q - U(2)
                    m += 1
        i += U(8)
    return m


@_njit
def drop_right_quotes(data, nbytes, offsets, pos, out, out_offsets):
    """``data[:nbytes]`` (rows cut by ``offsets``) into ``out`` with the typographic apostrophes at ``pos``
    (``right_quotes``) written as ' (the tokeniser reads them so), the rows' new offsets into
    ``out_offsets``; returns the bytes written. The bytes between them are copied whole."""
    m = len(pos)
    i = 0
    j = 0
    for k in range(m):
        q = pos[k]
        out[j : j + q - i] = data[i:q]
        j += q - i
        out[j] = 0x27
        j += 1
        i = q + 3
    out[j : j + nbytes - i] = data[i:nbytes]
    k = 0
    for r in range(len(offsets)):  # a row loses two bytes per apostrophe before it (none spans two rows)
        while k < m and pos[k] < offsets[r]:
            k += 1
        out_offsets[r] = offsets[r] - 2 * k
    return nbytes - 2 * m
