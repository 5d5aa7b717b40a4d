"""A key cache entry of another shape (an edited meta.json, a parquet file of other columns) is a damaged entry:
the dataset is read again and the cells are those of a fresh run, never an error or a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.api.atlas import atlas
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


@pytest.mark.parametrize("damage", ["meta of other fields", "meta a list", "keys of other columns",
                                    "items of other columns"])
def test_a_key_entry_of_another_shape_is_read_again(tmp_path, damage):
    for name, ids in (("t", ["arvo:10055", "CVE-2021-1234"]), ("b", ["arvo:10055", "foo/bar#1"])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")
    (tmp_path / "reg.toml").write_text(
        '[[dataset]]\nname = "sweep-train"\nrole = "training"\npath = "t.jsonl"\ncolumns = {id = "id"}\n\n'
        '[[dataset]]\nname = "sweep-bench"\nrole = "benchmark"\npath = "b.jsonl"\ncolumns = {id = "id"}\n',
        encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    names, data, cache = ["sweep-train", "sweep-bench"], {"arvo": DEMO / "arvo"}, tmp_path / "cache"
    fresh = atlas(names, data=data, cache=cache, pool="none")
    entries = sorted((cache / "keys").iterdir())
    assert entries  # the benchmark, read whole
    for entry in entries:
        if damage.startswith("meta"):
            meta = [1] if damage == "meta a list" else {"name": "x", "provenance": {"bogus": 1}, "problems": []}
            (entry / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        else:
            pq.write_table(pa.table({"x": [1]}), entry / f"{damage.split()[0]}.parquet")
    for cell in (cache / "cells").iterdir():  # the cells are joined again from the keys
        cell.unlink()
    again = atlas(names, data=data, cache=cache, pool="none")
    assert again.cells == fresh.cells and again.recomputed == fresh.recomputed
