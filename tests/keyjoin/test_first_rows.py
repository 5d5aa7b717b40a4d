"""The rows a streamed side keeps by id (its OSS-Fuzz keys, its matched items): an id's later copies may be
dropped, its first row never, and what is held stays bounded by the distinct ids."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.keyjoin import first_rows
from overlap.keyjoin.first_rows import FirstRows

# batches of (id, keys on that row): rows numbered in order across batches, as a scan numbers them
batches_of_rows = st.lists(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "arvo:1", "x" * 30]),
                                              st.integers(1, 3)), max_size=12), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(batches_of_rows, st.integers(1, 8))
def test_the_first_row_of_every_id_is_kept_with_all_its_keys(batches, compact_from):
    first_rows.COMPACT_FROM, saved = compact_from, first_rows.COMPACT_FROM
    try:
        held, row, given_rows, first_of, distinct = FirstRows(), 0, set(), {}, set()
        for batch in batches:
            rows, ids, keys = [], [], []
            items_rows, items_ids = [], []
            for item_id, key_count in batch:
                first_of.setdefault(item_id, row)
                distinct.add(item_id)
                items_rows.append(row)
                items_ids.append(item_id)
                for k in range(key_count):
                    rows.append(row)
                    ids.append(item_id)
                    keys.append(f"{item_id}/{k}")
                given_rows.add(row)
                row += 1
            table = pa.table({"row": pa.array(rows, pa.int64()), "item_id": pa.array(ids, pa.string()),
                              "value": pa.array(keys, pa.string())})
            follow = pa.table({"row": pa.array(items_rows, pa.int64()), "item_id": pa.array(items_ids, pa.string())})
            held.add(table, follow)
            # bounded: at most twice the distinct ids (or the first bound), plus the batch just added
            assert _rows(held.table()) <= max(compact_from, 2 * 3 * len(distinct)) + len(rows)
        kept = held.table().to_pylist() if held.table() is not None else []
        followed = held.followed()
        # every kept row is a given row; the first row of every id is there with every one of its keys
        assert {r["row"] for r in kept} <= given_rows
        firsts = set(first_of.values())
        at_first = sorted((r["row"], r["value"]) for r in kept if r["row"] in firsts)
        oracle, row = [], 0
        for batch in batches:
            for item_id, key_count in batch:
                if first_of[item_id] == row:
                    oracle += [(row, f"{item_id}/{k}") for k in range(key_count)]
                row += 1
        assert at_first == sorted(oracle)
        # what follows the kept rows is theirs: a followed row is a kept row, and every first row follows
        followed_rows = set(followed.column("row").to_pylist()) if followed is not None else set()
        assert followed_rows <= {r["row"] for r in kept}
        assert firsts <= followed_rows
    finally:
        first_rows.COMPACT_FROM = saved


def _rows(table) -> int:
    return table.num_rows if table is not None else 0
