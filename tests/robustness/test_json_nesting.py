"""No tracebacks: deep JSON nesting is an input error naming file and line, never a RecursionError."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from overlap.errors import InputError
from overlap.sources.formats.whole_file import read_json_rows, read_records
from overlap.text.api import text_check

CLI = "import sys; from overlap.cli import main; sys.argv[0] = 'overlap'; main()"
DEEP = 100_000


def test_a_deep_json_line_is_refused_with_its_line(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n\n' + "[" * DEEP + "\n")
    with pytest.raises(InputError, match=r"deep\.jsonl: line 3: JSON nested too deeply"):
        read_json_rows(path)


def test_a_deep_json_array_file_is_refused_with_its_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('[{"id": "a", "text": "x"},\n{"id": "b",\n "text": ' + "[" * DEEP + "]" * DEEP + "}]\n")
    with pytest.raises(InputError, match=r"deep\.json: line 3: JSON nested too deeply"):
        read_records(path, ["id", "text"])


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    path = tmp_path / "ok.json"
    rows = [{"id": "a", "text": "[" * 5000}, {"id": "b", "text": "{" * 5000 + '"'}]
    path.write_text(json.dumps(rows))
    assert read_json_rows(path) == rows


def test_json_lines_are_split_on_newlines_only(tmp_path):
    """U+2028 and friends are legal inside JSON strings; str.splitlines used to cut a line there."""
    path = tmp_path / "u.jsonl"
    rows = [{"id": "a", "text": "one\u2028two\x85three"}, {"id": "b", "text": "x"}]
    path.write_text("\ufeff" + "\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n",
                    encoding="utf-8")
    assert read_json_rows(path) == rows


def test_a_non_utf8_line_names_its_line_and_byte(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "\xff"}\n')
    with pytest.raises(InputError, match=r"line 2: not UTF-8 text \(byte 20\)"):
        read_json_rows(path)


def test_nesting_the_parser_accepts_is_a_non_text_cell():
    deep = json.loads("[" * 800 + "]" * 800)
    train = pd.DataFrame({"item_id": ["t0", "t1"], "text": pd.Series([deep, "some words here"], dtype=object)})
    s = text_check(train, train, "text", "text", ns=(2,), workers=1).summary()
    assert s["train"]["non_text_cells"] == 1 and s["bench"]["non_text_cells"] == 1


BODIES = {
    "deep.jsonl": lambda: '{"id": "a", "text": "x"}\n' + "[" * DEEP + "\n",
    "deep.json": lambda: '[{"id": "a", "text": ' + '{"k": ' * DEEP + "1" + "}" * DEEP + "}]",
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_ngram_cli_exits_2_with_one_line(tmp_path, name):
    body = BODIES[name]()
    path = tmp_path / name
    path.write_text(body)
    ok = tmp_path / "ok.jsonl"
    ok.write_text('{"id": "b", "text": "y"}\n')
    proc = subprocess.run([sys.executable, "-c", CLI, "ngram", str(path), str(ok), "--field", "text:text",
                           "--id-column", "id"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0] and "line" in lines[0], proc.stderr
