"""Scanning one task of train text (runs in the worker processes): a chunk of rows, or one long row.

An item larger than the chunk budget is read in byte blocks with an n-1 token overlap, so memory is
bounded by the block size, not by the largest item.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa

from ..runs import PAIR_BUDGET, longest_common_run
from ..string_arrays import _buffers
from ..tokenize import (
    TokenSpans,
    _normalise_quotes,
    _prepare,
    compact_tokens,
    split_tokens,
    token_spans,
)
from ..word_chars import APOSTROPHE
from . import jit
from .hashing import string_values, token_values
from .index import BenchIndex
from .match import WindowMatches, finish_matches, match_windows

BLOCK_BYTES = 4 << 20  # bytes of one block of a long row


def pair_runs(index: BenchIndex, train_ids: np.ndarray, items: Iterable[int], pos_shift: int = 0,
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


class ChunkTokens:
    """The tokens of a chunk as the matcher sees them: a value per token (from its bytes, no lookup),
    and vocabulary ids looked up only where asked (the windows found in a table, the paired rows)."""

    def __init__(self, index: BenchIndex, spans: TokenSpans, values: np.ndarray | None = None):
        self.index, self.spans = index, spans
        if values is None:
            values = token_values(spans.data, spans.starts, spans.ends - spans.starts, fold=spans.lowercase,
                                  max_bytes=index.max_token_bytes)
            if len(spans.wide):  # tokens with non-ASCII bytes: Unicode lowercasing, then the same values
                values[spans.wide] = string_values(spans.strings(spans.wide), index.max_token_bytes,
                                                   fold=spans.lowercase)
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def ids_at(self, positions) -> np.ndarray:
        """Bench vocabulary ids (-1: no bench word) of the tokens at ``positions`` (any shape)."""
        positions = np.asarray(positions, dtype=np.int64)
        flat = positions.ravel()
        if jit.kernels() is not None:
            ids = jit.token_ids(self.index, self, flat)
            if ids is not None:
                return ids.reshape(positions.shape)
        lengths = self.spans.ends[flat] - self.spans.starts[flat]  # (only where asked: most tokens never are)
        exact = lengths <= 8  # the value packs the token's bytes (ASCII tokens of at most 8 bytes)
        if len(self.spans.wide):
            exact &= ~np.isin(flat, self.spans.wide)
        find = jit.find_sorted if jit.kernels() is not None else None
        ids = self.index.lookup_values(self.values[flat], exact, lengths, lambda k: self.spans.strings(flat[k]),
                                       find=find)
        return ids.reshape(positions.shape)


def _exact_runs(index: BenchIndex, tokens: ChunkTokens, tok_offsets: np.ndarray, out: dict) -> None:
    """For flags on bench items with a repeated n-gram, measure the longest run word by word.

    Elsewhere the longest run of shared windows is exact. In such an item only an n-gram's first
    occurrence is posted, so a copy of a later occurrence shows as broken runs; the longest common word
    run (bench boilerplate spans excluded) replaces the span when it is longer."""
    reps = index.repeat_items
    if not len(reps):
        return
    todo = np.flatnonzero(np.isin(out["item"], reps)).tolist()
    row_ids = _rows_ids(tokens, tok_offsets, [int(out["row"][k]) for k in todo]) if todo else {}
    for k in todo:
        r, it = int(out["row"][k]), int(out["item"][k])
        a = row_ids[r]
        lo, hi = int(index.offsets[it]), int(index.offsets[it + 1])
        b = np.where(index.masked[lo:hi], -1, index.ids[lo:hi]) if len(index.masked) else index.ids[lo:hi]
        length, i, j = longest_common_run(a, b)
        if length > out["train_end"][k] - out["train_start"][k]:
            out["train_start"][k], out["train_end"][k] = i, i + length
            out["bench_start"][k], out["bench_end"][k] = j, j + length


def chunk_tokens(index: BenchIndex, texts: pa.Array) -> ChunkTokens:
    """The tokens of a chunk and their values (compiled when it can be: ``jit``)."""
    if jit.kernels() is not None:
        return ChunkTokens(index, *jit.split_values(index, texts))
    return ChunkTokens(index, split_tokens(texts, index.tokenizer))


def chunk_matches(index: BenchIndex, tokens: ChunkTokens) -> WindowMatches:
    """The verified window matches of a chunk's rows."""
    acc = WindowMatches()
    offsets = tokens.spans.row_tokens
    if jit.kernels() is not None:
        jit.record_hits(index, tokens, offsets, acc, jit.window_hits(index, tokens.values, offsets))
    else:
        match_windows(index, tokens, offsets, acc)
    return acc


