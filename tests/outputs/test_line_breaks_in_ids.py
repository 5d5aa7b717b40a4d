"""An id holding a line break (scraped with its carriage return, a junk cell) never splits a row of a CSV file
or a line of an id list: every CSV reader reads the rows back whole, and each id list line is one id."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.api import compare
from overlap.api.demo import DEMO_ROOT
from overlap.outputs.report.result_folders import write_compare_report

DATA = {"cybergym": DEMO_ROOT / "cybergym", "arvo": DEMO_ROOT / "arvo"}
IDS = ["arvo:10055", "arvo:13555\r", "line\nbreak arvo:10340", "x\u2028y", "nul\x00arvo:12007", "task-9", "arvo:10055"]


def _read_ids(path) -> list[str]:
    return [json.loads(line) if line.startswith('"') else line
            for line in path.read_text(encoding="utf-8").split("\n")[:-1]]


@pytest.mark.parametrize("stream", [True, False])
def test_ids_with_line_breaks_read_back_whole(tmp_path, stream):
    pq.write_table(pa.table({"id": pa.array(IDS)}), tmp_path / "train.parquet")
    result = compare(str(tmp_path / "train.parquet"), ["cybergym"], data=DATA, columns={"id": "id"}, pool=None,
                     evidence=False, stream=stream)
    assert any("\r" in i for i in result.pairs["train_id"])  # the CSV case: a bare carriage return in a pair
    out = tmp_path / "out"
    write_compare_report(result, out)
    pairs = pd.read_csv(out / "pairs.csv", dtype=str, keep_default_na=False)
    assert len(pairs) == len(result.pairs)
    assert sorted(pairs["train_id"]) == sorted(result.pairs["train_id"].astype(str))
    with (out / "pairs.csv").open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.reader(handle))) == len(result.pairs) + 1
    train_clean = _read_ids(out / "train_clean_ids.txt")
    paired = set(result.pairs["train_id"])
    assert train_clean == [i for i in dict.fromkeys(IDS) if i not in paired]  # one line, one id, in source order
    assert "x\u2028y" in train_clean and "nul\x00arvo:12007" in train_clean
