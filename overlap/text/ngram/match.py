"""Matching train token ids against the bench index, and turning the matches into flags.

Every candidate window (one that passes the pre-filter and whose hash is in a table) is **verified token
by token** against the bench item and checked not to cross a row, so a hash collision can never make a
flag. On the train side, a real match whose window touches a span matching a boilerplate n-gram is not
a flag; boilerplate hits are reported apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .hashing import U64, gather_windows, hashes_at, prefix_hashes, window_hashes
from .index import BenchIndex, NgramTable


@dataclass
class WindowMatches:
    """Raw verified window matches of a chunk, positions relative to their row."""

    row: list = field(default_factory=list)
    pos: list = field(default_factory=list)
    n: list = field(default_factory=list)
    item: list = field(default_factory=list)
    bpos: list = field(default_factory=list)
    hash: list = field(default_factory=list)
    bp_row: list = field(default_factory=list)
    bp_pos: list = field(default_factory=list)
    bp_n: list = field(default_factory=list)

    def cat(self, name: str, dtype) -> np.ndarray:
        parts = getattr(self, name)
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def match_windows(index: BenchIndex, ids, row_offsets: np.ndarray, acc: WindowMatches,
                  row_base: np.ndarray | None = None, pos_shift: int = 0, min_end: int = 0) -> None:
    """Find verified real and boilerplate matches of all windows in ``ids`` (rows by ``row_offsets``).

    ``ids``: the token ids, or an object with the token values (``values``) that looks ids up on demand
    (``ids_at``: only the windows found in a table are verified, so only their ids are needed).
    ``min_end``: only windows that reach past this many leading tokens (the ones the previous block had).
    ``row_base``/``pos_shift``: how flat positions map to (row, position in row).
    """
    hashed = window_candidates(index, ids)
    if hashed is not None:
        look_up_windows(index, ids, row_offsets, acc, *hashed, row_base=row_base, pos_shift=pos_shift,
                        min_end=min_end)


def record_hits(index: BenchIndex, ids, row_offsets: np.ndarray, acc: WindowMatches, hits) -> None:
    """Verify the candidate windows the compiled path found (``jit.Hits``) and keep the exact matches."""
    if not len(hits.pos):
        return
    for n in index.ns:
        for real in (True, False):
            sel = np.flatnonzero((hits.n == n) & (hits.real == real))
            if len(sel):
                c = hits.pos[sel]
                row = np.searchsorted(row_offsets, c, side="right") - 1
                keep_verified(index, index.tables[n], real, ids, c, row, hits.first[sel], hits.count[sel],
                              hits.hash[sel], row_offsets, acc)


def window_candidates(index: BenchIndex, ids) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The hash stage: (prefix hashes, hashes of the smallest-n windows, the windows that pass the
    pre-filter), or None when there are fewer tokens than the smallest n."""
    nmin = min(index.ns)
    if len(ids) < nmin:
        return None
    prefix = prefix_hashes(ids, index.r64)
    hmin = window_hashes(prefix, nmin)
    return prefix, hmin, index.passes_prefilter(hmin)  # ~1-3% of the windows: all the rest cannot match


def look_up_windows(index: BenchIndex, ids, row_offsets: np.ndarray, acc: WindowMatches, prefix: np.ndarray,
                    hmin: np.ndarray, first: np.ndarray, *, row_base: np.ndarray | None = None, pos_shift: int = 0,
                    min_end: int = 0) -> None:
    """The look-up stage: the pre-filtered windows of every n in the tables, verified word by word."""
    nmin = min(index.ns)
    for n in index.ns:
        if n == nmin:
            cand, hc = first, hmin[first]
        else:
            cand = first[first + n <= len(ids)]
            hc = hashes_at(prefix, cand, n)
        if min_end:
            keep = cand + n > min_end
            cand, hc = cand[keep], hc[keep]
        if len(cand) == 0:
            continue
        # the window must stay inside its row
        row = np.searchsorted(row_offsets, cand, side="right") - 1
        inside = cand + n <= row_offsets[row + 1]
        cand, hc, row = cand[inside], hc[inside], row[inside]
        for real in (True, False):
            _verified_hits(index, index.tables[n], real, ids, cand, hc, row, row_offsets, acc, row_base, pos_shift)