def scan_chunk(index: BenchIndex, texts: pa.Array, pairs: dict[int, list[int]] | None = None) -> dict:
    """Scan one chunk of train texts (a valid UTF-8 string array). ``pairs``: row -> bench item indexes."""
    counts = {"rows": len(texts), "null": texts.null_count}
    tokens = chunk_tokens(index, texts)
    counts["bytes"] = int(tokens.spans.input_bytes)
    tok_offsets = tokens.spans.row_tokens
    out = finish_matches(index, chunk_matches(index, tokens))
    if "row" in out:
        _exact_runs(index, tokens, tok_offsets, out)
    out["tokens_per_row"] = np.diff(tok_offsets)
    out["counts"] = counts
    if pairs:
        out["runs"] = pair_view(index, tokens, pairs)
    return out


def pair_view(index: BenchIndex, tokens: ChunkTokens, pairs: dict[int, list[int]]) -> dict:
    """(row, bench item) -> (longest common run, train position, bench position) of the paired rows."""
    rows = sorted(pairs)
    which = np.repeat(np.arange(len(rows)), [len(pairs[r]) for r in rows])
    items = np.array([it for r in rows for it in pairs[r]], np.int64)
    row_of = np.asarray(rows, np.int64)[which]
    got = jit.value_runs(index, tokens, row_of, items, PAIR_BUDGET) if jit.kernels() is not None else None
    if got is None:  # every pair by ids
        got = np.full((len(items), 3), -2, np.int64)
    got = got.tolist()
    open_rows = sorted({rows[k] for k, (length, _, _) in zip(which.tolist(), got, strict=True) if length == -2})
    if open_rows:  # not confirmed on the values (a non-ASCII word, or a value shared): by vocabulary ids
        ids, offsets = _rows_flat_ids(tokens, tokens.spans.row_tokens, open_rows)
        at = {r: k for k, r in enumerate(open_rows)}
        for q, (k, it) in enumerate(zip(which.tolist(), items.tolist(), strict=True)):
            if got[q][0] == -2:
                r = at[rows[k]]
                row_ids = ids[offsets[r] : offsets[r + 1]]
                got[q] = list(_ids_run(index, row_ids, it))
    runs = {}
    for q, (k, it) in enumerate(zip(which.tolist(), items.tolist(), strict=True)):
        length, i, j = got[q]
        if length == -1:  # too many equal words (a repetitive text): the method made for it
            r = rows[k]
            lo, hi = tokens.spans.row_tokens[r], tokens.spans.row_tokens[r + 1]
            length, i, j = pair_runs(index, tokens.ids_at(np.arange(lo, hi)), [it])[it]
        runs[(rows[k], it)] = (length, i, j)
    return runs


def _ids_run(index: BenchIndex, row_ids: np.ndarray, item: int) -> tuple[int, int, int]:
    """The longest run of one pair by vocabulary ids (-1: over the budget of equal positions)."""
    if jit.kernels() is not None:
        return tuple(jit.pair_runs_many(index, row_ids, np.array([0, len(row_ids)]), np.zeros(1, np.int64),
                                        np.array([item], np.int64), PAIR_BUDGET)[0].tolist())
    return pair_runs(index, row_ids, [item])[item]


