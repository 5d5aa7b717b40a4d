"""The bench's look-up tables as the compiled kernels read them, built once per process (not pickled).

Per n the sorted window hashes with a directory of their top bits (`_Tables`), and the bench words as the
compiled verification and token look-up read them (`_Words`); :mod:`.jit` passes them to :mod:`.kernels`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..string_arrays import _buffers as _string_buffers
from .hashing import U64
from .index import BenchIndex


@dataclass
class _Tables:
    """Per n (in ``index.ns`` order), real then boilerplate, then the smallest n's bench window hashes
    (``index.min_hashes``): the sorted hashes back to back, each table
    with a directory of its top bits (``directory[b]``: the first hash whose top bits are >= b), so a
    look-up reads about one hash past two memory accesses (a binary search would read ~18, most of them
    cache misses)."""

    keys: np.ndarray
    key_bounds: np.ndarray
    dirs: np.ndarray
    dir_bounds: np.ndarray
    shifts: np.ndarray
    words: object = None  # the bench words the compiled verification reads (_bench_words)

    def args(self) -> tuple:
        return self.keys, self.key_bounds, self.dirs, self.dir_bounds, self.shifts

    @classmethod
    def build(cls, tables: list[np.ndarray]) -> _Tables:
        dirs = [_directory(t) for t in tables]
        return cls(np.concatenate([np.zeros(0, U64), *tables]).astype(U64, copy=False),
                   np.concatenate([[0], np.cumsum([len(t) for t in tables])]).astype(np.int64),
                   np.concatenate([np.zeros(0, np.int32), *(d for d, _ in dirs)]),
                   np.concatenate([[0], np.cumsum([len(d) for d, _ in dirs])]).astype(np.int64),
                   np.array([s for _, s in dirs], U64))


def _directory(keys: np.ndarray) -> tuple[np.ndarray, int]:
    bits = max(1, min(26, int(np.ceil(np.log2(max(len(keys), 2)))) - 1))
    shift = 64 - bits
    d = np.empty((1 << bits) + 1, np.int32)
    d[:-1] = np.searchsorted(keys, np.arange(1 << bits, dtype=U64) << U64(shift), side="left")
    d[-1] = len(keys)
    return d, shift


def _tables(index: BenchIndex) -> _Tables:
    """The look-up tables of an index, built once per process (not pickled: cheaper to rebuild)."""
    if index._jit_tables is None:
        index._jit_tables = _Tables.build([h for n in index.ns
                                           for h in (index.tables[n].real_hash, index.tables[n].bp_hash)]
                                          + [np.ascontiguousarray(index.min_hashes, U64)])
    return index._jit_tables


def _bench_words(index: BenchIndex) -> _Words | None:
    """What the compiled verification reads of the bench, built once per process; None when two bench words
    share a value (never seen): then ids are looked up by string, on the numpy path's code."""
    tables = _tables(index)
    if tables.words is None:
        vals = index.r64[1:]
        order = np.argsort(vals, kind="stable")
        sv = np.ascontiguousarray(vals[order], U64)
        if len(sv) > 1 and not (sv[1:] != sv[:-1]).all():
            tables.words = False
        else:
            t = [index.tables[n] for n in index.ns]
            pos = np.concatenate([np.zeros(0, np.int64), *(p for x in t for p in (x.real_pos, x.bp_pos))])
            item = np.concatenate([np.zeros(0, np.int32), *(i for x in t for i in
                                                            (x.real_item, np.full(len(x.bp_pos), -1, np.int32)))])
            data, offsets = _string_buffers(index.vocab)
            data = data if len(data) else np.zeros(1, np.uint8)
            ids = np.ascontiguousarray(index.ids, np.int32)
            tables.words = _Words(
                verify=(pos.astype(np.int64), item.astype(np.int32), ids, np.asarray(index.offsets, np.int64),
                        np.ascontiguousarray(index.r64, U64), data, offsets),
                lookup=(sv, order.astype(np.int64), *_directory(sv), data, offsets),
                bench_values=np.ascontiguousarray(index.r64[ids.astype(np.int64) + 1], U64))
    return tables.words or None


@dataclass
class _Words:
    """The bench words as the compiled verification reads them: ``verify`` (``verify_hits``'s bench
    arguments: per table entry of ``_Tables`` its bench position and item (-1: boilerplate), the bench ids
    and item offsets, the word values, the words' bytes and offsets) and ``lookup`` (``token_ids``'s:
    the sorted word values, their ids, the directory of their top bits, the words' bytes and offsets), and
    the value of every bench token."""

    verify: tuple
    lookup: tuple
    bench_values: np.ndarray  # the value of every bench token (``value_runs``)
