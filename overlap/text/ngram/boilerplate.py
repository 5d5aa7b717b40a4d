"""Boilerplate on the bench side: which n-grams are boilerplate, and which bench tokens they cover.

An n-gram in >= T distinct bench items, or in a background corpus, is boilerplate. The tokens such
n-grams cover (of any configured n) are masked as *spans*: bench windows touching a masked token leave
the index (the train side is masked in :mod:`overlap.text.ngram.match`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from ..string_arrays import to_string_array
from ..tokenize import tokenize_flat
from .hashing import U64, gather_windows, prefix_hashes, row_window_starts, spans_mask, window_hashes
from .index import BenchIndex

BACKGROUND_CHUNK_ROWS = 4096


class Windows(NamedTuple):
    """Every bench window of one n that stays inside its item."""

    hashes: np.ndarray  # uint64
    items: np.ndarray  # int32 bench item index
    starts: np.ndarray  # int64 flat position in the bench token ids


@dataclass
class NgramFrequencies:
    """The distinct bench n-grams of one n (by hash) and what makes one boilerplate."""

    uniq: np.ndarray  # uint64, sorted distinct hashes
    df: np.ndarray  # number of distinct bench items holding it
    first_pos: np.ndarray  # int64 flat position of its first occurrence (for verification)
    frequent: np.ndarray  # bool: in at least T bench items
    background: np.ndarray  # bool: found in the background corpus

    @property
    def is_boilerplate(self) -> np.ndarray:
        return self.frequent | self.background

    @staticmethod
    def per_window(flags: np.ndarray, sorted_hashes: np.ndarray) -> np.ndarray:
        """A per-n-gram value (in ``uniq`` order) for every window of the sorted window hashes."""
        if not len(sorted_hashes) or not flags.any():
            return np.zeros(len(sorted_hashes), dtype=flags.dtype)
        new = np.empty(len(sorted_hashes), dtype=bool)
        new[0] = True
        np.not_equal(sorted_hashes[1:], sorted_hashes[:-1], out=new[1:])
        firsts = np.flatnonzero(new)
        del new
        runs = np.diff(firsts, append=len(sorted_hashes))
        return np.repeat(flags, runs)


def item_frequencies(windows: Windows, threshold: int | None) -> NgramFrequencies:
    """Count the distinct bench items of each distinct n-gram; frequent = at least ``threshold`` of them.

    ``windows`` must be sorted by (hash, item, position), as :func:`.build._bench_windows` makes them.
    """
    h_sorted, i_sorted, starts = windows
    if len(h_sorted) == 0:
        return NgramFrequencies(np.zeros(0, U64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                                np.zeros(0, bool), np.zeros(0, bool))
    new_hash = np.ones(len(h_sorted), dtype=bool)
    new_hash[1:] = h_sorted[1:] != h_sorted[:-1]
    new_pair = new_hash.copy()
    new_pair[1:] |= i_sorted[1:] != i_sorted[:-1]
    firsts = np.flatnonzero(new_hash)
    df = np.add.reduceat(new_pair, firsts, dtype=np.int32)  # distinct items per n-gram
    del new_hash, new_pair
    if len(firsts) == len(h_sorted):  # all distinct (typical of one long text): share, do not copy
        uniq, first_pos = h_sorted, starts
    else:
        uniq, first_pos = h_sorted[firsts], starts[firsts]
    frequent = df >= threshold if threshold else np.zeros(len(uniq), bool)
    return NgramFrequencies(uniq=uniq, df=df, first_pos=first_pos, frequent=frequent,
                            background=np.zeros(len(uniq), bool))


def mark_background(freqs: dict[int, NgramFrequencies], background, index: BenchIndex) -> int:
    """Set ``background`` on every bench n-gram the background corpus holds; returns its row count."""
    rows = 0
    for chunk in iter_text_chunks(background):
        rows += len(chunk)
        toks = tokenize_flat(chunk, index.tokenizer)
        ids = index.lookup(toks.tokens)
        prefix = prefix_hashes(ids, index.r64)
        for n in index.ns:
            entry = freqs[n]
            if len(entry.uniq) == 0:
                continue
            starts = row_window_starts(toks.offsets, n)
            if len(starts) == 0:
                continue
            h = window_hashes(prefix, n)[starts]
            k = np.minimum(np.searchsorted(entry.uniq, h), len(entry.uniq) - 1)
            hit = entry.uniq[k] == h
            if not hit.any():
                continue
            cand, kk = starts[hit], k[hit]
            ok = (gather_windows(ids, cand, n) == gather_windows(index.ids, entry.first_pos[kk], n)).all(1)
            entry.background[kk[ok]] = True
    return rows


def bench_span_mask(windows: dict[int, Windows], freqs: dict[int, NgramFrequencies], n_tokens: int,
                    mask_spans: bool) -> np.ndarray:
    """bool per bench token: covered by a boilerplate n-gram of any n (all False without span masking)."""
    masked = np.zeros(n_tokens, dtype=bool)
    if not mask_spans:
        return masked
    for n, (hashes, _items, starts) in windows.items():
        is_bp = freqs[n].is_boilerplate
        if not is_bp.any():
            continue
        win_bp = NgramFrequencies.per_window(is_bp, hashes)
        masked |= spans_mask(n_tokens, starts[win_bp], n)
    return masked


def iter_text_chunks(texts) -> Iterator[pa.Array]:
    """Background corpus -> string arrays of bounded size."""
    if texts is None:
        return
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        chunks = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
        for chunk in chunks:
            for start in range(0, len(chunk), BACKGROUND_CHUNK_ROWS):
                yield to_string_array(chunk.slice(start, BACKGROUND_CHUNK_ROWS))[0]
        return
    if isinstance(texts, str):
        texts = [texts]
    if hasattr(texts, "to_list") and hasattr(texts, "iloc"):  # pandas Series
        texts = texts.to_list()
    if isinstance(texts, Sequence):
        for start in range(0, len(texts), BACKGROUND_CHUNK_ROWS):
            yield to_string_array(list(texts[start : start + BACKGROUND_CHUNK_ROWS]))[0]
        return
    buf: list = []
    for item in texts:  # an iterable of str, or of Arrow arrays / record batches
        if isinstance(item, pa.RecordBatch):
            item = item.column(0)
        if isinstance(item, (pa.Array, pa.ChunkedArray)):
            yield from iter_text_chunks(item)
            continue
        buf.append(item)
        if len(buf) >= BACKGROUND_CHUNK_ROWS:
            yield to_string_array(buf)[0]
            buf = []
    if buf:
        yield to_string_array(buf)[0]


def top_spans(index: BenchIndex, masked: np.ndarray, item_of: np.ndarray, top: int = 20) -> list[dict]:
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
