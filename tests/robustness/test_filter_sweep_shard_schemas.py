"""Parquet shards whose column is dictionary-encoded in one (a pandas category) and plain in another load with
`datasets` as one split, and the filter writes them so: the column is decoded, not refused as a disagreement.
Beside numbers in another shard, the decoded text column is written as text like any other."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.api import filter_train
from overlap.api.demo import demo_data

datasets = pytest.importorskip("datasets")


def _shards(tmp_path, other: pa.Array):
    train = tmp_path / "train"
    train.mkdir()
    pq.write_table(pa.table({"id": pa.array(["arvo:10055", "kept-1", "arvo:10102"]).dictionary_encode()}),
                   train / "a.parquet")
    pq.write_table(pa.table({"id": other}), train / "b.parquet")
    return train


def _load(folder):
    return datasets.load_dataset(str(folder), cache_dir=str(folder.parent / "hf-cache"))["train"]


def test_a_dictionary_column_beside_plain_text_is_decoded(tmp_path):
    train = _shards(tmp_path, pa.array(["arvo:10340", "kept-2"]))
    assert _load(train).num_rows == 5  # the input loads as one split
    out = tmp_path / "out"
    _, filtered, _ = filter_train(str(train), ["cybergym"], out, data=demo_data(), id_column="id")
    assert len(filtered.removed) == 3
    assert pq.read_schema(out / "data" / "a.parquet").field("id").type == pa.string()
    assert _load(out)["id"] == ["kept-1", "kept-2"]


def test_a_dictionary_column_beside_numbers_is_written_as_text(tmp_path):
    train = _shards(tmp_path, pa.array([10340, 77], pa.int64()))
    out = tmp_path / "out"
    _, filtered, _ = filter_train(str(train), ["cybergym"], out, data=demo_data(),
                                  columns={"id": "id", "scheme": "ossfuzz"})
    assert sorted(filtered.removed["item_id"]) == ["10340", "arvo:10055", "arvo:10102"]
    assert _load(out)["id"] == ["kept-1", "77"]
