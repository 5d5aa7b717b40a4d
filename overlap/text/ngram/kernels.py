"""The scan's inner loops compiled with numba, used through :mod:`.jit` (which falls back to the numpy path
when numba is missing or cannot compile). Each loop computes exactly what the numpy path computes, in one
pass instead of a dozen whole-array passes:

* :func:`tokenise` (:mod:`.kernels_tokens`) - the tokens of every row and the values of the ASCII ones;
* :func:`window_hits` - the rolling hash of every smallest-n window inside a row, the prefilter, and for
  the windows that pass it the hash of every n looked up in the sorted table hashes (through a
  directory of their top bits): the candidate windows;
* :func:`verify_hits` - each candidate window compared word by word with the bench words of its table
  entries (a hash collision never makes a match);
* :func:`value_runs` - the pair view's longest common run of many (train row, bench item) pairs, found
  on the word values and then confirmed word by word;
* :func:`token_ids`, :func:`longest_runs` - the same by vocabulary ids, for the pairs it leaves open.
"""

from __future__ import annotations

import numpy as np

from .kernels_tokens import _ONE, U, _63, _njit, drop_right_quotes, right_quotes, tokenise

__all__ = ["drop_right_quotes", "find_sorted", "longest_runs", "right_quotes", "token_ids", "tokenise",
           "value_runs", "verify_hits", "window_hits"]

_GOLDEN = U(0x9E3779B97F4A7C15)  # a multiplier that spreads a value's bits into a table slot


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
            m = ((_ONE << ((h >> U(20)) & _63)) | (_ONE << ((h >> U(26)) & _63))  # index.BLOOM_FIELDS
                 | (_ONE << ((h >> U(32)) & _63)) | (_ONE << ((h >> U(38)) & _63)))
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
def longest_runs(train, train_offsets, bench, bench_offsets, pair_rows, pair_items, budget, vocab_size):
    """Per pair (train row, bench item): (length, train position, bench position) of the longest common
    run of ids (negative ids never match; ties: the smallest train position, then bench position), or
    length -1 when the pair has more than ``budget`` equal (train, bench) positions (the caller then
    uses the method for repetitive texts). Ids are below ``vocab_size``: the bench item's positions of an
    id are chained through two arrays of that size (no sort, no search per word)."""
    npairs = len(pair_rows)
    out = np.zeros((npairs, 3), np.int64)
    head = np.full(vocab_size, -1, np.int64)  # first position of an id in the bench item, -1: none
    count = np.zeros(vocab_size, np.int64)
    longest = 1
    for q in range(npairs):
        longest = max(longest, bench_offsets[pair_items[q] + 1] - bench_offsets[pair_items[q]])
    nxt = np.empty(longest, np.int64)  # the next position of the same id
    for q in range(npairs):
        a = train[train_offsets[pair_rows[q]] : train_offsets[pair_rows[q] + 1]]
        b = bench[bench_offsets[pair_items[q]] : bench_offsets[pair_items[q] + 1]]
        out[q, 0], out[q, 1], out[q, 2] = 0, -1, -1
        if len(a) == 0 or len(b) == 0:
            continue
        for j in range(len(b) - 1, -1, -1):
            x = b[j]
            if x >= 0:
                nxt[j] = head[x]
                head[x] = j
                count[x] += 1
        total = 0
        for i in range(len(a)):
            if a[i] >= 0:
                total += count[a[i]]
        if total > budget:
            out[q, 0] = -1
        else:
            # run length ending at (i, j), kept per diagonal i - j: the diagonal's last pair and its length
            last = np.full(len(a) + len(b), -2, np.int64)
            run = np.zeros(len(a) + len(b), np.int64)
            best, bi, bj = 0, -1, -1
            for i in range(len(a)):
                if a[i] < 0:
                    continue
                j = head[a[i]]
                while j >= 0:
                    d = i - j + len(b)
                    run[d] = run[d] + 1 if last[d] == i - 1 else 1
                    last[d] = i
                    length = run[d]
                    si, sj = i - length + 1, j - length + 1
                    if length > best or (length == best and (si < bi or (si == bi and sj < bj))):
                        best, bi, bj = length, si, sj
                    j = nxt[j]
            out[q, 0], out[q, 1], out[q, 2] = best, bi, bj
        for j in range(len(b)):
            if b[j] >= 0:
                head[b[j]] = -1
                count[b[j]] = 0
    return out


