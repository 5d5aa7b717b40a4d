"""A `--targets` file whose strings hold characters `str.splitlines` takes for line ends (U+2028, U+2029, U+0085,
\\v, \\f, \\x1c–\\x1e): JSON lines end at \\n alone and a CSV record at \\n, \\r\\n or \\r, so such a row was cut in
two and refused as invalid JSON. Every value is read back as written; the oracle is the list of rows written."""

from __future__ import annotations

import csv
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.audit.study.targets import read_targets

BREAKS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


def _rows(ids):
    return [{"path": "repo", "instance_id": i, "base_commit": "a" * 40, "patch": f"--- a/x\n+++ b/x\n@@ {i}\n"}
            for i in ids]


@pytest.mark.parametrize("char", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_json_lines_with_a_line_break_character_inside_a_string(tmp_path, char, line_end):
    rows = _rows([f"task{char}1", f"{char}-2{char}x"])
    (tmp_path / "repo").mkdir()
    path = tmp_path / "targets.jsonl"
    path.write_bytes("".join(json.dumps(r, ensure_ascii=False) + line_end for r in rows).encode("utf-8"))
    targets = read_targets(path)
    assert [t.instance_id for t in targets] == [r["instance_id"] for r in rows]
    assert [t.patch for t in targets] == [r["patch"] for r in rows]
    assert all(t.error is None for t in targets), [t.error for t in targets]


@pytest.mark.parametrize("char", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
def test_csv_with_a_line_break_character_inside_a_cell(tmp_path, char):
    rows = _rows([f"task{char}1", "plain-2"])
    (tmp_path / "repo").mkdir()
    path = tmp_path / "targets.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    targets = read_targets(path)
    assert [t.instance_id for t in targets] == [r["instance_id"] for r in rows]
    assert [t.patch for t in targets] == [r["patch"] for r in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(["a", "-", " ", *BREAKS]), min_size=1, max_size=6)
                .filter(lambda s: s.strip() == s and s.strip()), min_size=1, max_size=5, unique=True))
def test_json_lines_read_back_as_written(tmp_path_factory, ids):
    folder = tmp_path_factory.mktemp("targets")
    (folder / "repo").mkdir()
    rows = _rows(ids)
    path = folder / "targets.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert sorted(t.instance_id for t in read_targets(path)) == sorted(ids)
