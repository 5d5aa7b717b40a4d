"""Every folder-reading command given a folder it did not write answers exit 2 with one line saying what the
folder is and which command reads it; never a traceback, never exit 1 (the --fail-on code)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "swe"))
from swe_fixtures import offline_hub, swe_data  # noqa: E402, F401

from overlap.api.demo import demo_data  # noqa: E402
from overlap.cli import app  # noqa: E402
from overlap.outputs.folders import folder_kind  # noqa: E402


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def data_args(data):
    return [a for name, path in data.items() for a in ("--data", f"{name}={path}")]


@pytest.fixture(scope="module")
def folders(tmp_path_factory, swe_data):  # noqa: F811
    root = tmp_path_factory.mktemp("folders")
    assert invoke("matrix", "swe-bench", "swe-polybench", *data_args(swe_data), "--out", root / "matrix").exit_code == 0
    assert invoke("ngram", "swe-rebench-v2", "swe-bench", "--field", "problem_statement:problem_statement",
                  *data_args(swe_data), "--out", root / "ngram").exit_code == 0
    from overlap.api import filter_train

    filter_train("mimo-cyber", ["cybergym"], root / "filter", data=demo_data(), reasons=("id",))
    (root / "empty").mkdir()
    (root / "random").mkdir()
    (root / "random" / "notes.txt").write_text("hello")
    (root / "notjson").mkdir()
    (root / "notjson" / "summary.json").write_text("{not json")
    (root / "future").mkdir()
    (root / "future" / "summary.json").write_text(json.dumps({"schema_version": 99, "kind": "compare"}))
    (root / "older").mkdir()
    (root / "older" / "summary.json").write_text(json.dumps({"tool": {}, "train": {"name": "t"}, "benches": []}))
    (root / "list").mkdir()
    (root / "list" / "summary.json").write_text("[1, 2]")
    return root


CASES = {"matrix": "`overlap matrix`", "ngram": "`overlap ngram`", "filter": "`overlap filter`",
         "empty": "empty folder", "random": "not an overlap result folder", "notjson": "not valid JSON",
         "future": "schema_version 99", "older": "no schema_version", "list": "not a JSON object"}


@pytest.mark.parametrize("command", ["report", "card"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_foreign_folders_are_refused_with_one_line(folders, command, name, tmp_path):
    extra = ["--card", tmp_path / "README.md", "--out", tmp_path / "card"] if command == "card" else []
    result = invoke(command, folders / name, *extra)
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and CASES[name] in lines[0], lines
    assert "`overlap compare --out`" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "card").exists()


def test_folder_kinds_are_recognised(folders):
    kinds = {name: folder_kind(folders / name).kind for name in CASES}
    assert kinds == {"matrix": "matrix", "ngram": "ngram", "filter": "filter", "empty": "empty", "random": "other",
                     "notjson": "other", "future": "compare", "older": "compare", "list": "other"}
