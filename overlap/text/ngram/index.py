"""The bench n-gram index: the data a scan worker needs, and its lookups (vocabulary, pre-filter, words).

A train word that no bench item uses can never be part of a shared n-gram, so ``lookup`` gives it id -1.
A blocked Bloom filter that fits in a core's L2 cache is a **pre-filter** (under 1 % of train windows
pass); the survivors are looked up in the sorted hashes of the ``NgramTable`` of each n and verified word
by word.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..tokenize import Tokenizer
from .hashing import U64

_LITTLE = sys.byteorder == "little"
# the bits a hash sets in its prefilter word: four 6-bit fields below the word index (bits 20-43). Four, not
# two: with ~2 bench hashes per word, 4 bits let through ~0.3 % of train windows instead of ~0.8 %, and
# every window let through costs a look-up in tables too large for a core's caches
BLOOM_FIELDS = (20, 26, 32, 38)
MAX_FILTER_BITS = 23  # 1 MiB: the L2 cache of one core on common x86 servers


def _bloom_bits(h: np.ndarray) -> np.ndarray:
    """The mask of each hash in its prefilter word (one bit per field of ``BLOOM_FIELDS``)."""
    m = np.zeros(len(h), U64)
    for f in BLOOM_FIELDS:
        m |= np.left_shift(U64(1), (h >> U64(f)) & U64(63))
    return m


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
    # bench items in which a (real) n-gram occurs more than once: only its first occurrence is posted, so
    # a run of windows there may not line up; the scan measures such items' runs word by word
    repeat_items: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))


@dataclass
class BenchIndex:
    """Everything a scan worker needs about the bench side. Picklable; holds no pandas objects."""

    ns: tuple[int, ...]
    tokenizer: Tokenizer
    threshold: int | None
    mask_spans: bool
    item_ids: list[str]
    vocab: pa.Array  # string array of distinct bench tokens; id = position
    r64: np.ndarray  # uint64 value per id + 1 (slot 0 = unseen = 0), from the word's bytes (token_values)
    ids: np.ndarray  # int32 bench token ids, items back to back
    offsets: np.ndarray  # int64 len items+1
    masked: np.ndarray  # bool per bench token: inside a boilerplate span
    tables: dict[int, NgramTable]
    giant_token_bytes: int  # a token longer than this (in input bytes) can never be a bench word
    stats: dict = field(default_factory=dict)
    min_hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # all bench windows, min n
    filter_bits: int = 20
    max_token_bytes: int = 1 << 62  # bytes of the longest bench word: a longer train token is no bench word
    _filter: np.ndarray | None = field(default=None, repr=False)
    _by_value: tuple | None = field(default=None, repr=False)
    _jit_tables: object | None = field(default=None, repr=False)  # the compiled path's look-up tables (jit_tables.py)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_filter"] = None  # rebuilt where used: cheaper than shipping it to each worker
        state["_by_value"] = None
        state["_jit_tables"] = None
        return state

    @property
    def repeat_items(self) -> np.ndarray:
        """Bench items with a repeated n-gram (of any n), sorted."""
        parts = [t.repeat_items for t in self.tables.values()]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int32)

    def lookup_values(self, values: np.ndarray, exact: np.ndarray, lengths: np.ndarray, strings,
                      find=None) -> np.ndarray:
        """Bench vocabulary id of each token given its value (``token_values``), -1 for no bench word.

        ``exact``: the token's value packs its bytes (ASCII, at most 8 bytes); ``lengths``: its bytes;
        ``strings(k)``: the strings of the tokens at indexes ``k``. Two words of at most 8 bytes with one
        value are one word; any other id found by value is confirmed by comparing the words themselves,
        so a value collision never gives a wrong id (exact, like ``lookup``). ``find(sorted values, values)``:
        (position of each value in the sorted ones, found), when given (the compiled path's)."""
        if self._by_value is None:
            vals = self.r64[1:]
            order = np.argsort(vals, kind="stable").astype(np.int32)
            sv = vals[order]
            unique = bool(len(sv) < 2 or (sv[1:] != sv[:-1]).all())
            vlen = pc.binary_length(self.vocab).to_numpy(zero_copy_only=False).astype(np.int64)
            self._by_value = (sv, order, unique, vlen)
        sv, order, unique, vlen = self._by_value
        if len(values) == 0:
            return np.zeros(0, np.int32)
        if not unique or len(sv) == 0:  # (never seen in practice) two bench words share a value
            return self.lookup(strings(np.arange(len(values))))
        if find is not None:
            k, found = find(sv, values)
        else:
            k = np.minimum(np.searchsorted(sv, values), len(sv) - 1)
            found = sv[k] == values
        ids = np.where(found, order[k], np.int32(-1)).astype(np.int32, copy=False)
        safe = exact & (vlen[np.maximum(ids, 0)] == lengths)
        check = np.flatnonzero(found & ~safe)
        if len(check):
            same = pc.equal(strings(check), self.vocab.take(pa.array(ids[check])))
            ids[check[~same.to_numpy(zero_copy_only=False)]] = -1
        return ids

    @property
    def prefilter(self) -> np.ndarray:
        """A blocked Bloom filter over every bench window hash of the smallest n: 2**(filter_bits - 6) words
        of 64 bits, one word per hash (its top bits) with four bits set in it (from four 6-bit fields of the
        hash). One word per hash keeps the test to one memory access, and the table small enough to stay in
        a core's L2 cache (``filter_bits`` <= 23: 1 MiB), which a plain bit table with as few false
        positives would not. A bench hash always finds its bits set: the filter never drops a match.

        Every window of a larger n that matches a bench n-gram starts with a bench window of the smallest
        n, so one table (and one full pass over the train windows) serves all n.
        """
        if self._filter is None:
            h = self.min_hashes
            words = np.zeros(1 << self._word_bits, dtype=U64)
            np.bitwise_or.at(words, (h >> U64(32)).astype(np.uint32) >> np.uint32(32 - self._word_bits),
                             _bloom_bits(h))
            self._filter = words
        return self._filter

    @property
    def _word_bits(self) -> int:
        return min(max(self.filter_bits - 6, 1), 32)

    def passes_prefilter(self, h: np.ndarray) -> np.ndarray:
        """Positions of the hashes that may be bench windows of the smallest n."""
        table = self.prefilter
        # the word index from the hash's high 32 bits (on little-endian machines a strided view, no copy)
        if _LITTLE and h.dtype.isnative and h.flags.c_contiguous:
            hi = h.view(np.uint32)[1::2]
        else:
            hi = (h >> U64(32)).astype(np.uint32)
        w = table[hi >> np.uint32(32 - self._word_bits)]
        m = _bloom_bits(h)
        w &= m
        return np.flatnonzero(w == m)

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