def _rows_ids(tokens: ChunkTokens, tok_offsets: np.ndarray, rows: list[int]) -> dict[int, np.ndarray]:
    """The vocabulary ids of the tokens of some rows (one look-up for all of them)."""
    rows = sorted(set(rows))
    ids, starts = _rows_flat_ids(tokens, tok_offsets, rows)
    return {r: ids[starts[k] : starts[k + 1]] for k, r in enumerate(rows)}


def _rows_flat_ids(tokens: ChunkTokens, tok_offsets: np.ndarray, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The vocabulary ids of the tokens of sorted distinct ``rows``, back to back, and their offsets."""
    lo, hi = tok_offsets[rows], tok_offsets[np.asarray(rows, np.int64) + 1]
    lengths = hi - lo
    total = int(lengths.sum())
    starts = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    ids = tokens.ids_at(np.repeat(lo - starts[:-1], lengths) + np.arange(total, dtype=np.int64))
    return ids, starts


def scan_long_row(index: BenchIndex, text: pa.Array, pair_items: list[int] | None = None,
                  block_bytes: int = BLOCK_BYTES) -> dict:
    """Scan one very long train text in byte blocks; memory follows the block size, not the text."""
    counts = {"rows": 1, "null": text.null_count}
    prepared = _prepare(text, index.tokenizer, quotes=False)
    counts["bytes"] = int(len(_buffers(prepared)[0]))
    data, _ = _buffers(_normalise_quotes(prepared))
    pair_items = list(pair_items or [])
    # tokens carried into the next block, so that windows and pair runs across a block edge are seen
    tail_len = max(index.ns) - 1
    if pair_items:
        tail_len = max(tail_len, max(int(index.offsets[i + 1] - index.offsets[i]) for i in pair_items) - 1)
    tail = np.zeros(0, np.int32)
    seen = 0  # tokens emitted before the current block
    acc = WindowMatches()
    best: dict = {}
    for ids in _block_ids(index, data, block_bytes):
        ext = np.concatenate([tail, ids])
        offs = np.array([0, len(ext)], np.int64)
        match_windows(index, ext, offs, acc, pos_shift=seen - len(tail), min_end=len(tail))
        if pair_items:
            pair_runs(index, ext, pair_items, pos_shift=seen - len(tail), best=best)
        seen += len(ids)
        tail = ext[max(0, len(ext) - tail_len):] if tail_len else np.zeros(0, np.int32)
    out = finish_matches(index, acc)
    out["tokens_per_row"] = np.array([seen], np.int64)
    out["counts"] = counts
    if pair_items:
        out["runs"] = {(0, it): best.get(it, (0, -1, -1)) for it in pair_items}
    return out


def _block_ids(index: BenchIndex, data: np.ndarray, block_bytes: int) -> Iterator[np.ndarray]:
    """Bench vocabulary ids of the tokens of ``data`` (UTF-8 bytes of one text), block after block.

    A word cut by a block edge is read again whole with the next block. A word longer than any bench
    word (``giant_token_bytes``) can never match: however many blocks it spans, it is one id -1.
    """
    total = len(data)
    tok = index.tokenizer
    giant = index.giant_token_bytes
    block_bytes = max(block_bytes, 2 * giant + 4096)
    pos = 0
    in_giant = False
    while pos < total:
        end = min(pos + block_bytes, total)
        while end < total and 0x80 <= data[end] < 0xC0:  # never cut inside a character
            end -= 1
        if end < total and data[end - 1] == APOSTROPHE:  # nor right after an apostrophe ("don'|t"): the
            end -= 1  # word before it then reaches the edge and is read again whole with the next block
        seg = data[pos:end]
        mask, starts, ends = token_spans(seg, np.array([0, len(seg)], np.int64), tok)
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
                in_giant = True
            starts, ends = starts[:-1], ends[:-1]
        ascii_only = not bool((seg >= 0x80).any())
        ids = index.lookup(compact_tokens(seg, mask, starts, ends, tok, ascii_only))
        if in_giant:  # a giant word runs on into the next block: one id now, none for its rest
            ids = np.append(ids, np.int32(-1))
        yield ids
        pos = nxt
