"""Targets files with bad rows nobody put in a fixture: every unusable row is its own failed target with its
own reason, a CSV row with more cells than the header is refused rather than read short, and a header that
names a column twice is one line."""

from __future__ import annotations

import json
import shutil

import pytest
from audit_helpers import run_cli
from batch_helpers import repo, write_jsonl

from overlap.audit.study.run import BatchOptions, run_batch
from overlap.audit.study.targets import read_targets
from overlap.errors import InputError

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_each_bad_row_is_reported_with_its_own_reason(tmp_path):
    """Rows that are no object or name no target all had the same empty target: the second and later ones
    were counted as repeats of the first and their reasons never shown."""
    repo(tmp_path / "clean", leak=False)
    rows = [{"path": "clean", "instance_id": "ok-1"}, [1, 2], "text", {}, {"instance_id": "x"}, {}]
    write_jsonl(tmp_path / "t.jsonl", rows)
    doc = run_batch(read_targets(tmp_path / "t.jsonl"), BatchOptions(jobs=1))
    errors = sorted(e["error"] for e in doc["targets"] if e["status"] == "error")
    assert errors == ["row 2: not an object", "row 3: not an object", "row 4: neither image nor path",
                      "row 5: neither image nor path", "row 6: neither image nor path"]
    assert doc["counts"] == {"targets": 6, "ok": 1, "error": 5, "repeated_rows": 0}


def test_a_repeated_good_row_is_still_audited_once(tmp_path):
    repo(tmp_path / "clean", leak=False)
    rows = [{"path": "clean", "instance_id": "ok-1"}, {"path": "clean", "instance_id": "ok-1"}]
    write_jsonl(tmp_path / "t.jsonl", rows)
    doc = run_batch(read_targets(tmp_path / "t.jsonl"), BatchOptions(jobs=1))
    assert doc["counts"] == {"targets": 1, "ok": 1, "error": 0, "repeated_rows": 1}


def test_csv_row_with_more_cells_than_the_header_fails_alone(tmp_path):
    """An unquoted comma (a patch, a path) shifts the cells: the row was read with its extra cells dropped."""
    repo(tmp_path / "clean", leak=False)
    (tmp_path / "t.csv").write_text("path,instance_id\nclean,a,extra,more\nclean,b\n")
    doc = run_batch(read_targets(tmp_path / "t.csv"), BatchOptions(jobs=1))
    by = {e["instance_id"]: e for e in doc["targets"]}
    assert by["b"]["status"] == "ok"
    bad = [e for e in doc["targets"] if e["status"] == "error"]
    assert [e["error"] for e in bad] == ["row 1: 4 cells, the header has 2 (quote a cell that holds a comma)"]


def test_csv_header_naming_a_column_twice_is_one_line(tmp_path):
    """`path,path`: the reader kept the last cell, silently auditing another target than the first column
    named."""
    repo(tmp_path / "a", leak=False)
    (tmp_path / "t.csv").write_text("path,instance_id,path\na,x,b\n")
    with pytest.raises(InputError, match="column 'path' appears twice in the header"):
        read_targets(tmp_path / "t.csv")
    res = run_cli("--targets", str(tmp_path / "t.csv"), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert res.code == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and "appears twice" in res.stderr
    assert not (tmp_path / "out").exists()


def test_bad_rows_through_the_command(tmp_path):
    """The command: exit 2, every bad row named on stderr, the good one audited, the document deterministic."""
    repo(tmp_path / "clean", leak=False)
    write_jsonl(tmp_path / "t.jsonl", [{"path": "clean", "instance_id": "ok"}, {}, {"set": "s"}])
    out = tmp_path / "out"
    res = run_cli("--targets", str(tmp_path / "t.jsonl"), "--out", str(out), "--jobs", "1", cwd=tmp_path, timeout=60)
    assert res.code == 2, res.stderr
    assert "row 2: neither image nor path" in res.stdout and "row 3: neither image nor path" in res.stdout
    first = (out / "audit.json").read_text()
    again = run_cli("--targets", str(tmp_path / "t.jsonl"), "--out", str(out), "--format", "json", cwd=tmp_path,
                    timeout=60)
    assert again.stdout == first and json.loads(first)["counts"]["error"] == 2
