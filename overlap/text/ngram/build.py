"""Building the bench n-gram index: tokens, vocabulary ids, windows, boilerplate, tables and statistics."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..string_arrays import to_string_array
from ..tokenize import Tokenizer, Tokens, get_tokenizer, tokenize_flat
from .boilerplate import (
    NgramFrequencies,
    Windows,
    bench_span_mask,
    item_frequencies,
    mark_background,
    top_spans,
)
from .hashing import U64, gather_windows, prefix_hashes, row_window_starts, vocab_values, window_hashes
from .index import MAX_FILTER_BITS, BenchIndex, NgramTable
from .memory import release_memory

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
    if len(item_ids) != len(arr):
        raise ValueError("one item id per bench text is needed")
    index = _vocabulary_index(tokenize_flat(arr, tok), item_ids, ns, tok, boilerplate_threshold, mask_spans)
    release_memory()  # the token strings are gone: only their vocabulary ids stay
    item_of = np.repeat(np.arange(len(arr), dtype=np.int32), np.diff(index.offsets))
    windows = _bench_windows(index, item_of)
    freqs = {n: item_frequencies(w, boilerplate_threshold) for n, w in windows.items()}
    background_rows = mark_background(freqs, background, index) if background is not None else 0
    index.masked = bench_span_mask(windows, freqs, len(index.ids), mask_spans)
    index.min_hashes = freqs[min(ns)].uniq  # every distinct bench window hash of the smallest n
    # ~24 bits per bench hash (two set per hash): under 1 % of train windows pass; capped to stay in L2
    index.filter_bits = int(min(MAX_FILTER_BITS, max(12, np.ceil(np.log2(max(len(index.min_hashes), 1) * 24)))))
    masked_prefix = None  # masked tokens before each position (None: nothing is masked)
    if index.masked.any():
        masked_prefix = np.zeros(len(index.ids) + 1, dtype=np.int64)
        np.cumsum(index.masked, out=masked_prefix[1:])
    index.tables = {}
    for n in list(windows):  # each n's windows are dropped as soon as its table is built
        index.tables[n] = _ngram_table(n, windows.pop(n), freqs[n], index.ids, masked_prefix)
        release_memory()
    del masked_prefix
    index.stats = _bench_stats(index, arr, non_utf8, item_of, background_rows)
    return index


def _vocabulary_index(toks: Tokens, item_ids: Sequence[str], ns: tuple[int, ...], tok: Tokenizer,
                      threshold: int | None, mask_spans: bool) -> BenchIndex:
    """The index with its vocabulary and token ids set; windows, masks and tables still empty."""
    vocab = pc.unique(toks.tokens) if len(toks.tokens) else pa.array([], pa.string())
    if pa.types.is_large_string(vocab.type):
        vocab = vocab.cast(pa.string())
    index = BenchIndex(
        ns=ns, tokenizer=tok, threshold=threshold, mask_spans=mask_spans,
        item_ids=[str(i) for i in item_ids], vocab=vocab, r64=vocab_values(vocab, tok.lowercase),
        ids=np.zeros(0, np.int32),
        offsets=toks.offsets, masked=np.zeros(0, bool), tables={}, giant_token_bytes=0,
    )
    index.ids = index.lookup(toks.tokens)
    maxlen = int(pc.max(pc.binary_length(vocab)).as_py() or 0) if len(vocab) else 0
    index.giant_token_bytes = 3 * maxlen + 16  # lowercasing can shrink a character to a third
    index.max_token_bytes = maxlen
    return index


def _bench_windows(index: BenchIndex, item_of: np.ndarray) -> dict[int, Windows]:
    """All bench windows of every n, with their hash, item and position (one prefix sum for all n), sorted
    by (hash, position) and so by (hash, item, position): items follow positions."""
    prefix = prefix_hashes(index.ids, index.r64)
    windows = {}
    for n in index.ns:
        starts = row_window_starts(index.offsets, n)
        if not len(starts):
            windows[n] = Windows(np.zeros(0, U64), np.zeros(0, np.int32), starts)
            continue
        hashes = window_hashes(prefix, n)
        if len(starts) != len(hashes):  # several items: only the windows inside one item
            hashes = hashes[starts]
        order = np.argsort(hashes, kind="stable")
        hashes = hashes[order]
        starts = starts[order]
        del order
        windows[n] = Windows(hashes, item_of[starts], starts)
    return windows


def _ngram_table(n: int, windows: Windows, freqs: NgramFrequencies, ids: np.ndarray,
                 masked_prefix: np.ndarray | None) -> NgramTable:
    """The lookup table of one n: windows clear of boilerplate, one entry per (n-gram, item)."""
    hashes, items, starts = windows  # sorted by (hash, item, position)
    is_bp = freqs.is_boilerplate
    keep = ~freqs.per_window(is_bp, hashes)
    if masked_prefix is not None:
        keep &= masked_prefix[starts + n] == masked_prefix[starts]
    # (copies are made only where something is dropped: a huge bench item costs its windows once)
    h, it, st = (hashes, items, starts) if keep.all() else (hashes[keep], items[keep], starts[keep])
    del keep
    first = np.ones(len(h), dtype=bool)  # first occurrence of each (n-gram, item)
    first[1:] = (h[1:] != h[:-1]) | (it[1:] != it[:-1])
    same = np.flatnonzero(~first)
    repeat_items = np.zeros(0, np.int32)
    if len(same):  # equal hashes in one item: drop the repeat only if the words are equal too
        differ = (gather_windows(ids, st[same], n) != gather_windows(ids, st[same - 1], n)).any(1)
        first[same[differ]] = True
        repeat_items = np.unique(it[same[~differ]]).astype(np.int32)
    if not first.all():
        h, it, st = h[first], it[first], st[first]
    return NgramTable(
        n=n, real_hash=h, real_item=it, real_pos=st,
        bp_hash=freqs.uniq[is_bp], bp_pos=freqs.first_pos[is_bp], bp_items=freqs.df[is_bp].astype(np.int32),
        bp_background=freqs.background[is_bp], repeat_items=repeat_items,
    )


def _bench_stats(index: BenchIndex, arr: pa.Array, non_utf8: int, item_of: np.ndarray,
                 background_rows: int) -> dict:
    """Counts of the bench side for the report: items, tokens, short items, boilerplate."""
    n_items = len(arr)
    counts = np.diff(index.offsets)
    valid = np.ones(n_items, dtype=bool)
    if arr.null_count or non_utf8:
        valid = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False))
    masked = index.masked
    items_masked = np.zeros(n_items, dtype=bool)
    if masked.any():
        items_masked[item_of[masked]] = True
    threshold = index.threshold
    return {
        "items": n_items,
        "null": int(arr.null_count - non_utf8),
        "non_utf8": int(non_utf8),
        "empty": int(((counts == 0) & valid).sum()),
        "tokens": int(len(index.ids)),
        "vocabulary": int(len(index.vocab)),
        "short": {n: int(((counts < n) & valid).sum()) for n in index.ns},
        "short_ids": {n: [index.item_ids[i] for i in np.flatnonzero((counts < n) & valid)] for n in index.ns},
        "boilerplate_ngrams": {
            n: {
                "total": int(len(t.bp_hash)),
                "frequent": int((t.bp_items >= threshold).sum()) if threshold else 0,
                "background": int(t.bp_background.sum()),
            }
            for n, t in index.tables.items()
        },
        "masked_tokens": int(masked.sum()),
        "items_with_boilerplate": int(items_masked.sum()),
        "background_rows": background_rows,
        "boilerplate_spans": top_spans(index, masked, item_of),
    }
