"""A spill partition's rows whose id hash is their own: the same rows whether the partition is held whole or,
too large to hold, counted a piece at a time with its distinct hashes merged in every `bound` of them."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.keyjoin import items_pass
from overlap.keyjoin.batch import FACT_SCHEMA


def _piece(hashes: list[int], start: int) -> pa.Table:
    n = len(hashes)
    return pa.table({"hash": pa.array(hashes, pa.uint64()), "row": pa.array(np.arange(start, start + n)),
                     "project": pa.array(np.zeros(n, np.int32)), "pr_repo": pa.array(np.full(n, -1, np.int32)),
                     "present": pa.array(np.zeros(n, np.uint8)),
                     "kinds": pa.array(np.ones(n, np.uint64)), "problems": pa.array(np.zeros(n, np.uint8))},
                    schema=FACT_SCHEMA)


@settings(deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), max_size=30), max_size=8), st.integers(1, 50))
def test_counted_a_piece_at_a_time_the_own_rows_are_those_held_whole(pieces, bound):
    tables, start = [], 0
    for hashes in pieces:
        tables.append(_piece(hashes, start))
        start += len(hashes)
    counted, kept = items_pass._Firsts(), []
    items_pass._own_rows_counted(lambda: iter(tables), counted, kept.append, bound)
    every = [h for hashes in pieces for h in hashes]
    times = Counter(every)
    # the oracle: a row is its id's own when no other row has its hash
    assert counted.items == sum(1 for h in every if times[h] == 1)
    kept_rows = sorted(r for table in kept for r in table.column("row").to_pylist())
    assert kept_rows == [r for r, h in enumerate(every) if times[h] > 1]
