"""JSON and JSON-lines files whose values are not what a row file holds: a first value that is not an object
(`null`, a number, a string: pyarrow's streaming reader crashed the process on a first `null`), and a JSON
file holding more than one value (two arrays back to back, as `cat a.json b.json` makes, an array and then an
object, `]garbage`), which was read as its first array. Real processes (a crash is a failed case, not a dead
pytest); the expected line is computed from the file by plain `json`, never by the reader under test."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from corpus_contract import FAST, check_contract, cyber_data, data_args, invoke

ROWS = [{"id": f"CVE-2020-{i:04d}"} for i in range(5)]
OTHER = [{"id": f"CVE-2021-{i:04d}"} for i in range(5)]
OBJECT_LINES = "".join(json.dumps(r) + "\n" for r in ROWS)

# name → (file name, bytes): the first value is not an object
NOT_AN_OBJECT_FIRST = {
    "null-json": ("t.json", b"null\n"),
    "null-only-no-newline": ("t.jsonl", b"null"),
    "null-spaced": ("t.jsonl", b"  \n null\n"),
    "null-bom": ("t.jsonl", b"\xef\xbb\xbfnull\n"),
    "null-then-rows": ("t.jsonl", b"null\n" + OBJECT_LINES.encode()),
    "null-gzip": ("t.jsonl.gz", gzip.compress(b"null\n" + OBJECT_LINES.encode())),
    "number-then-rows": ("t.jsonl", b"7\n" + OBJECT_LINES.encode()),
    "string-then-rows": ("t.jsonl", b'"x"\n' + OBJECT_LINES.encode()),
    "true-then-rows": ("t.json", b"true\n" + OBJECT_LINES.encode()),
}

# name → text of a .json file holding more than one JSON value
MORE_THAN_ONE_VALUE = {
    "two-arrays": json.dumps(ROWS) + "\n" + json.dumps(OTHER) + "\n",
    "two-arrays-same-line": json.dumps(ROWS) + json.dumps(OTHER),
    "two-arrays-indented": json.dumps(ROWS, indent=2) + "\n\n" + json.dumps(OTHER, indent=2) + "\n",
    "array-then-object": json.dumps(ROWS) + "\n" + json.dumps(OTHER[0]) + "\n",
    "bracket-garbage": json.dumps(ROWS) + "]garbage",
    "array-then-number": json.dumps(ROWS) + "\n\n  5\n",
}


def _compare(train: str, bench: str) -> list[str]:
    return ["compare", train, bench, "--id-column", "id", "--no-report", "--format", "json", *FAST]


def _run(case: str, args: list[str], root: Path):
    return invoke(case, args, root=root, subprocess_run=True, timeout=60)


@pytest.mark.parametrize("side", ["train", "bench"])
@pytest.mark.parametrize("name", sorted(NOT_AN_OBJECT_FIRST))
def test_first_value_not_an_object_is_one_line(name, side, tmp_path):
    file_name, data = NOT_AN_OBJECT_FIRST[name]
    (tmp_path / file_name).write_bytes(data)
    (tmp_path / "ok.jsonl").write_text("".join(json.dumps(r) + "\n" for r in OTHER))
    args = _compare(file_name, "ok.jsonl") if side == "train" else _compare("ok.jsonl", file_name)
    run = check_contract(_run(f"json:{name}:{side}", args, tmp_path), expect=2)
    # the first non-blank line of the file holds the value that is not an object
    text = (gzip.decompress(data) if file_name.endswith(".gz") else data).decode("utf-8-sig")
    line = next(i for i, raw in enumerate(text.split("\n"), 1) if raw.strip())
    assert file_name in run.first_line and f"line {line}:" in run.first_line, run.first_line


@pytest.mark.parametrize("adapter", ["cybergym", "sec-bench"])
def test_registered_bench_file_that_is_only_null(adapter, tmp_path):
    paths = cyber_data(tmp_path / "data")
    target = paths[adapter] / ("tasks.json" if adapter == "cybergym" else "data/eval-oss.jsonl")
    target.write_bytes(b"null\n")
    args = ["compare", "mimo-cyber", adapter, *data_args(paths), "--no-report", "--format", "json", *FAST]
    run = check_contract(_run(f"json:only-null:{adapter}", args, tmp_path), expect=2)
    assert target.name in run.first_line, run.first_line


def _extra_line(text: str) -> int:
    """The line where content after the first JSON value starts (plain json, the documented rule)."""
    _, end = json.JSONDecoder().raw_decode(text)
    start = end + len(text[end:]) - len(text[end:].lstrip())
    return text.count("\n", 0, start) + 1


@pytest.mark.parametrize("side", ["train", "bench"])
@pytest.mark.parametrize("name", sorted(MORE_THAN_ONE_VALUE))
def test_json_file_with_more_than_one_value_is_refused(name, side, tmp_path):
    text = MORE_THAN_ONE_VALUE[name]
    (tmp_path / "t.json").write_text(text)
    (tmp_path / "ok.jsonl").write_text("".join(json.dumps(r) + "\n" for r in OTHER))
    args = _compare("t.json", "ok.jsonl") if side == "train" else _compare("ok.jsonl", "t.json")
    run = check_contract(_run(f"json:{name}:{side}", args, tmp_path), expect=2)
    assert "t.json" in run.first_line and f"line {_extra_line(text)}:" in run.first_line, run.first_line
    assert "one array" in run.first_line and "JSON lines" in run.first_line, run.first_line


@pytest.mark.parametrize("tail", ["", "\n", "\n\n  \t\r\n"])
def test_one_array_with_trailing_blank_space_is_read_whole(tail, tmp_path):
    (tmp_path / "t.json").write_text(json.dumps(ROWS + OTHER, indent=1) + tail)
    (tmp_path / "ok.jsonl").write_text("".join(json.dumps(r) + "\n" for r in OTHER[:2]))
    run = check_contract(_run("json:one-array", _compare("ok.jsonl", "t.json"), tmp_path), expect=0)
    assert json.loads(run.stdout)["benches"][0]["bench_items"] == len(ROWS + OTHER)