def _verified_hits(index: BenchIndex, table: NgramTable, real: bool, ids, cand: np.ndarray,
                   hc: np.ndarray, row: np.ndarray, row_offsets: np.ndarray, acc: WindowMatches,
                   row_base: np.ndarray | None, pos_shift: int) -> None:
    """Look the candidate windows up in the real or the boilerplate hashes of one n; keep exact matches."""
    keys = table.real_hash if real else table.bp_hash
    if len(keys) == 0 or len(cand) == 0:
        return
    # (the needles sorted first: a binary search over ordered needles stays in cache)
    order = np.argsort(hc)
    lo = np.empty(len(hc), np.int64)
    lo[order] = np.searchsorted(keys, hc[order], side="left")
    hit = np.flatnonzero(keys[np.minimum(lo, len(keys) - 1)] == hc)
    if not len(hit):
        return
    cnt = np.searchsorted(keys, hc[hit], side="right") - lo[hit]
    keep_verified(index, table, real, ids, cand[hit], row[hit], lo[hit], cnt, hc[hit], row_offsets, acc,
                  row_base, pos_shift)


def keep_verified(index: BenchIndex, table: NgramTable, real: bool, ids, c: np.ndarray, r: np.ndarray,
                  first: np.ndarray, count: np.ndarray, hh: np.ndarray, row_offsets: np.ndarray,
                  acc: WindowMatches, row_base: np.ndarray | None = None, pos_shift: int = 0) -> None:
    """Windows at ``c`` (in rows ``r``) whose hash ``hh`` is at table entries ``first .. first + count``:
    keep the (window, entry) pairs whose words are the entry's bench words, word by word."""
    n = table.n
    # one row per (candidate, table entry with its hash): a hash can have postings in several items
    rep = np.repeat(np.arange(len(c)), count)
    within = np.arange(len(rep)) - np.repeat(np.cumsum(count) - count, count)
    entry = first[rep] + within
    c, r, hh = c[rep], r[rep], hh[rep]
    bpos = (table.real_pos if real else table.bp_pos)[entry]
    ok = (gather_windows(ids, c, n) == gather_windows(index.ids, bpos, n)).all(1)
    if not ok.any():
        return
    c, r, entry, bpos, hh = c[ok], r[ok], entry[ok], bpos[ok], hh[ok]
    rows = row_base[r] if row_base is not None else r
    pos = c - row_offsets[r] + pos_shift
    if real:
        acc.row.append(rows)
        acc.pos.append(pos)
        acc.n.append(np.full(len(c), n, np.int32))
        acc.item.append(table.real_item[entry])
        acc.bpos.append(bpos - index.offsets[table.real_item[entry]])
        acc.hash.append(hh)
    else:
        acc.bp_row.append(rows)
        acc.bp_pos.append(pos)
        acc.bp_n.append(np.full(len(c), n, np.int32))


def finish_matches(index: BenchIndex, acc: WindowMatches) -> dict[str, np.ndarray]:
    """Mask real matches by boilerplate spans, then aggregate per (row, n, bench item): the shared n-grams
    and the longest run of shared windows (the flag's span)."""
    row, pos, n, item = acc.cat("row", np.int64), acc.cat("pos", np.int64), acc.cat("n", np.int32), acc.cat(
        "item", np.int32)
    bpos, hsh = acc.cat("bpos", np.int64), acc.cat("hash", U64)
    bp_row, bp_pos, bp_n = acc.cat("bp_row", np.int64), acc.cat("bp_pos", np.int64), acc.cat("bp_n", np.int32)
    if len(row) and len(bp_row) and index.mask_spans:
        keep = ~_touches_spans(row, pos, n, bp_row, bp_pos, bp_n)
        row, pos, n, item, bpos, hsh = row[keep], pos[keep], n[keep], item[keep], bpos[keep], hsh[keep]
    out = _boilerplate_hits(bp_row, bp_pos, bp_n) if len(bp_row) else {}
    if len(row):
        out.update(_flags(row, pos, n, item, bpos, hsh))
    return out


