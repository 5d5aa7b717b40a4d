"""A column named beside the id (repo, PR, base, …) that no file has is refused, naming it: misspelt, it would
count every row as missing its repo or base and turn pairs at the same base into pairs of unknown base. A
column that is there with every cell empty is no mistake: its empty cells are counted."""

from __future__ import annotations

import csv
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.api import compare
from overlap.api.demo import DEMO_ROOT
from overlap.errors import InputError

DATA = {"cybergym": DEMO_ROOT / "cybergym", "arvo": DEMO_ROOT / "arvo"}
ROWS = [{"instance_id": f"owner__repo-{i}", "repo": "owner/repo", "base_commit": None} for i in (1, 2, 3)]


def _write(folder, fmt: str):
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(ROWS, schema=pa.schema([("instance_id", pa.string()),
                                                                    ("repo", pa.string()),
                                                                    ("base_commit", pa.string())])),
                       folder / "train.parquet")
        return folder / "train.parquet"
    if fmt == "csv":
        with (folder / "train.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, ["instance_id", "repo", "base_commit"])
            writer.writeheader()
            writer.writerows(ROWS)
        return folder / "train.csv"
    if fmt == "folder":  # the column in one shard only: there, so no mistake
        (folder / "shards").mkdir()
        pq.write_table(pa.Table.from_pylist([{k: v for k, v in ROWS[0].items() if k != "base_commit"}]),
                       folder / "shards" / "a.parquet")
        pq.write_table(pa.Table.from_pylist(ROWS[1:], schema=pa.schema([("instance_id", pa.string()),
                                                                        ("repo", pa.string()),
                                                                        ("base_commit", pa.string())])),
                       folder / "shards" / "b.parquet")
        return folder / "shards"
    path = folder / ("train.jsonl" if fmt == "jsonl" else "train.json")
    text = "".join(json.dumps(r) + "\n" for r in ROWS) if fmt == "jsonl" else json.dumps(ROWS)
    path.write_text(text)
    return path


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl", "json", "folder"])
@pytest.mark.parametrize("stream", [True, False])
def test_a_misspelt_column_is_refused_and_an_empty_one_counted(tmp_path, fmt, stream):
    train = str(_write(tmp_path, fmt))
    with pytest.raises(InputError) as raised:
        compare(train, ["cybergym"], data=DATA, columns={"id": "instance_id", "repo": "repo", "base": "basecommit"},
                pool=None, evidence=False, stream=stream)
    assert "no file has a column 'basecommit' (--base-column)" in str(raised.value)
    result = compare(train, ["cybergym"], data=DATA, columns={"id": "instance_id", "repo": "repo",
                                                              "base": "base_commit"},
                     pool=None, evidence=False, stream=stream)
    problems = {p["what"]: p["count"] for p in result.summary()["train"]["problems"]}
    assert problems.get("missing_base_commit") == 3, problems
