"""A set of a streamed side's row numbers as one bit per row: the rows that repeat an earlier row's id.

An RL set that repeats each task 16 times has 15 repeats in 16 rows; at 100M rows a sorted int64 array of
them is 750 MB (and twice that while it is sorted), where a bit per row is 12.5 MB whatever the repeats."""

from __future__ import annotations

import numpy as np

from .hashing import COMPILED_FROM, _kernel


class RowBits:
    def __init__(self) -> None:
        self._bits = np.zeros(0, np.uint8)  # bit r % 8 of byte r // 8: row r is in the set
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, rows: np.ndarray) -> None:
        """Puts `rows` (non-negative, any order, repeats allowed) in the set: one compiled pass over them (a
        side that repeats each id 16 times adds 15 rows in 16), else `_add_sorted`, its reference."""
        rows = np.asarray(rows, np.int64)
        if not len(rows):
            return
        if rows.min() < 0:
            raise ValueError("row numbers are non-negative")
        self._room(int(rows.max()))
        kernel = _set_bits() if len(rows) > COMPILED_FROM else None
        if kernel is not None:
            self._count += int(kernel(self._bits, np.ascontiguousarray(rows)))
        else:
            self._add_sorted(np.unique(rows))

    def _room(self, highest: int) -> None:
        need = highest // 8 + 1
        if need > len(self._bits):  # grown by doubling: a side's rows come in rising batches
            grown = np.zeros(max(need, 2 * len(self._bits)), np.uint8)
            grown[:len(self._bits)] = self._bits
            self._bits = grown

    def _add_sorted(self, rows: np.ndarray) -> None:
        """`add` of sorted distinct rows, with numpy alone."""
        self._count += int((~self.holds(rows)).sum())
        byte = rows >> 3
        bit = (np.uint8(1) << (rows & 7).astype(np.uint8)).astype(np.uint8)
        # rows are sorted: the bits of one byte are neighbours, or-ed together before the byte is written
        starts = np.flatnonzero(np.r_[True, byte[1:] != byte[:-1]])
        self._bits[byte[starts]] |= np.bitwise_or.reduceat(bit, starts)

    def holds(self, rows: np.ndarray) -> np.ndarray:
        """Whether each of `rows` is in the set."""
        rows = np.asarray(rows, np.int64)
        out = np.zeros(len(rows), bool)
        inside = (rows >= 0) & (rows < len(self._bits) * 8)
        chosen = rows[inside]
        out[inside] = ((self._bits[chosen >> 3] >> (chosen & 7).astype(np.uint8)) & 1).astype(bool)
        return out

    def rows(self) -> np.ndarray:
        """The rows of the set, sorted."""
        return np.flatnonzero(np.unpackbits(self._bits, bitorder="little"))


def _set_bits():
    """The compiled pass, or None (when the string hash's compiled loop is not available either)."""
    if _kernel() is None:
        return None
    from .hash_kernel import set_bits

    return set_bits