def _touches_spans(row, pos, n, bp_row, bp_pos, bp_n) -> np.ndarray:
    """bool per window [pos, pos+n) of a row: overlaps one of the boilerplate windows of that row."""
    # the boilerplate windows merged into disjoint intervals on one (row, position) line
    big = np.int64(1) << 40
    s = bp_row * big + bp_pos
    e = s + bp_n
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    e = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > e[:-1]
    gid = np.cumsum(new) - 1
    ms = s[new]
    me = np.zeros(len(ms), dtype=np.int64)
    np.maximum.at(me, gid, e)
    a = row * big + pos
    k = np.searchsorted(ms, a + n, side="left") - 1
    return (k >= 0) & (me[np.maximum(k, 0)] > a)


def _boilerplate_hits(bp_row, bp_pos, bp_n) -> dict[str, np.ndarray]:
    """Boilerplate hits per (row, n): count, first start and last end."""
    order = np.lexsort((bp_pos, bp_n, bp_row))
    br, bn, bps = bp_row[order], bp_n[order], bp_pos[order]
    first = np.ones(len(br), dtype=bool)
    first[1:] = (br[1:] != br[:-1]) | (bn[1:] != bn[:-1])
    gid = np.cumsum(first) - 1
    last = np.zeros(int(gid[-1]) + 1, dtype=np.int64)
    np.maximum.at(last, gid, bps + bn)
    return {"bp_row": br[first], "bp_n": bn[first], "bp_hits": np.bincount(gid), "bp_start": bps[first],
            "bp_end": last}


def _flags(row, pos, n, item, bpos, hsh) -> dict[str, np.ndarray]:
    """One flag per (row, n, bench item): distinct shared n-grams, and the longest run of shared windows
    (ties: the earliest in the train text, then in the bench text)."""
    order = np.lexsort((hsh, item, n, row))
    r_, n_, i_, h_ = row[order], n[order], item[order], hsh[order]
    grp = np.ones(len(r_), dtype=bool)
    grp[1:] = (r_[1:] != r_[:-1]) | (n_[1:] != n_[:-1]) | (i_[1:] != i_[:-1])
    distinct = grp.copy()
    distinct[1:] |= h_[1:] != h_[:-1]
    gid = np.cumsum(grp) - 1
    shared = np.bincount(gid[distinct], minlength=int(gid[-1]) + 1)
    # runs: consecutive windows on one diagonal (train and bench positions both +1)
    diag = pos - bpos
    order = np.lexsort((pos, diag, item, n, row))
    r_, n_, i_, p_, b_, d_ = row[order], n[order], item[order], pos[order], bpos[order], diag[order]
    grp = np.ones(len(r_), dtype=bool)
    grp[1:] = (r_[1:] != r_[:-1]) | (n_[1:] != n_[:-1]) | (i_[1:] != i_[:-1])
    brk = grp.copy()
    brk[1:] |= (d_[1:] != d_[:-1]) | (p_[1:] != p_[:-1] + 1)
    run_id = np.cumsum(brk) - 1
    run_len = np.bincount(run_id)
    starts = np.flatnonzero(brk)  # first window of each run
    run_grp = (np.cumsum(grp) - 1)[starts]
    o = np.lexsort((b_[starts], p_[starts], -run_len, run_grp))  # per flag: longest, earliest first
    g = run_grp[o]
    first = np.ones(len(o), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    best = starts[o[first]]
    span = run_len[run_id[best]] + n_[best] - 1
    return {"row": r_[best], "n": n_[best], "item": i_[best], "shared": shared,
            "train_start": p_[best], "train_end": p_[best] + span,
            "bench_start": b_[best], "bench_end": b_[best] + span}
