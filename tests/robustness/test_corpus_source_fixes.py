"""Regression tests for the causes the robustness corpus found in `overlap/sources/` (fixed there):

- JSON nested 10^5 deep (`[[[[…`) in tasks.json, a JSONL line or MiMo's `instance_json` string raised
  RecursionError out of `json.loads` (a traceback, exit 1);
- a `--data NAME=FILE` pointing at a FIFO or /dev/zero (a single file, not a folder) was opened and read:
  the run blocked forever or read without end.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus_contract import FAST, cyber_data, data_args, run_checked
from fixtures import mimo_rows

from overlap.errors import InputError
from overlap.sources.formats.whole_file import read_json_rows, read_records
from overlap.sources.places.files import SingleFile

DEEP = "[" * 100_000


@pytest.mark.parametrize("name,text", [("tasks.json", DEEP), ("rows.jsonl", '{"a": 1}\n' + DEEP + "\n"),
                                       ("rows.json", DEEP + "]" * 100_000)])
def test_deep_json_is_an_input_error(name, text, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match="nested too deeply"):
        read_json_rows(path)
    with pytest.raises(InputError):
        read_records(path, ["task_id"], required=["task_id"])


def test_deep_instance_json_is_a_counted_problem(tmp_path):
    paths = cyber_data(tmp_path / "data")
    rows = mimo_rows()
    rows[0]["extra_info"]["instance_json"] = DEEP
    pq.write_table(pa.Table.from_pylist(rows), paths["mimo-cyber"] / "cyber.parquet")
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--no-report", "--format", "json", *FAST]
    run = run_checked("fix:deep-instance-json", args, root=tmp_path, expect=0)
    problems = json.loads(run.stdout)["train"]["problems"]
    assert any(p.get("kind", p.get("code")) == "malformed_instance_json" or "instance_json" in json.dumps(p)
               for p in problems), problems


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder-less-missing"])
def test_single_file_source_refuses_what_is_not_a_regular_file(kind, tmp_path):
    path = tmp_path / "mapping.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    with pytest.raises(InputError, match="mapping.csv"):
        SingleFile(origin="local-file", location=str(path), path=path).fetch("arvo/oss_fuzz_mappings.csv")


def test_mapping_option_naming_dev_zero_is_refused(tmp_path):
    paths = cyber_data(tmp_path / "data")
    os.symlink("/dev/zero", tmp_path / "zero.csv")
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths, "mimo-cyber", "cybergym"),
            "--data", f"arvo={tmp_path / 'zero.csv'}", "--no-report", *FAST]
    run = run_checked("fix:mapping-dev-zero", args, root=tmp_path, expect=2)
    assert "not a regular file" in run.first_line
