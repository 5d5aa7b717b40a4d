"""The spill behind the streamed join's exact counts: every row comes back once, rows with equal strings in
one partition, whether it stayed in memory or went to disk; the partition hash is fixed (a Ray worker and
the driver, or two runs, agree) and its compiled form is its numpy form; the row store gives back exactly
the rows asked for."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.keyjoin import hashing
from overlap.keyjoin.hashing import hash64, partition_of
from overlap.keyjoin.spill import RowStore, Spill

SCHEMA = pa.schema([("id", pa.string()), ("row", pa.int64())])


@settings(deadline=None)  # a busy machine's first disk write is slow
@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=60), st.integers(1, 25))
def test_every_row_comes_back_once_and_equal_ids_share_a_partition(ids, max_rows):
    spill = Spill(SCHEMA, "id", max_rows=max_rows, partitions=5)
    try:
        for start in range(0, len(ids), 7):
            chunk = ids[start:start + 7]
            spill.add(pa.table({"id": pa.array(chunk, pa.string()),
                                "row": pa.array(range(start, start + len(chunk)), pa.int64())}, schema=SCHEMA))
        seen, home = [], {}
        for number, table in enumerate(spill.partitions_read()):
            for value, row in zip(table.column("id").to_pylist(), table.column("row").to_pylist(), strict=True):
                seen.append(row)
                assert home.setdefault(value, number) == number, value
        assert sorted(seen) == list(range(len(ids)))
        assert bool(spill.files) == (len(ids) >= max_rows)
    finally:
        spill.close()


def test_the_hash_is_fixed_and_ignores_how_the_array_is_laid_out():
    values = pa.array(["arvo:10055", "", None, "owner__repo-12", "x" * 700, "é"])
    assert hash64(values).tolist() == hash64(pa.chunked_array([values.slice(0, 2), values.slice(2)])).tolist()
    assert hash64(values.slice(3)).tolist() == hash64(values).tolist()[3:]
    assert hash64(values)[1] == hash64(values)[2]  # a null hashes as ""
    assert hash64(pa.array(["arvo:10055"])).tolist() == [hash64(values)[0]]
    assert hash64(values.cast(pa.large_string())).tolist() == hash64(values).tolist()
    assert len(set(hash64(pa.array([f"id-{i}" for i in range(10000)])).tolist())) == 10000
    spread = np.bincount(partition_of(pa.array([f"owner__repo-{i}" for i in range(6400)]), 64), minlength=64)
    assert spread.min() > 50 and spread.max() < 160


@settings(deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=40)), max_size=80), st.integers(0, 10))
def test_the_compiled_hash_is_the_numpy_hash(values, cut):
    array = pa.array(values, pa.string()).slice(min(cut, len(values)))
    buffers = hashing._buffers(array)
    kernel = hashing._kernel()
    assert kernel is not None  # numba is a dependency: the compiled path runs here
    if buffers is not None:
        offsets, data, _ = buffers
        assert hashing._compiled_hash64(kernel, offsets, data).tolist() == hashing._numpy_hash64(offsets,
                                                                                                 data).tolist()


@settings(deadline=None, max_examples=30)
@given(st.lists(st.tuples(st.integers(0, 3 * 8 * hashing.WEIGHTS), st.integers(0, 255)), min_size=1, max_size=6))
def test_ids_past_the_weight_table_hash_alike_both_ways(shapes):
    """Past `WEIGHTS` words the multipliers repeat (times an odd factor): both paths agree on such lengths."""
    array = pa.array([bytes([fill]) * length for length, fill in shapes], pa.binary()).cast(pa.string(), safe=False)
    offsets, data, _ = hashing._buffers(array)
    assert hashing._compiled_hash64(hashing._kernel(), offsets, data).tolist() == \
        hashing._numpy_hash64(offsets, data).tolist()


@settings(deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 5) | st.integers(0, 7).map(lambda v: (2**64 - 1) - v)
                | st.integers(0, 2**20 - 1).map(lambda v: v << 44 | 5), max_size=300))
def test_the_compiled_shared_hash_pass_is_the_sort(values):
    """Which hashes another entry also has: the compiled table pass (any size here) equals the sort, for hashes
    that differ in their low bits only, their high bits only (one spill partition's), or not at all."""
    from overlap.keyjoin.hash_kernel import shared_hashes

    hashes = np.array(values, np.uint64)
    out = np.empty(len(hashes), bool)
    shared_hashes(hashes, out)
    assert out.tolist() == hashing._sorted_shared(hashes).tolist() == [values.count(v) > 1 for v in values]


@settings(deadline=None, max_examples=5)
@given(st.integers(0, 2**32 - 1))
def test_the_bucketed_shared_hash_pass_past_its_threshold_is_a_count(seed):
    """Past `BUCKET_FROM` hashes the pass lays them out in buckets by their top bits first: equal to a plain
    count, for hashes of one spill partition (the same low bits), hashes of one bucket (the same top bits),
    repeats near and far, and one hash many times."""
    from collections import Counter

    from overlap.keyjoin.hash_kernel import BUCKET_FROM, shared_hashes

    rng = np.random.default_rng(seed)
    n = BUCKET_FROM + 1 + int(rng.integers(0, 5000))
    hashes = rng.integers(0, 2**58, n, dtype=np.uint64) << np.uint64(6)  # one partition's low bits
    hashes[: n // 8] = (hashes[: n // 8] >> np.uint64(20)) | np.uint64(0xABC << 52)  # one bucket's top bits
    picked = rng.integers(0, n, n // 20)
    hashes[rng.integers(0, n, n // 20)] = hashes[picked]  # repeats anywhere
    hashes[rng.integers(0, n, 50)] = np.uint64(2**64 - 1)
    out = np.empty(n, bool)
    shared_hashes(hashes, out)
    counts = Counter(hashes.tolist())
    assert out.tolist() == [counts[v] > 1 for v in hashes.tolist()]


def test_a_null_slot_that_spans_bytes_hashes_as_empty():
    data = pa.py_buffer(b"abcdef")
    offsets = pa.py_buffer(np.array([0, 3, 6], np.int32))
    nulled = pa.StringArray.from_buffers(2, offsets, data, pa.py_buffer(np.packbits([True, False],
                                                                                     bitorder="little")))
    assert nulled.to_pylist() == ["abc", None]
    for size in (2, hashing.COMPILED_FROM + 2):  # the numpy path and the compiled one
        array = pa.concat_arrays([nulled] * (size // 2))
        assert hash64(array).tolist()[:2] == hash64(pa.array(["abc", ""])).tolist()


def test_hashes_are_partitioned_by_their_remainder():
    hashes = pa.array([0, 5, 2**64 - 1, 12], pa.uint64())
    assert partition_of(hashes, 5).tolist() == [0, 0, (2**64 - 1) % 5, 2]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.sampled_from([1, 5, 64, 7]))
def test_the_compiled_partition_order_is_a_stable_sort_by_remainder(hashes, partitions):
    """Each partition's rows in the order given, partitions in order, and where each starts: the compiled
    counting pass against the rule written out (and the numpy path it replaces, on the same hashes)."""
    values = pa.array(hashes, pa.uint64())
    want = [i for p in range(partitions) for i, h in enumerate(hashes) if h % partitions == p]
    want_bounds = [sum(1 for h in hashes if h % partitions < p) for p in range(partitions + 1)]
    saved = hashing.COMPILED_FROM
    try:
        for compiled_from in (0, 10**9):  # the compiled loop, then the numpy path
            hashing.COMPILED_FROM = compiled_from
            order, bounds = hashing.partition_order(values, partitions)
            assert order.tolist() == want and bounds.tolist() == want_bounds
    finally:
        hashing.COMPILED_FROM = saved


STORE_SCHEMA = pa.schema([("row", pa.int64()), ("text", pa.string())])


@settings(deadline=None)
@given(st.lists(st.lists(st.integers(0, 300), max_size=8), max_size=12), st.sets(st.integers(0, 300)),
       st.integers(1, 30))
def test_the_row_store_gives_back_the_rows_asked_for(tables, wanted, max_rows):
    store = RowStore(STORE_SCHEMA, max_rows=max_rows)
    added = []
    try:
        for rows in tables:  # rows in any order within a table, as a batch's keys come
            added += [(r, f"text {r}") for r in rows]
            store.add(pa.table({"row": pa.array(rows, pa.int64()), "text": [f"text {r}" for r in rows]},
                               schema=STORE_SCHEMA))
        got = store.select(np.array(sorted(wanted), np.int64))
        assert list(zip(got.column("row").to_pylist(), got.column("text").to_pylist(), strict=True)) == [
            (r, t) for r, t in added if r in wanted]
    finally:
        store.close()


@settings(deadline=None)
@given(st.lists(st.integers(1, 9), max_size=12), st.sets(st.integers(0, 120)), st.integers(1, 30))
def test_a_store_of_consecutive_rows_gives_back_what_one_of_any_rows_does(sizes, wanted, max_rows):
    """Its row column is made again on reading, never written: the same rows and texts as a plain store."""
    plain, consecutive = RowStore(STORE_SCHEMA, max_rows=max_rows), RowStore(STORE_SCHEMA, max_rows=max_rows,
                                                                            consecutive=True)
    try:
        start = 0
        for size in sizes:  # one table per batch, its rows the batch's rows
            rows = list(range(start, start + size))
            texts = [None if r % 7 == 3 else f"t{r}" for r in rows]
            table = pa.table({"row": pa.array(rows, pa.int64()), "text": texts}, schema=STORE_SCHEMA)
            plain.add(table)
            consecutive.add(table)
            start += size
        chosen = np.array(sorted(wanted), np.int64)
        assert consecutive.select(chosen).equals(plain.select(chosen))
        assert pa.concat_tables([*consecutive.tables(), STORE_SCHEMA.empty_table()]).equals(
            pa.concat_tables([*plain.tables(), STORE_SCHEMA.empty_table()]))
    finally:
        plain.close()
        consecutive.close()


def test_a_store_of_consecutive_rows_refuses_a_table_with_a_gap():
    store = RowStore(STORE_SCHEMA, max_rows=1, consecutive=True)
    try:
        with pytest.raises(ValueError, match="not consecutive"):
            store.add(pa.table({"row": pa.array([4, 6], pa.int64()), "text": ["a", "b"]}, schema=STORE_SCHEMA))
    finally:
        store.close()


@given(st.lists(st.integers(-5, 40), max_size=30), st.sets(st.integers(-5, 40)))
def test_in_sorted_is_membership(values, rows):
    from overlap.keyjoin.spill import in_sorted

    got = in_sorted(np.array(values, np.int64), np.array(sorted(rows), np.int64))
    assert got.tolist() == [v in rows for v in values]


def test_a_full_temp_folder_is_one_line_naming_it_and_nothing_is_left_behind(tmp_path, monkeypatch):
    """A spill or row store that cannot write (a full disk) says which folder needs room and how to choose
    another; the folder it had made is removed."""
    import errno

    import pytest

    from overlap.errors import InputError
    from overlap.keyjoin import spill as spill_module

    real = spill_module.pa.OSFile

    def full(path, mode="rb"):
        if "w" in mode:
            raise OSError(errno.ENOSPC, "No space left on device", path)
        return real(path, mode)

    monkeypatch.setattr(spill_module.pa, "OSFile", full)
    for kept in (Spill(SCHEMA, "id", max_rows=2, folder=str(tmp_path)),
                 RowStore(SCHEMA, max_rows=2, folder=str(tmp_path))):
        table = pa.table({"id": pa.array(["a", "b", "c"]), "row": pa.array([0, 1, 2], pa.int64())}, schema=SCHEMA)
        with pytest.raises(InputError) as raised:
            kept.add(table)  # past max_rows: to disk
        message = str(raised.value)
        assert message.startswith(f"{tmp_path}: No space left on device while spilling") and "TMPDIR" in message
        assert "\n" not in message
        kept.close()
        assert not list(tmp_path.iterdir())


@settings(deadline=None)
@given(st.lists(st.lists(st.integers(0, 255), min_size=7, max_size=7), max_size=50))
def test_packed_kind_counts_add_up_per_kind(rows):
    """A row's count of kind k is byte k of its packed word: the totals are the sums of those bytes."""
    from overlap.keyjoin.batch import unpack_kinds
    from overlap.model import KEY_KINDS

    packed = np.array([sum(count << (8 * k) for k, count in enumerate(row)) for row in rows], np.uint64)
    want = {kind: sum(row[k] for row in rows) for k, kind in enumerate(KEY_KINDS)}
    assert unpack_kinds(packed) == {kind: total for kind, total in want.items() if total}


@settings(deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=20), min_size=1, max_size=5),
       st.lists(st.integers(0, 4), max_size=8))
def test_a_chunked_key_column_hashes_as_its_values(chunks, repeats):
    """Chunks hashed one at a time, a chunk that is the very array of an earlier one hashed once: the hashes
    are those of the values, whatever the chunks."""
    from overlap.keyjoin.batch import _chunk_hashes

    arrays = [pa.array(c, pa.string()) for c in chunks]
    arrays += [arrays[i % len(arrays)] for i in repeats]  # the same arrays again, as a PR's two key kinds are
    column = pa.chunked_array(arrays, pa.string())
    assert _chunk_hashes(column).tolist() == hash64(column.combine_chunks()).tolist()
