"""Parquet shards of one training set whose column types drift: when one column is numbers in one shard and
text in another (written as text), every other column keeps pyarrow's widening (an all-null shard's null type
takes the others' type, int32 → int64) instead of being made text or refused."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.api import filter_train
from overlap.api.demo import demo_data

CONFIG = pa.struct([("python", pa.string())])


@settings(max_examples=6, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.booleans())
def test_a_text_column_leaves_the_others_widened(tmp_path_factory, null_shard_first):
    folder = tmp_path_factory.mktemp("train")
    full = pa.table({"id": ["arvo:1", "arvo:2"], "pull_number": pa.array([1, 2], pa.int64()),
                     "install_config": pa.array([{"python": "3.11"}, None], CONFIG),
                     "score": pa.array([1, 2], pa.int32())})
    nulls = pa.table({"id": ["arvo:3", "arvo:4"], "pull_number": ["3", "4"],  # as text here
                      "install_config": pa.nulls(2), "score": pa.array([3, 4], pa.int64())})
    first, second = (nulls, full) if null_shard_first else (full, nulls)
    pq.write_table(first, folder / "a.parquet")
    pq.write_table(second, folder / "b.parquet")
    out = folder / "out"
    filter_train(str(folder), ["cybergym"], out, data=demo_data(), id_column="id")
    assert json.loads((out / "filter.json").read_text())["columns_unified_to_text"] == ["pull_number"]
    for name, source in (("a", first), ("b", second)):
        written = pq.read_table(out / "data" / f"{name}.parquet")
        assert written.schema.field("install_config").type == CONFIG
        assert written.schema.field("score").type == pa.int64()
        assert written.column("score").to_pylist() == source.column("score").to_pylist()
        assert written.column("install_config").to_pylist() == source.column("install_config").to_pylist()
        assert written.column("pull_number").to_pylist() == [str(v) for v in source.column("pull_number").to_pylist()]
