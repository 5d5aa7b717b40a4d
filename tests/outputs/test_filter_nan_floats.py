"""A parquet training file with NaN floats (pandas writes every missing float as NaN), in a plain column, a
struct field and a list: the filter writes and checks its split, and every kept row is its input row, NaN where
the input has NaN. The oracle compares rows as Python values, a NaN equal to a NaN."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.api import filter_train
from overlap.api.demo import demo_data
from overlap.outputs.ship.split_files import same_table

floats = st.one_of(st.none(), st.just(math.nan), st.floats(allow_nan=False, width=64))
ids = st.sampled_from(["arvo:10055", "arvo:1", "owner__repo-1", None, "junk"])


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=25, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(ids, floats, floats, st.lists(floats, max_size=3)), min_size=1, max_size=12))
def test_nan_floats_are_kept_as_written(tmp_path_factory, rows):
    folder = tmp_path_factory.mktemp("nan")
    rows = [("arvo:10055", math.nan, math.nan, [math.nan]), *rows]  # a row with an id: the file is a dataset
    table = pa.table({"id": pa.array([r[0] for r in rows], pa.string()),
                      "score": pa.array([r[1] for r in rows], pa.float64()),
                      "meta": pa.array([{"weight": r[2]} for r in rows], pa.struct([("weight", pa.float64())])),
                      "samples": pa.array([r[3] for r in rows], pa.list_(pa.float64()))})
    pq.write_table(table, folder / "train.parquet")
    _, decision, _ = filter_train(str(folder / "train.parquet"), ["cybergym"], folder / "out", data=demo_data(),
                                  id_column="id")
    kept = pq.read_table(folder / "out" / "data" / "train.parquet").to_pylist()
    removed = {int(r) for r in decision.removed["row"]} if len(decision.removed) else set()
    expected = [row for position, row in enumerate(table.to_pylist()) if position not in removed]
    assert len(kept) == len(expected) and all(map(_same, kept, expected))
    assert not any(row["id"] == "arvo:10055" for row in kept)  # cybergym's task is never kept


def test_tables_with_nan_are_equal_to_themselves_and_not_to_others():
    nan = pa.table({"x": [1.0, math.nan, None]})
    assert same_table(nan, pa.table({"x": [1.0, math.nan, None]}))
    assert not same_table(nan, pa.table({"x": [1.0, 2.0, None]}))
    assert not same_table(nan, pa.table({"x": [1.0, None, math.nan]}))
    assert not same_table(nan, pa.table({"x": [1.0, math.nan, 0.0]}))


def test_a_nan_in_a_column_unified_to_text_is_written_null(tmp_path):
    """Shards that disagree on a column's type (text in one, floats in another) are written with it as text:
    a NaN there is the missing value it stands for (null), never the text `nan`."""
    folder = tmp_path / "train"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["arvo:1", "arvo:2"], "note": ["a", None]}), folder / "a.parquet")
    pq.write_table(pa.table({"id": ["arvo:3", "arvo:4"], "note": [1.0, math.nan]}), folder / "b.parquet")
    filter_train(str(folder), ["cybergym"], tmp_path / "out", data=demo_data(), id_column="id")
    assert json.loads((tmp_path / "out" / "filter.json").read_text())["columns_unified_to_text"] == ["note"]
    assert pq.read_table(tmp_path / "out" / "data" / "b.parquet").column("note").to_pylist() == ["1", None]
