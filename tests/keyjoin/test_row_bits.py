"""RowBits, the repeat rows of a streamed side as a bit per row: the same set as a plain Python set of the rows
added, whatever the order, repeats and gaps of what is added and asked."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.keyjoin import row_bits
from overlap.keyjoin.row_bits import RowBits

rows = st.lists(st.integers(0, 5000), max_size=60)


@settings(deadline=None)  # the first compiled call loads numba
@given(st.lists(rows, max_size=6), st.lists(st.integers(-20, 6000), max_size=80), st.booleans())
def test_a_bit_per_row_is_the_set_of_rows_added(added, asked, compiled):
    """Both ways of adding (the compiled pass for large batches, numpy for small ones) give the set."""
    bits, oracle = RowBits(), set()
    with mock.patch.object(row_bits, "COMPILED_FROM", 0 if compiled else 10**9):
        for batch in added:
            bits.add(np.array(batch, np.int64))
            oracle |= set(batch)
            assert len(bits) == len(oracle)
    assert bits.holds(np.array(asked, np.int64)).tolist() == [a in oracle for a in asked]
    assert bits.rows().tolist() == sorted(oracle)


def test_a_hundred_million_rows_repeating_fit_in_twelve_megabytes():
    bits = RowBits()
    bits.add(np.array([99_999_999], np.int64))
    assert bits._bits.nbytes <= 100_000_000 // 8 + 8 and len(bits) == 1 and bits.holds(np.array([99_999_999]))[0]
