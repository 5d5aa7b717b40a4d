"""A written split of JSON lines or CSV shards loads with `datasets` whenever its input did: the rows that gave a
column its type can all be removed from the first shard, leaving that column null (JSON) or blank (CSV, read as
float) there while a later shard holds text; the loading card declares the types of all kept rows."""

from __future__ import annotations

import json

import pytest

from overlap.api import filter_train
from overlap.api.demo import demo_data

datasets = pytest.importorskip("datasets")


def _load(folder):
    return datasets.load_dataset(str(folder), cache_dir=str(folder.parent / "hf-cache"))["train"]


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_jsonl_shards_whose_first_keeps_only_nulls_still_load(tmp_path):
    train = tmp_path / "train"
    train.mkdir()
    _jsonl(train / "a.jsonl", [{"id": "arvo:10055", "note": "typed here", "n": 1, "m": {"p": 1, "q": "s"}},
                               {"id": "kept-1", "note": None, "n": None, "m": {"p": 2}}])
    _jsonl(train / "b.jsonl", [{"id": "kept-2", "note": "text", "n": 2, "m": {"q": "z", "p": 3}}])
    assert _load(train).num_rows == 3  # the input loads
    out = tmp_path / "out"
    filter_train(str(train), ["cybergym"], out, data=demo_data(), id_column="id")
    rows = _load(out)
    assert rows["id"] == ["kept-1", "kept-2"] and rows["note"] == [None, "text"] and rows["n"] == [None, 2]
    assert (out / "data" / "a.jsonl").read_bytes() == (train / "a.jsonl").read_bytes().splitlines(True)[1]


def test_csv_shards_whose_first_keeps_only_blanks_still_load(tmp_path):
    train = tmp_path / "train"
    train.mkdir()
    (train / "a.csv").write_text("id,note\narvo:10055,typed here\nkept-1,\n", encoding="utf-8")
    (train / "b.csv").write_text("id,note\nkept-2,text\n", encoding="utf-8")
    assert _load(train).num_rows == 3
    out = tmp_path / "out"
    filter_train(str(train), ["cybergym"], out, data=demo_data(), id_column="id")
    rows = _load(out)
    assert rows["id"] == ["kept-1", "kept-2"] and rows["note"] == [None, "text"]


def test_a_split_whose_types_cannot_be_widened_declares_none(tmp_path):
    train = tmp_path / "train"
    train.mkdir()
    _jsonl(train / "a.jsonl", [{"id": "kept-1", "v": 1}])
    _jsonl(train / "b.jsonl", [{"id": "kept-2", "v": {"x": 1}}])  # no one type: the card stays as it was
    out = tmp_path / "out"
    filter_train(str(train), ["cybergym"], out, data=demo_data(), id_column="id")
    assert "features" not in (out / "README.md").read_text(encoding="utf-8")


def test_json_lines_named_json_are_typed_as_json_lines(tmp_path):
    """`x.json` holding JSON lines keeps its name when written; its card's types are read as JSON lines, not as
    CSV (which made one column of each line's text and a card that could not load)."""
    train = tmp_path / "train"
    train.mkdir()
    _jsonl(train / "a.json", [{"id": "arvo:10055", "x": "s"}, {"id": "kept-1", "x": "a"}, {"id": "kept-2", "x": "t"}])
    out = tmp_path / "out"
    filter_train(str(train), ["cybergym"], out, data=demo_data(), id_column="id")
    rows = _load(out)
    assert rows["id"] == ["kept-1", "kept-2"] and rows["x"] == ["a", "t"]