@_njit
def _ascii(data, s, e):
    for q in range(s, e):
        if data[q] >= 0x80:
            return False
    return True


@_njit
def _same_word(data, s, e, lowercase, vocab_data, vs):
    """Whether the train token ``data[s:e]`` (ASCII, lowercased when ``lowercase``) is the bench word at
    ``vocab_data[vs:]`` of the same length."""
    for q in range(e - s):
        c = data[s + q]
        if lowercase and 65 <= c <= 90:
            c += 32
        if c != vocab_data[vs + q]:
            return False
    return True


@_njit
def verify_hits(pos, kk, real, first, count, hsh, row_tokens, values, starts, ends, data, lowercase, ns,
                key_bounds, entry_pos, entry_item, bench_ids, bench_offsets, r64, vocab_data, vocab_offsets,
                o_row, o_pos, o_k, o_item, o_bpos, o_hash, o_real, u_hit, u_entry):
    """The candidate windows (``window_hits``'s arrays) whose words are those of a table entry, one output
    per (window, entry): row, position in the row, index of n, item (real entries), bench position in the
    item, window hash, real; returns (outputs, undecided). A train word is a bench word when it has the
    word's value and, unless it packs its bytes exactly (ASCII, at most 8 bytes, as long as the word), the
    same letters: ``BenchIndex.lookup_values``'s rule. A window whose only doubt is a non-ASCII word
    (Unicode lowercasing is Arrow's) is left undecided, as (hit, entry), for the caller."""
    nout = 0
    nund = 0
    nrows = len(row_tokens) - 1
    for q in range(len(pos)):
        c = pos[q]
        k = kk[q]
        n = ns[k]
        r = np.searchsorted(row_tokens, c, "right") - 1
        if r < 0 or r >= nrows or c + n > row_tokens[r + 1]:  # (never: windows stay inside their row)
            continue
        rk = 0 if real[q] else 1
        base = key_bounds[2 * k + rk]
        for e in range(first[q], first[q] + count[q]):
            bp = entry_pos[base + e]
            status = 1  # 1 the same words, 0 not, 2 undecided
            for t in range(n):
                i = c + t
                b = bench_ids[bp + t]
                if values[i] != r64[b + 1]:
                    status = 0
                    break
                s, en = starts[i], ends[i]
                length = en - s
                vs = vocab_offsets[b]
                same_length = vocab_offsets[b + 1] - vs == length
                if length <= 8 and same_length and _ascii(data, s, en):
                    continue
                if not _ascii(data, s, en):
                    status = 2
                    continue
                if not same_length or not _same_word(data, s, en, lowercase, vocab_data, vs):
                    status = 0
                    break
            if status == 1:
                item = entry_item[base + e]
                o_row[nout], o_pos[nout], o_k[nout], o_item[nout] = r, c - row_tokens[r], k, item
                o_bpos[nout] = bp - bench_offsets[item] if item >= 0 else bp
                o_hash[nout], o_real[nout] = hsh[q], real[q]
                nout += 1
            elif status == 2:
                u_hit[nund], u_entry[nund] = q, e
                nund += 1
    return nout, nund


@_njit
def token_ids(positions, values, starts, ends, data, lowercase, sorted_values, order, dirs, shift, vocab_data,
              vocab_offsets, out):
    """The bench vocabulary id of the train tokens at ``positions`` (-1: no bench word), by
    ``BenchIndex.lookup_values``'s rule (see ``verify_hits``); -2 where only Arrow's Unicode lowercasing can
    tell (a non-ASCII token with a bench word's value), for the caller. Returns how many are -2."""
    undecided = 0
    for q in range(len(positions)):
        p = positions[q]
        j, c = _find(sorted_values, 0, len(sorted_values), dirs, 0, shift, values[p])
        if c == 0:
            out[q] = -1
            continue
        b = order[j]
        s, e = starts[p], ends[p]
        vs = vocab_offsets[b]
        same_length = vocab_offsets[b + 1] - vs == e - s
        if not _ascii(data, s, e):
            out[q] = -2
            undecided += 1
        elif same_length and (e - s <= 8 or _same_word(data, s, e, lowercase, vocab_data, vs)):
            out[q] = b
        else:
            out[q] = -1
    return undecided


