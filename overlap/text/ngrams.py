"""Bench n-gram index and a streamed, attributed train scan.

Design (issue 5):

* The bench side (small, in memory) is tokenised and its words get **vocabulary ids**. A train word that
  no bench item uses can never be part of a shared n-gram, so it gets id -1 and breaks every window.
* Each word id has a random 64-bit value ``r``; the hash of the window ``w[i:i+n]`` is
  ``sum_t r[w[i+t]] * B**t (mod 2**64)``, computed for all windows of a chunk at once from one prefix sum
  (``(P[i+n] - P[i]) * B**-i``), so the cost per token does not grow with n and both n share the prefix.
* A bool table indexed by the top bits of the hash is a **pre-filter** (~2% of windows pass); the
  survivors are looked up with ``searchsorted`` in the sorted bench hashes, and every hit is **verified
  token by token** against the bench item (and checked not to cross a row), so a hash collision can
  never make a flag.
* **Boilerplate**: an n-gram in >= T distinct bench items, or in a background corpus, is boilerplate.
  The tokens such n-grams cover (of any configured n) are masked as *spans*: on the bench side, windows
  touching a masked token leave the index; on the train side, a window that touches a train span that
  matches a boilerplate n-gram is not a flag. Boilerplate hits are reported apart from flags.
* The train side streams in chunks (rows of bounded total bytes) through a process pool; an item
  larger than the chunk budget is read in byte blocks with an n-1 token overlap, so memory is bounded by
  the chunk size, not by the largest item.

Every flag names the bench item and the token spans (train and bench) of its first shared run.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .runs import longest_common_run
from .tokenize import (
    Tokenizer,
    _buffers,
    _prepare,
    compact_tokens,
    get_tokenizer,
    to_string_array,
    token_spans,
    tokenize_flat,
)

__all__ = [
    "DEFAULT_BOILERPLATE_THRESHOLD",
    "DEFAULT_NS",
    "BenchIndex",
    "ScanResult",
    "build_index",
    "scan",
]

DEFAULT_NS = (13, 8)
# An n-gram in this many distinct bench items or more is boilerplate. Why 5: a copied bench text is
# specific to its item and to the item's duplicates, and benchmarks do carry duplicates (one issue
# solved by 2-3 PRs in SWE-bench, one bug listed under two ids in CyberGym / SEC-bench), so T must be
# above 3 or real copies of duplicated items would be masked. Templates and stock phrasing recur far
# more often (an issue form in every issue of a repo, an LLM formula in dozens of descriptions), and
# each one below T can still flag, so T should be as low as the duplicates allow. Masking a shared span
# costs little recall: a real copy still flags on its item-specific words. Raise T for benches with
# more duplication; a background corpus catches generic boilerplate that is rare inside the bench.
DEFAULT_BOILERPLATE_THRESHOLD = 5
HASH_SEED = 20240613
_MOD = 1 << 64
_B = 0x9E3779B97F4A7C15  # odd, so invertible mod 2**64
_BINV = pow(_B, -1, _MOD)
_U64 = np.uint64

# chunking of the train side (bytes of text per task; rows per task)
CHUNK_BYTES = 4 << 20
CHUNK_ROWS = 4096
LONG_ROW_BYTES = 8 << 20  # a row above this is scanned in blocks
BLOCK_BYTES = 4 << 20


# --------------------------------------------------------------------------------------------------
# hashing


class _Powers:
    """B**i and B**-i mod 2**64 for i < size, grown by doubling."""

    def __init__(self) -> None:
        self.pow = np.ones(1, dtype=_U64)
        self.inv = np.ones(1, dtype=_U64)

    def get(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        if size > len(self.pow):
            new = max(size, 2 * len(self.pow), 1 << 16)
            with np.errstate(over="ignore"):
                p = np.full(new, _U64(_B))
                p[0] = 1
                self.pow = np.cumprod(p, dtype=_U64)
                q = np.full(new, _U64(_BINV))
                q[0] = 1
                self.inv = np.cumprod(q, dtype=_U64)
        return self.pow[:size], self.inv[:size]


_POWERS = _Powers()


def _prefix(ids: np.ndarray, r64: np.ndarray) -> np.ndarray:
    """P[k] = sum_{j<k} r[ids[j]] * B**j (mod 2**64), len(ids)+1 values."""
    n = len(ids)
    bpow, _ = _POWERS.get(n + 1)
    out = np.empty(n + 1, dtype=_U64)
    out[0] = 0
    vals = r64[ids + 1]  # ids == -1 (unseen) -> r64[0] == 0
    np.multiply(vals, bpow[:n], out=vals)
    np.cumsum(vals, out=out[1:])
    return out


def _window_hashes(prefix: np.ndarray, n: int) -> np.ndarray:
    """Hash of every window of n tokens, position independent (len(prefix) - n values)."""
    m = len(prefix) - n
    if m <= 0:
        return np.zeros(0, dtype=_U64)
    _, binv = _POWERS.get(m)
    h = np.subtract(prefix[n:], prefix[:m])
    np.multiply(h, binv, out=h)
    return h


def _gather_windows(ids: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    return ids[starts[:, None] + np.arange(n)]


# --------------------------------------------------------------------------------------------------
# the bench index


@dataclass
class NgramTable:
    """Sorted hashes of one n: real (with postings) and boilerplate (with one bench occurrence each)."""

    n: int
    real_hash: np.ndarray  # uint64, sorted; several entries per hash when several bench items share it
    real_item: np.ndarray  # int32 bench item index
    real_pos: np.ndarray  # int64 flat position in the bench token ids (first occurrence in that item)
    bp_hash: np.ndarray  # uint64, sorted, unique
    bp_pos: np.ndarray  # int64 flat position of one occurrence (for verification)
    bp_items: np.ndarray  # int32 number of bench items holding it
    bp_background: np.ndarray  # bool: found in the background corpus


@dataclass
class BenchIndex:
    """Everything a scan worker needs about the bench side. Picklable; holds no pandas objects."""

    ns: tuple[int, ...]
    tokenizer: Tokenizer
    threshold: int | None
    mask_spans: bool
    item_ids: list[str]
    vocab: pa.Array  # string array of distinct bench tokens; id = position
    r64: np.ndarray  # uint64 random value per id + 1 (slot 0 = unseen = 0)
    ids: np.ndarray  # int32 bench token ids, items back to back
    offsets: np.ndarray  # int64 len items+1
    masked: np.ndarray  # bool per bench token: inside a boilerplate span
    tables: dict[int, NgramTable]
    giant_token_bytes: int  # a token longer than this (in input bytes) can never be a bench word
    stats: dict = field(default_factory=dict)
    min_hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # all bench windows, min n
    filter_bits: int = 20
    _filter: np.ndarray | None = field(default=None, repr=False)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_filter"] = None  # rebuilt where used: cheaper than shipping it to each worker
        return state

    @property
    def prefilter(self) -> np.ndarray:
        """Packed bit table over the top ``filter_bits`` bits of every bench window hash of the smallest n.

        Every window of a larger n that matches a bench n-gram starts with a bench window of the smallest
        n, so one table (and one full pass over the train windows) serves all n.
        """
        if self._filter is None:
            packed = np.zeros(1 << max(self.filter_bits - 3, 0), dtype=np.uint8)
            i = np.unique(self.min_hashes >> _U64(64 - self.filter_bits))
            np.bitwise_or.at(packed, i >> _U64(3), np.left_shift(1, (i & _U64(7)).astype(np.uint8)).astype(np.uint8))
            self._filter = packed
        return self._filter

    def passes_prefilter(self, h: np.ndarray) -> np.ndarray:
        """Positions of the hashes that may be bench windows of the smallest n."""
        i = h >> _U64(64 - self.filter_bits)
        byte = self.prefilter[i >> _U64(3)]
        np.right_shift(byte, (i & _U64(7)).astype(np.uint8), out=byte)
        return np.flatnonzero(byte & np.uint8(1))

    def words(self, start: int, stop: int) -> str:
        """The bench words at flat token positions [start, stop)."""
        return self.words_many(np.array([start]), np.array([stop]))[0]

    def words_many(self, starts, stops, cap: int | None = None) -> list[str]:
        """Bench words of many flat [start, stop) spans, joined by spaces (one vectorised take)."""
        starts = np.asarray(starts, dtype=np.int64)
        stops = np.maximum(np.asarray(stops, dtype=np.int64), starts)
        if cap is not None:
            cut = stops - starts > cap
            stops = np.where(cut, starts + cap, stops)
        lengths = stops - starts
        total = int(lengths.sum())
        if len(starts) == 0:
            return []
        offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        pos = np.repeat(starts - offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
        values = self.vocab.take(pa.array(self.ids[pos]))
        lists = pa.LargeListArray.from_arrays(pa.array(offsets), values)
        out = pc.binary_join(lists, " ").to_pylist()
        if cap is not None:
            out = [t + " …" if c else t for t, c in zip(out, cut.tolist(), strict=True)]
        return out

    def lookup(self, tokens: pa.Array) -> np.ndarray:
        """Bench vocabulary id of each token, -1 for words no bench item uses."""
        if len(tokens) == 0:
            return np.zeros(0, dtype=np.int32)
        idx = pc.index_in(tokens, value_set=self.vocab)
        if idx.null_count:
            idx = pc.fill_null(idx, -1)
        return idx.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)


def _row_window_starts(offsets: np.ndarray, n: int) -> np.ndarray:
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


def _spans_mask(length: int, starts: np.ndarray, n: int | np.ndarray) -> np.ndarray:
    """bool[length]: positions covered by any [start, start+n)."""
    diff = np.zeros(length + 1, dtype=np.int32)
    np.add.at(diff, starts, 1)
    np.add.at(diff, starts + n, -1)
    return np.cumsum(diff[:-1]) > 0


def _iter_text_chunks(texts) -> Iterator[pa.Array]:
    """Background corpus -> string arrays of bounded size."""
    if texts is None:
        return
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        chunks = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
        for chunk in chunks:
            for start in range(0, len(chunk), CHUNK_ROWS):
                yield to_string_array(chunk.slice(start, CHUNK_ROWS))[0]
        return
    if isinstance(texts, str):
        texts = [texts]
    if hasattr(texts, "to_list") and hasattr(texts, "iloc"):  # pandas Series
        texts = texts.to_list()
    if isinstance(texts, Sequence):
        for start in range(0, len(texts), CHUNK_ROWS):
            yield to_string_array(list(texts[start : start + CHUNK_ROWS]))[0]
        return
    buf: list = []
    for item in texts:  # an iterable of str, or of Arrow arrays / record batches
        if isinstance(item, pa.RecordBatch):
            item = item.column(0)
        if isinstance(item, (pa.Array, pa.ChunkedArray)):
            yield from _iter_text_chunks(item)
            continue
        buf.append(item)
        if len(buf) >= CHUNK_ROWS:
            yield to_string_array(buf)[0]
            buf = []
    if buf:
        yield to_string_array(buf)[0]


def build_index(
    texts,
    item_ids: Sequence[str],
    *,
    ns: Sequence[int] = DEFAULT_NS,
    boilerplate_threshold: int | None = DEFAULT_BOILERPLATE_THRESHOLD,
    background=None,
    tokenizer: str | Tokenizer | None = None,
    mask_spans: bool = True,
) -> BenchIndex:
    """Index the bench texts (one per item; null = no text)."""
    ns = tuple(sorted({int(n) for n in ns}, reverse=True))
    if not ns or min(ns) < 1:
        raise ValueError("n-gram sizes must be positive integers")
    if boilerplate_threshold is not None and boilerplate_threshold < 2:
        raise ValueError("the boilerplate threshold counts bench items and must be >= 2 (or None)")
    tok = get_tokenizer(tokenizer)
    arr, non_utf8 = to_string_array(texts)
    n_items = len(arr)
    if len(item_ids) != n_items:
        raise ValueError("one item id per bench text is needed")
    nulls = arr.null_count
    toks = tokenize_flat(arr, tok)
    offsets = toks.offsets
    counts = np.diff(offsets)
    vocab = pc.unique(toks.tokens) if len(toks.tokens) else pa.array([], pa.string())
    if pa.types.is_large_string(vocab.type):
        vocab = vocab.cast(pa.string())
    rng = np.random.default_rng(HASH_SEED)
    r64 = rng.integers(1, np.iinfo(np.uint64).max, size=len(vocab) + 1, dtype=np.uint64, endpoint=True)
    r64[0] = 0
    index = BenchIndex(
        ns=ns, tokenizer=tok, threshold=boilerplate_threshold, mask_spans=mask_spans,
        item_ids=[str(i) for i in item_ids], vocab=vocab, r64=r64, ids=np.zeros(0, np.int32),
        offsets=offsets, masked=np.zeros(0, bool), tables={}, giant_token_bytes=0,
    )
    ids = index.lookup(toks.tokens)
    index.ids = ids
    maxlen = int(pc.max(pc.binary_length(vocab)).as_py() or 0) if len(vocab) else 0
    index.giant_token_bytes = 3 * maxlen + 16  # lowercasing can shrink a character to a third

    # all windows of every n, with their hash, item and position
    prefix = _prefix(ids, r64)
    windows: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    item_of = np.repeat(np.arange(n_items, dtype=np.int32), counts)
    for n in ns:
        starts = _row_window_starts(offsets, n)
        hashes = _window_hashes(prefix, n)[starts] if len(starts) else np.zeros(0, _U64)
        windows[n] = (hashes, item_of[starts] if len(starts) else np.zeros(0, np.int32), starts)

    # boilerplate: document frequency >= T, or seen in the background corpus
    bp: dict[int, dict[str, np.ndarray]] = {}
    for n, (hashes, items, starts) in windows.items():
        if len(hashes) == 0:
            bp[n] = {"hash": np.zeros(0, _U64), "pos": np.zeros(0, np.int64), "items": np.zeros(0, np.int32),
                     "background": np.zeros(0, bool)}
            continue
        order = np.lexsort((starts, items, hashes))
        h_sorted, i_sorted = hashes[order], items[order]
        new_hash = np.ones(len(order), dtype=bool)
        new_hash[1:] = h_sorted[1:] != h_sorted[:-1]
        new_pair = new_hash.copy()
        new_pair[1:] |= i_sorted[1:] != i_sorted[:-1]
        # distinct items per distinct hash
        hash_id = np.cumsum(new_hash) - 1
        df = np.bincount(hash_id[new_pair], minlength=int(hash_id[-1]) + 1)
        uniq = h_sorted[new_hash]
        first_pos = starts[order][new_hash]
        frequent = df >= boilerplate_threshold if boilerplate_threshold else np.zeros(len(uniq), bool)
        bp[n] = {"uniq": uniq, "df": df, "first_pos": first_pos, "frequent": frequent,
                 "background": np.zeros(len(uniq), bool)}
    background_rows = 0
    if background is not None:
        for chunk in _iter_text_chunks(background):
            background_rows += len(chunk)
            btoks = tokenize_flat(chunk, tok)
            bids = index.lookup(btoks.tokens)
            bprefix = _prefix(bids, r64)
            for n in ns:
                entry = bp[n]
                if "uniq" not in entry or len(entry["uniq"]) == 0:
                    continue
                bstarts = _row_window_starts(btoks.offsets, n)
                if len(bstarts) == 0:
                    continue
                bh = _window_hashes(bprefix, n)[bstarts]
                k = np.searchsorted(entry["uniq"], bh)
                k = np.minimum(k, len(entry["uniq"]) - 1)
                hit = entry["uniq"][k] == bh
                if not hit.any():
                    continue
                cand, kk = bstarts[hit], k[hit]
                ok = (_gather_windows(bids, cand, n) == _gather_windows(ids, entry["first_pos"][kk], n)).all(1)
                entry["background"][kk[ok]] = True

    # boilerplate spans on the bench side (union over all n)
    masked = np.zeros(len(ids), dtype=bool)
    for n, (hashes, _items, starts) in windows.items():
        entry = bp[n]
        if "uniq" not in entry:
            continue
        is_bp = entry["frequent"] | entry["background"]
        if not is_bp.any():
            continue
        k = np.searchsorted(entry["uniq"], hashes)
        win_bp = is_bp[k]
        if mask_spans:
            masked |= _spans_mask(len(ids), starts[win_bp], n)
    masked_prefix = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(masked, out=masked_prefix[1:])
    index.masked = masked

    tables: dict[int, NgramTable] = {}
    for n, (hashes, items, starts) in windows.items():
        entry = bp[n]
        if "uniq" not in entry:
            tables[n] = NgramTable(n, np.zeros(0, _U64), np.zeros(0, np.int32), np.zeros(0, np.int64),
                                   np.zeros(0, _U64), np.zeros(0, np.int64), np.zeros(0, np.int32),
                                   np.zeros(0, bool))
            continue
        is_bp = entry["frequent"] | entry["background"]
        k = np.searchsorted(entry["uniq"], hashes)
        keep = ~is_bp[k] & (masked_prefix[starts + n] - masked_prefix[starts] == 0)
        h, it, st = hashes[keep], items[keep], starts[keep]
        order = np.lexsort((st, it, h))
        h, it, st = h[order], it[order], st[order]
        first = np.ones(len(h), dtype=bool)  # first occurrence of each (n-gram, item)
        first[1:] = (h[1:] != h[:-1]) | (it[1:] != it[:-1])
        same = np.flatnonzero(~first)
        if len(same):  # equal hashes in one item: drop the repeat only if the words are equal too
            differ = (_gather_windows(ids, st[same], n) != _gather_windows(ids, st[same - 1], n)).any(1)
            first[same[differ]] = True
        tables[n] = NgramTable(
            n=n, real_hash=h[first], real_item=it[first], real_pos=st[first],
            bp_hash=entry["uniq"][is_bp], bp_pos=entry["first_pos"][is_bp],
            bp_items=entry["df"][is_bp].astype(np.int32),
            bp_background=entry["background"][is_bp],
        )
    index.tables = tables
    nmin = min(ns)
    index.min_hashes = np.unique(windows[nmin][0]) if len(windows[nmin][0]) else np.zeros(0, _U64)
    index.filter_bits = int(min(27, max(16, np.ceil(np.log2(max(len(index.min_hashes), 1) * 64)))))

    # statistics for the report
    valid = np.ones(n_items, dtype=bool)
    if nulls or non_utf8:
        valid = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False))
    short = {n: int(((counts < n) & valid).sum()) for n in ns}
    short_ids = {n: [index.item_ids[i] for i in np.flatnonzero((counts < n) & valid)] for n in ns}
    items_masked = np.zeros(n_items, dtype=bool)
    if masked.any():
        items_masked[item_of[masked]] = True
    release_memory()
    index.stats = {
        "items": n_items,
        "null": int(nulls - non_utf8),
        "non_utf8": int(non_utf8),
        "empty": int(((counts == 0) & valid).sum()),
        "tokens": int(len(ids)),
        "vocabulary": int(len(vocab)),
        "short": short,
        "short_ids": short_ids,
        "boilerplate_ngrams": {
            n: {
                "total": int(len(t.bp_hash)),
                "frequent": int((t.bp_items >= boilerplate_threshold).sum()) if boilerplate_threshold else 0,
                "background": int(t.bp_background.sum()),
            }
            for n, t in tables.items()
        },
        "masked_tokens": int(masked.sum()),
        "items_with_boilerplate": int(items_masked.sum()),
        "background_rows": background_rows,
        "boilerplate_spans": _top_spans(index, masked, item_of),
    }
    return index


def _top_spans(index: BenchIndex, masked: np.ndarray, item_of: np.ndarray, top: int = 20) -> list[dict]:
    """The most common masked spans of the bench (what the boilerplate is), with how many items hold them."""
    if not masked.any():
        return []
    m8 = masked.view(np.int8)
    edges = np.flatnonzero(np.diff(m8, prepend=np.int8(0), append=np.int8(0)))
    starts, ends = edges[0::2], edges[1::2]
    # spans never cross items: cut at item starts
    cuts = index.offsets[1:-1]
    cuts = cuts[(cuts > 0) & (cuts < len(masked))]
    cuts = cuts[masked[cuts] & masked[cuts - 1]]
    if len(cuts):
        cuts = np.unique(cuts)
        starts = np.sort(np.concatenate([starts, cuts]))
        ends = np.sort(np.concatenate([ends, cuts]))
    texts = index.words_many(starts, ends, cap=64)
    items = item_of[starts]
    counts: dict[str, set] = {}
    for t, it in zip(texts, items.tolist(), strict=True):
        counts.setdefault(t, set()).add(it)
    ranked = sorted(counts.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
    return [{"words": w, "bench_items": len(holders)} for w, holders in ranked]


# --------------------------------------------------------------------------------------------------
# scanning one chunk of train rows (runs in the worker processes)


@dataclass
class _Matches:
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


def _match_windows(index: BenchIndex, ids: np.ndarray, row_offsets: np.ndarray, acc: _Matches,
                   row_base: np.ndarray | None = None, pos_shift: int = 0, min_end: int = 0) -> None:
    """Find verified real and boilerplate matches of all windows in ``ids`` (rows by ``row_offsets``).

    ``min_end``: only windows that reach past this many leading tokens (the ones the previous block had).
    ``row_base``/``pos_shift``: how flat positions map to (row, position in row).
    """
    if len(ids) == 0:
        return
    nmin = min(index.ns)
    if len(ids) < nmin:
        return
    prefix = _prefix(ids, index.r64)
    hmin = _window_hashes(prefix, nmin)
    first = index.passes_prefilter(hmin)  # ~1-3% of the windows: all the rest cannot match
    total = len(ids)
    for n in index.ns:
        t = index.tables[n]
        if n == nmin:
            cand = first
            hc = hmin[cand]
        else:
            cand = first[first + n <= total]
            _, binv = _POWERS.get(total + 1)
            hc = (prefix[cand + n] - prefix[cand]) * binv[cand]
        if min_end:
            keep = cand + n > min_end
            cand, hc = cand[keep], hc[keep]
        if len(cand) == 0:
            continue
        # the window must stay inside its row
        row = np.searchsorted(row_offsets, cand, side="right") - 1
        inside = cand + n <= row_offsets[row + 1]
        cand, hc, row = cand[inside], hc[inside], row[inside]
        for kind in ("real", "bp"):
            keys = t.real_hash if kind == "real" else t.bp_hash
            if len(keys) == 0 or len(cand) == 0:
                continue
            lo = np.searchsorted(keys, hc, side="left")
            hi = np.searchsorted(keys, hc, side="right")
            cnt = hi - lo
            hit = cnt > 0
            if not hit.any():
                continue
            c, r, lo_h, cnt_h, hh = cand[hit], row[hit], lo[hit], cnt[hit], hc[hit]
            rep = np.repeat(np.arange(len(c)), cnt_h)
            within = np.arange(len(rep)) - np.repeat(np.cumsum(cnt_h) - cnt_h, cnt_h)
            entry = lo_h[rep] + within
            c, r, hh = c[rep], r[rep], hh[rep]
            bpos = (t.real_pos if kind == "real" else t.bp_pos)[entry]
            ok = (_gather_windows(ids, c, n) == _gather_windows(index.ids, bpos, n)).all(1)
            if not ok.any():
                continue
            c, r, entry, bpos, hh = c[ok], r[ok], entry[ok], bpos[ok], hh[ok]
            rows = row_base[r] if row_base is not None else r
            pos = c - row_offsets[r] + pos_shift
            if kind == "real":
                acc.row.append(rows)
                acc.pos.append(pos)
                acc.n.append(np.full(len(c), n, np.int32))
                acc.item.append(t.real_item[entry])
                acc.bpos.append(bpos - index.offsets[t.real_item[entry]])
                acc.hash.append(hh)
            else:
                acc.bp_row.append(rows)
                acc.bp_pos.append(pos)
                acc.bp_n.append(np.full(len(c), n, np.int32))


def _finish(index: BenchIndex, acc: _Matches) -> dict[str, np.ndarray]:
    """Mask real matches by boilerplate spans, then aggregate per (row, n, bench item)."""
    row, pos, n, item = acc.cat("row", np.int64), acc.cat("pos", np.int64), acc.cat("n", np.int32), acc.cat(
        "item", np.int32)
    bpos, hsh = acc.cat("bpos", np.int64), acc.cat("hash", _U64)
    bp_row, bp_pos, bp_n = acc.cat("bp_row", np.int64), acc.cat("bp_pos", np.int64), acc.cat("bp_n", np.int32)
    out: dict[str, np.ndarray] = {}
    if len(row) and len(bp_row):
        # boilerplate spans as disjoint intervals on a (row, position) line
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
        b = a + n
        k = np.searchsorted(ms, b, side="left") - 1
        touched = (k >= 0) & (me[np.maximum(k, 0)] > a)
        if index.mask_spans:
            keep = ~touched
            row, pos, n, item, bpos, hsh = row[keep], pos[keep], n[keep], item[keep], bpos[keep], hsh[keep]
    # boilerplate hits per (row, n)
    if len(bp_row):
        order = np.lexsort((bp_pos, bp_n, bp_row))
        br, bn, bps = bp_row[order], bp_n[order], bp_pos[order]
        first = np.ones(len(br), dtype=bool)
        first[1:] = (br[1:] != br[:-1]) | (bn[1:] != bn[:-1])
        gid = np.cumsum(first) - 1
        out["bp_row"] = br[first]
        out["bp_n"] = bn[first]
        out["bp_hits"] = np.bincount(gid)
        out["bp_start"] = bps[first]
        last = np.zeros(int(gid[-1]) + 1, dtype=np.int64)
        np.maximum.at(last, gid, bps + bn)
        out["bp_end"] = last
    if len(row) == 0:
        return out
    # distinct shared n-grams per (row, n, item)
    order = np.lexsort((hsh, item, n, row))
    r_, n_, i_, h_ = row[order], n[order], item[order], hsh[order]
    grp = np.ones(len(r_), dtype=bool)
    grp[1:] = (r_[1:] != r_[:-1]) | (n_[1:] != n_[:-1]) | (i_[1:] != i_[:-1])
    distinct = grp.copy()
    distinct[1:] |= h_[1:] != h_[:-1]
    gid = np.cumsum(grp) - 1
    shared = np.bincount(gid[distinct], minlength=int(gid[-1]) + 1)
    # first span: runs of consecutive windows (train and bench positions both +1)
    order = np.lexsort((bpos, pos, item, n, row))
    r_, n_, i_, p_, b_ = row[order], n[order], item[order], pos[order], bpos[order]
    grp = np.ones(len(r_), dtype=bool)
    grp[1:] = (r_[1:] != r_[:-1]) | (n_[1:] != n_[:-1]) | (i_[1:] != i_[:-1])
    brk = grp.copy()
    brk[1:] |= (p_[1:] != p_[:-1] + 1) | (b_[1:] != b_[:-1] + 1)
    run_id = np.cumsum(brk) - 1
    run_len = np.bincount(run_id)
    firsts = np.flatnonzero(grp)
    span = run_len[run_id[firsts]] + n_[firsts] - 1
    out.update(
        row=r_[firsts], n=n_[firsts], item=i_[firsts], shared=shared,
        train_start=p_[firsts], train_end=p_[firsts] + span,
        bench_start=b_[firsts], bench_end=b_[firsts] + span,
    )
    return out


def _pair_runs(index: BenchIndex, train_ids: np.ndarray, items: Iterable[int], pos_shift: int = 0,
               best: dict | None = None) -> dict:
    """Longest common run of a train token-id array with each bench item: item -> (len, train pos, bench pos).

    With ``best`` (blocks of one long item), keeps the longest, then the earliest, over all calls.
    """
    best = {} if best is None else best
    for it in items:
        b = index.ids[index.offsets[it] : index.offsets[it + 1]]
        length, i, j = longest_common_run(train_ids, b)
        if length == 0:
            best.setdefault(it, (0, -1, -1))
            continue
        cand = (length, i + pos_shift, j)
        old = best.get(it)
        if old is None or (-cand[0], cand[1], cand[2]) < (-old[0], old[1], old[2]):
            best[it] = cand
    return best


def scan_chunk(index: BenchIndex, texts: pa.Array, pairs: dict[int, list[int]] | None = None) -> dict:
    """Scan one chunk of train texts (a valid UTF-8 string array). ``pairs``: row -> bench item indexes."""
    counts = {"rows": len(texts), "null": texts.null_count}
    arr = _prepare(texts, index.tokenizer)
    data, row_offsets = _buffers(arr)
    counts["bytes"] = int(len(data))
    ascii_only = not bool((data >= 0x80).any()) if len(data) else True
    mask, starts, ends = token_spans(data, row_offsets, index.tokenizer)
    tokens = compact_tokens(data, mask, starts, ends, index.tokenizer, ascii_only)
    tok_offsets = np.searchsorted(starts, row_offsets, side="left").astype(np.int64)
    ids = index.lookup(tokens)
    del tokens, mask, starts, ends
    acc = _Matches()
    _match_windows(index, ids, tok_offsets, acc)
    out = _finish(index, acc)
    out["tokens_per_row"] = np.diff(tok_offsets)
    out["counts"] = counts
    if pairs:
        runs = {}
        for r, items in pairs.items():
            got = _pair_runs(index, ids[tok_offsets[r] : tok_offsets[r + 1]], items)
            runs.update({(r, it): v for it, v in got.items()})
        out["runs"] = runs
    return out


def scan_long_row(index: BenchIndex, text: pa.Array, pair_items: list[int] | None = None,
                  block_bytes: int = BLOCK_BYTES) -> dict:
    """Scan one very long train text in byte blocks; memory follows the block size, not the text."""
    counts = {"rows": 1, "null": text.null_count}
    arr = _prepare(text, index.tokenizer)
    data, _ = _buffers(arr)
    total = len(data)
    counts["bytes"] = int(total)
    tok = index.tokenizer
    giant = index.giant_token_bytes
    block_bytes = max(block_bytes, 2 * giant + 4096)
    nmax = max(index.ns)
    pair_items = list(pair_items or [])
    tail_len = nmax - 1
    if pair_items:
        tail_len = max(tail_len, max(int(index.offsets[i + 1] - index.offsets[i]) for i in pair_items) - 1)
    tail = np.zeros(0, np.int32)
    seen = 0  # tokens emitted before the current block
    acc = _Matches()
    best: dict = {}
    pos = 0
    in_giant = False
    while pos < total:
        end = min(pos + block_bytes, total)
        while end < total and 0x80 <= data[end] < 0xC0:  # never cut inside a character
            end -= 1
        seg = data[pos:end]
        mask, starts, ends = token_spans(seg, np.array([0, len(seg)], np.int64), tok)
        extra_giant = False
        if in_giant and len(starts) and starts[0] == 0:
            starts, ends = starts[1:], ends[1:]  # the rest of a giant token already counted
            if len(seg) and mask.all() and end < total:
                pos = end
                continue
        in_giant = False
        nxt = end
        if end < total and len(ends) and ends[-1] == len(seg):
            if starts[-1] > 0 and len(seg) - starts[-1] <= giant:
                nxt = pos + int(starts[-1])  # the last word may go on: read it again with the next block
            else:
                extra_giant = True
                in_giant = True
            starts, ends = starts[:-1], ends[:-1]
        ascii_only = not bool((seg >= 0x80).any())
        tokens = compact_tokens(seg, mask, starts, ends, tok, ascii_only)
        ids = index.lookup(tokens)
        if extra_giant:
            ids = np.append(ids, np.int32(-1))  # a word longer than any bench word: never matches
        ext = np.concatenate([tail, ids])
        offs = np.array([0, len(ext)], np.int64)
        _match_windows(index, ext, offs, acc, pos_shift=seen - len(tail), min_end=len(tail))
        if pair_items:
            _pair_runs(index, ext, pair_items, pos_shift=seen - len(tail), best=best)
        seen += len(ids)
        tail = ext[max(0, len(ext) - tail_len):] if tail_len else np.zeros(0, np.int32)
        pos = nxt
    out = _finish(index, acc)
    out["tokens_per_row"] = np.array([seen], np.int64)
    out["counts"] = counts
    if pair_items:
        out["runs"] = {(0, it): best.get(it, (0, -1, -1)) for it in pair_items}
    return out


# --------------------------------------------------------------------------------------------------
# process pool plumbing

_WORKER_INDEX: BenchIndex | None = None


def _init_worker(path: str) -> None:
    """Load the index from a file: every worker starts at once (a pipe would feed them one by one)."""
    global _WORKER_INDEX
    with open(path, "rb") as fh:
        _WORKER_INDEX = pickle.load(fh)
    _ = _WORKER_INDEX.prefilter


def _run_task(task: tuple) -> dict:
    kind, texts, pairs = task
    assert _WORKER_INDEX is not None
    if kind == "long":
        out = scan_long_row(_WORKER_INDEX, texts, pairs.get(0) if pairs else None)
    else:
        out = scan_chunk(_WORKER_INDEX, texts, pairs)
    if kind == "long":
        release_memory()
    return out


_LIBC = None


def release_memory() -> None:
    """Give freed heap pages back to the OS (glibc keeps numpy's freed temporaries otherwise).

    Keeps the resident size flat at what one chunk needs. A no-op where glibc is not there.
    """
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes

            _LIBC = ctypes.CDLL("libc.so.6")
            _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


# --------------------------------------------------------------------------------------------------
# the streamed scan


@dataclass
class ScanResult:
    """Raw scan output: flag rows, boilerplate rows, pair runs and counts (indexes, not ids)."""

    flags: dict[str, np.ndarray]  # train_row, train_id, n, item, shared, train_start/end, bench_start/end
    boilerplate: dict[str, np.ndarray]  # train_row, train_id, n, hits, train_start, train_end
    runs: dict[tuple[str, int], tuple[int, int, int]]  # (train_id, bench item) -> (len, train pos, bench pos)
    counts: dict
    short: dict[int, int]  # train items (with text) shorter than n tokens
    pair_seen: set[str] = field(default_factory=set)  # train ids of pairs that the stream held
    null_ids: set[str] = field(default_factory=set)  # ... of those, the ones with no (valid) text


def _batch_columns(batch, id_col: str, text_col: str) -> tuple[pa.Array, pa.Array, int]:
    names = batch.schema.names
    for col in (id_col, text_col):
        if col not in names:
            raise KeyError(col)
    ids = batch.column(names.index(id_col))
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    ids = ids.cast(pa.string()) if not pa.types.is_string(ids.type) else ids
    texts, bad = to_string_array(batch.column(names.index(text_col)))
    return ids, texts, bad


def _tasks_for_batch(texts: pa.Array, max_bytes: int, max_rows: int, long_bytes: int) -> list[tuple[str, int, int]]:
    """Split a batch into (kind, start, stop) row ranges of bounded bytes; long rows alone."""
    n = len(texts)
    if n == 0:
        return []
    offsets = _buffers(texts)[1] if not pa.types.is_null(texts.type) else np.zeros(n + 1, np.int64)
    sizes = np.diff(offsets)
    cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=cum[1:])
    long_rows = set(np.flatnonzero(sizes > long_bytes).tolist())
    tasks = []
    s = 0
    while s < n:
        if s in long_rows:
            tasks.append(("long", s, s + 1))
            s += 1
            continue
        # as many rows as fit in max_bytes (at least one), at most max_rows, never a long row
        e = int(np.searchsorted(cum, cum[s] + max_bytes, side="right")) - 1
        e = max(s + 1, min(e, s + max_rows, n))
        nxt_long = [r for r in range(s, e) if r in long_rows] if long_rows else []
        if nxt_long:
            e = nxt_long[0]
        tasks.append(("chunk", s, e))
        s = e
    return tasks


def scan(
    index: BenchIndex,
    batches: Iterable,
    *,
    id_col: str = "item_id",
    text_col: str = "text",
    pairs: dict[str, list[int]] | None = None,
    workers: int = 2,
    chunk_bytes: int = CHUNK_BYTES,
    chunk_rows: int = CHUNK_ROWS,
    long_row_bytes: int = LONG_ROW_BYTES,
    progress=None,
) -> ScanResult:
    """Stream train record batches through the index. ``pairs``: train id -> bench item indexes."""
    release_memory()  # e.g. what building the index left on the heap
    pairs = pairs or {}
    pair_ids = pa.array(sorted(pairs), pa.string()) if pairs else None
    flags: list[dict] = []
    bps: list[dict] = []
    runs: dict = {}
    counts = {"items": 0, "null": 0, "non_utf8": 0, "empty": 0, "bytes": 0, "tokens": 0}
    short = {n: 0 for n in index.ns}
    pair_seen: set[str] = set()
    null_ids: set[str] = set()
    row_base = 0

    def tasks() -> Iterator[tuple[tuple, pa.Array, int]]:
        """(task, the task's train ids, global row of its first row), batch after batch."""
        nonlocal row_base
        for batch in batches:
            ids, texts, bad = _batch_columns(batch, id_col, text_col)
            counts["non_utf8"] += bad
            if pair_ids is not None:
                in_pairs = np.flatnonzero(pc.is_in(ids, value_set=pair_ids).to_numpy(zero_copy_only=False))
            else:
                in_pairs = np.zeros(0, np.int64)
            for kind, s, e in _tasks_for_batch(texts, chunk_bytes, chunk_rows, long_row_bytes):
                sub = texts.slice(s, e - s) if (s, e) != (0, len(texts)) else texts
                if workers > 1 and kind == "chunk" and (sub is not texts or texts.offset):
                    sub = pa.concat_arrays([sub])  # a compact copy: slices pickle their whole buffer
                rows = in_pairs[(in_pairs >= s) & (in_pairs < e)]
                task_pairs = {}
                for r in rows.tolist():
                    tid = ids[r].as_py()
                    pair_seen.add(tid)
                    if not texts[r].is_valid:
                        null_ids.add(tid)
                    task_pairs[r - s] = pairs[tid]
                yield (kind, sub, task_pairs), ids.slice(s, e - s), row_base + s
            row_base += len(texts)

    def collect(result: dict, ids: pa.Array, base: int) -> None:
        c = result["counts"]
        counts["items"] += c["rows"]
        counts["null"] += c["null"]
        counts["bytes"] += c["bytes"]
        tpr = result["tokens_per_row"]
        counts["tokens"] += int(tpr.sum())
        has_text = result.get("has_text")
        valid = tpr if has_text is None else tpr[has_text]
        counts["empty"] += int((valid == 0).sum())
        for n in short:
            short[n] += int((valid < n).sum())
        if "row" in result:
            r = result["row"]
            flags.append({
                "train_row": base + r,
                "train_id": ids.take(pa.array(r)).to_numpy(zero_copy_only=False),
                "n": result["n"], "item": result["item"], "shared": result["shared"],
                "train_start": result["train_start"], "train_end": result["train_end"],
                "bench_start": result["bench_start"], "bench_end": result["bench_end"],
            })
        if "bp_row" in result:
            r = result["bp_row"]
            bps.append({
                "train_row": base + r,
                "train_id": ids.take(pa.array(r)).to_numpy(zero_copy_only=False),
                "n": result["bp_n"], "hits": result["bp_hits"],
                "train_start": result["bp_start"], "train_end": result["bp_end"],
            })
        for (r, it), v in result.get("runs", {}).items():
            runs[(ids[int(r)].as_py(), it)] = v
        if progress is not None:
            progress(c["rows"], c["bytes"])

    def run_inline(task) -> dict:
        kind, texts, tp = task
        if kind == "long":
            res = scan_long_row(index, texts, tp.get(0) if tp else None)
        else:
            res = scan_chunk(index, texts, tp)
        return res

    source = tasks()
    first = next(source, None)
    if first is None:
        return _scan_result(flags, bps, runs, counts, short, pair_seen, null_ids)
    second = next(source, None)
    pending_iter = _chain([first] + ([second] if second is not None else []), source)
    use_pool = workers > 1 and second is not None
    if not use_pool:
        for task, ids, base in pending_iter:
            res = run_inline(task)
            res["has_text"] = _has_text(task[1])
            collect(res, ids, base)
        return _scan_result(flags, bps, runs, counts, short, pair_seen, null_ids)
    ctx = get_context("spawn")  # not fork: the parent may hold Arrow / BLAS threads
    with tempfile.TemporaryDirectory(prefix="overlap-ngram-") as tmp, ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=(_dump_index(index, tmp),)
    ) as pool:
        inflight: deque = deque()

        def drain(keep: int) -> None:
            while len(inflight) > keep:
                fut, fids, fbase, ht = inflight.popleft()
                res = fut.result()
                res["has_text"] = ht
                collect(res, fids, fbase)

        for task, ids, base in pending_iter:
            if task[0] == "long":
                # a very long item is scanned here in blocks: shipping it to a worker would copy it
                # whole a few times, and results stay in input order
                drain(0)
                res = run_inline(task)
                res["has_text"] = _has_text(task[1])
                collect(res, ids, base)
                continue
            inflight.append((pool.submit(_run_task, task), ids, base, _has_text(task[1])))
            drain(2 * workers - 1)
        drain(0)
    return _scan_result(flags, bps, runs, counts, short, pair_seen, null_ids)


def _dump_index(index: BenchIndex, folder: str) -> str:
    path = os.path.join(folder, "index.pickle")
    with open(path, "wb") as fh:
        pickle.dump(index, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _has_text(texts: pa.Array) -> np.ndarray | None:
    if texts.null_count == 0:
        return None
    return ~np.asarray(texts.is_null().to_numpy(zero_copy_only=False))


def _chain(head: list, tail: Iterator) -> Iterator:
    yield from head
    yield from tail


def _scan_result(flags, bps, runs, counts, short, pair_seen, null_ids) -> ScanResult:
    def cat(parts: list[dict], keys: list[str]) -> dict[str, np.ndarray]:
        if not parts:
            return {k: np.zeros(0, dtype=object if k == "train_id" else np.int64) for k in keys}
        return {k: np.concatenate([p[k] for p in parts]) for k in keys}

    fkeys = ["train_row", "train_id", "n", "item", "shared", "train_start", "train_end", "bench_start", "bench_end"]
    bkeys = ["train_row", "train_id", "n", "hits", "train_start", "train_end"]
    return ScanResult(flags=cat(flags, fkeys), boilerplate=cat(bps, bkeys), runs=runs, counts=counts, short=short,
                      pair_seen=pair_seen, null_ids=null_ids)


def available_workers(requested: int | None) -> int:
    if requested is None:
        return max(1, min(2, os.cpu_count() or 1))
    return max(1, int(requested))
