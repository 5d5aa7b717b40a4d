"""The scan's inner loops compiled with numba: one pass over the bytes, one over the word values.

Imported only through :mod:`.jit` (which falls back to the numpy path when numba is missing or cannot
compile). Each loop computes exactly what the numpy path computes, in one pass instead of a dozen
whole-array passes:

* :func:`tokenise` - the tokens of every row (the rules of :mod:`overlap.text.tokenize`: maximal runs of
  word characters, an apostrophe between two letters inside the word, rows never share a token) and
  the value of every ASCII token (:func:`~.hashing.token_values`); tokens with non-ASCII bytes are
  listed, and the caller gives them their values (Unicode lowercasing is Arrow's);
* :func:`window_hits` - the rolling hash of every smallest-n window inside a row, the prefilter, and for
  the windows that pass it the hash of every n looked up in the sorted table hashes (through a
  directory of their top bits): the candidates that the caller then verifies word by word;
* :func:`longest_runs` - the pair view's longest common run of many (train row, bench item) pairs.
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


@_njit
def _grow(a, size):
    out = np.empty(size, a.dtype)
    out[: len(a)] = a
    return out


@_njit
def _find(keys, key_base, key_end, dirs, dir_base, shift, h):
    """(first index, count) of ``h`` among the sorted ``keys[key_base:key_end]`` (indexes from key_base),
    through their directory ``dirs[dir_base + b]``: the first key whose top bits are >= b."""
    if key_end == key_base:
        return 0, 0
    b = dir_base + np.int64(h >> shift)
    j, stop = key_base + dirs[b], key_base + dirs[b + 1]
    while j < stop and keys[j] < h:
        j += 1
    k = j
    while k < stop and keys[k] == h:
        k += 1
    return j - key_base, k - j


@_njit
def find_sorted(keys, dirs, shift, values, where, found):
    """Position in the sorted ``keys`` (with their directory) of each of ``values``, and whether it is there."""
    for q in range(len(values)):
        j, c = _find(keys, 0, len(keys), dirs, 0, shift, values[q])
        where[q] = min(j, len(keys) - 1)
        found[q] = c > 0


@_njit
def window_hits(values, row_tokens, first_row, ns, nmin_k, prefilter, word_shift, bpow, binv,
                keys, key_bounds, dirs, dir_bounds, shifts, pos, kk, real, first, count, hsh):
    """Candidate windows, from row ``first_row`` on: (flat position, index of n in ``ns``, real (1) or
    boilerplate (0), first table entry, entries, window hash) of every window inside a row whose
    smallest-n window passes the prefilter and whose hash is in the real or boilerplate table of its n,
    written to the last six arrays. Returns (candidates, the next row): a row whose candidates do not fit
    is left whole for the next call (with larger arrays).

    Table ``t = 2 k + (0 real, 1 boilerplate)`` of ``ns[k]``, and table ``2 len(ns)``: every distinct bench
    window hash of the smallest n (a window of a larger n matches only where its smallest-n window is a
    bench window: the prefilter's own rule). Each table: sorted hashes ``keys[key_bounds[t]:
    key_bounds[t + 1]]``, their directory ``dirs[dir_bounds[t]:dir_bounds[t + 1]]`` of top ``64 - shifts[t]``
    bits. (Fixed arrays, not grown here: a loop that may replace an array runs several times slower.)"""
    nmin = U(ns[nmin_k])
    topn = bpow[nmin - 1]
    mt = 2 * len(ns)  # the table of every smallest-n bench window
    cap = len(pos)
    nh = 0
    for r in range(first_row, len(row_tokens) - 1):
        s, e = U(row_tokens[r]), U(row_tokens[r + 1])  # unsigned: no negative-index check per window
        if e - s < nmin:
            continue
        row_start = nh
        h = U(0)
        for t in range(nmin):
            h += values[s + t] * bpow[t]
        for i in range(s, e - nmin + U(1)):
            m = (_ONE << ((h >> U(20)) & _63)) | (_ONE << ((h >> U(26)) & _63))
            # the prefilter, then the exact set of smallest-n bench windows (most windows that pass the
            # prefilter are not bench windows: one look-up here instead of one per table)
            if (prefilter[h >> word_shift] & m) == m and _find(keys, key_bounds[mt], key_bounds[mt + 1], dirs,
                                                               dir_bounds[mt], shifts[mt], h)[1]:
                for k in range(len(ns)):
                    n = U(ns[k])
                    if i + n > e:
                        continue
                    hn = h
                    if k != nmin_k:
                        hn = U(0)
                        for t in range(n):
                            hn += values[i + t] * bpow[t]
                    for rk in range(2):
                        tb = 2 * k + rk
                        j, c = _find(keys, key_bounds[tb], key_bounds[tb + 1], dirs, dir_bounds[tb], shifts[tb], hn)
                        if c == 0:
                            continue
                        if nh == cap:
                            return row_start, r
                        pos[nh], kk[nh], real[nh], first[nh], count[nh], hsh[nh] = i, k, 1 - rk, j, c, hn
                        nh += 1
            if i + nmin < e:
                h = (h - values[i]) * binv + values[i + nmin] * topn
    return nh, len(row_tokens) - 1


@_njit
def longest_runs(train, train_offsets, bench, bench_offsets, pair_rows, pair_items, budget):
    """Per pair (train row, bench item): (length, train position, bench position) of the longest common
    run of ids (negative ids never match; ties: the smallest train position, then bench position), or
    length -1 when the pair has more than ``budget`` equal (train, bench) positions (the caller then
    uses the method for repetitive texts)."""
    npairs = len(pair_rows)
    out = np.zeros((npairs, 3), np.int64)
    for q in range(npairs):
        a = train[train_offsets[pair_rows[q]] : train_offsets[pair_rows[q] + 1]]
        b = bench[bench_offsets[pair_items[q]] : bench_offsets[pair_items[q] + 1]]
        out[q, 0], out[q, 1], out[q, 2] = 0, -1, -1
        if len(a) == 0 or len(b) == 0:
            continue
        order = np.argsort(b, kind="mergesort")
        sb = b[order]
        total = 0
        for i in range(len(a)):
            if a[i] >= 0:
                total += np.searchsorted(sb, a[i], "right") - np.searchsorted(sb, a[i], "left")
        if total > budget:
            out[q, 0] = -1
            continue
        # run length ending at (i, j), kept per diagonal i - j: the diagonal's last pair and its length
        last = np.full(len(a) + len(b), -2, np.int64)
        run = np.zeros(len(a) + len(b), np.int64)
        best, bi, bj = 0, -1, -1
        for i in range(len(a)):
            if a[i] < 0:
                continue
            lo = np.searchsorted(sb, a[i], "left")
            hi = np.searchsorted(sb, a[i], "right")
            for x in range(lo, hi):
                j = order[x]
                d = i - j + len(b)
                run[d] = run[d] + 1 if last[d] == i - 1 else 1
                last[d] = i
                length = run[d]
                si, sj = i - length + 1, j - length + 1
                if length > best or (length == best and (si < bi or (si == bi and sj < bj))):
                    best, bi, bj = length, si, sj
        out[q, 0], out[q, 1], out[q, 2] = best, bi, bj
    return out