@_njit
def value_runs(values, row_tokens, starts, ends, data, lowercase, pair_rows, pair_items, bench_values, bench_ids,
               bench_offsets, vocab_data, vocab_offsets, budget):
    """``longest_runs`` of each pair (train row, bench item), on the word values: the bench item's values
    are chained by value in a small hash table, so no train word is looked up in the vocabulary. Equal
    words have equal values, so the longest run of equal values is at least the longest run of equal
    words; once its words are confirmed one by one (``verify_hits``'s rule) it is that run, and the
    earliest such. Length -1: over ``budget`` equal positions; -2: the run could not be confirmed here (a
    non-ASCII word, or two words with one value): the caller measures the pair by ids."""
    npairs = len(pair_rows)
    out = np.zeros((npairs, 3), np.int64)
    longest = 1
    for q in range(npairs):
        longest = max(longest, bench_offsets[pair_items[q] + 1] - bench_offsets[pair_items[q]])
    bits = 1
    while (1 << bits) < 2 * longest:
        bits += 1
    size = 1 << bits
    mask = size - 1
    keys = np.zeros(size, U)
    head = np.zeros(size, np.int64)
    count = np.zeros(size, np.int64)
    stamp = np.zeros(size, np.int64)  # == q + 1: the slot holds a value of pair q's bench item
    nxt = np.empty(longest, np.int64)
    slot_of = np.empty(0, np.int64)
    shift = U(64 - bits)
    for q in range(npairs):
        lo, hi = row_tokens[pair_rows[q]], row_tokens[pair_rows[q] + 1]
        bo = bench_offsets[pair_items[q]]
        nb = bench_offsets[pair_items[q] + 1] - bo
        out[q, 0], out[q, 1], out[q, 2] = 0, -1, -1
        if hi == lo or nb == 0:
            continue
        if len(slot_of) < hi - lo:
            slot_of = np.empty(2 * (hi - lo), np.int64)
        for j in range(nb - 1, -1, -1):
            v = bench_values[bo + j]
            t = np.int64((v * _GOLDEN) >> shift)
            while stamp[t] == q + 1 and keys[t] != v:
                t = (t + 1) & mask
            if stamp[t] != q + 1:
                stamp[t], keys[t], head[t], count[t] = q + 1, v, -1, 0
            nxt[j] = head[t]
            head[t] = j
            count[t] += 1
        total = 0
        for i in range(hi - lo):
            v = values[lo + i]
            t = np.int64((v * _GOLDEN) >> shift)
            while stamp[t] == q + 1 and keys[t] != v:
                t = (t + 1) & mask
            slot_of[i] = t if stamp[t] == q + 1 else -1
            if slot_of[i] >= 0:
                total += count[t]
        if total > budget:
            out[q, 0] = -1
            continue
        last = np.full(hi - lo + nb, -2, np.int64)
        run = np.zeros(hi - lo + nb, np.int64)
        best, bi, bj = 0, -1, -1
        for i in range(hi - lo):
            if slot_of[i] < 0:
                continue
            j = head[slot_of[i]]
            while j >= 0:
                d = i - j + nb
                run[d] = run[d] + 1 if last[d] == i - 1 else 1
                last[d] = i
                length = run[d]
                si, sj = i - length + 1, j - length + 1
                if length > best or (length == best and (si < bi or (si == bi and sj < bj))):
                    best, bi, bj = length, si, sj
                j = nxt[j]
        for t in range(best):  # the run's words, one by one
            i = lo + bi + t
            b = bench_ids[bo + bj + t]
            s, e = starts[i], ends[i]
            vs = vocab_offsets[b]
            if not _ascii(data, s, e) or vocab_offsets[b + 1] - vs != e - s or (
                    e - s > 8 and not _same_word(data, s, e, lowercase, vocab_data, vs)):
                best = -2
                break
        out[q, 0], out[q, 1], out[q, 2] = best, bi, bj
    return out
