"""No tracebacks: non-text cells in a text column never crash `overlap ngram` or the text check.

Rule (overlap/text/cell_checks.py): str and bytes are text; None/NaN are null; every other cell (int, float,
bool, list, dict) is counted as `non_text_cells` (with an example id and the types) and skipped.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from overlap.cli.app import app
from overlap.errors import InputError
from overlap.text.api import text_check

CLI = "import sys; from overlap.cli import main; sys.argv[0] = 'overlap'; main()"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


def _expected(cells: list) -> tuple[int, int, int]:
    """(text cells, null cells, non-text cells) by the documented rule."""
    text = sum(isinstance(c, str) for c in cells)
    null = sum(c is None or (isinstance(c, float) and math.isnan(c)) for c in cells)
    return text, null, len(cells) - text - null


def _check_counts(counts: dict, cells: list) -> None:
    text, null, other = _expected(cells)
    assert counts["items"] == len(cells)
    assert counts["non_text_cells"] == other
    assert counts["null"] == null
    used = counts["items"] - counts["null"] - counts["non_utf8"] - counts["non_text_cells"]
    assert used == text  # counted + used = rows
    if other:
        assert counts["non_text_example"] is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(train_cells=st.lists(json_values, min_size=1, max_size=8),
       bench_cells=st.lists(json_values, min_size=1, max_size=8))
def test_any_json_cells_in_text_columns(train_cells, bench_cells):
    train = pd.DataFrame({"item_id": [f"t{i}" for i in range(len(train_cells))], "text": pd.Series(
        train_cells, dtype=object)})
    bench = pd.DataFrame({"item_id": [f"b{i}" for i in range(len(bench_cells))], "text": pd.Series(
        bench_cells, dtype=object)})
    pairs = pd.DataFrame({"train_id": ["t0"], "bench_id": ["b0"]})
    try:
        res = text_check(train, bench, "text", "text", ns=(3, 2), workers=1, pairs=pairs)
    except InputError:
        return
    s = res.summary()
    _check_counts(s["train"], train_cells)
    _check_counts(s["bench"], bench_cells)
    json.dumps(s)  # the summary stays JSON


def test_arrow_tables_with_non_text_columns_are_counted():
    train = pa.table({"item_id": ["a", "b", "c"], "text": pa.array([1, None, 3], pa.int64())})
    bench = pa.table({"item_id": ["x", "y"], "text": pa.array([[1], [2, 3]])})
    s = text_check(train, bench, "text", "text", workers=1).summary()
    assert (s["train"]["non_text_cells"], s["train"]["null"], s["train"]["non_text_example"]) == (2, 1, "a")
    assert s["train"]["non_text_types"] == {"int64": 2}
    assert s["bench"]["non_text_cells"] == 2 and s["bench"]["null"] == 0


def test_identifier_field_with_non_text_cells_does_not_crash():
    train = pd.DataFrame({"item_id": ["t0", "t1"], "text": ["crash in png_read_row", "x"], "spec": [5, {"a": 1}]})
    bench = pd.DataFrame({"item_id": ["b0"], "text": ["png_read_row crashes"]})
    pairs = pd.DataFrame({"train_id": ["t0"], "bench_id": ["b0"]})
    res = text_check(train, bench, "text", "text", workers=1, pairs=pairs, identifier_field="spec")
    assert len(res.identifiers) == 1


def test_ngram_cli_on_mixed_type_text_columns(tmp_path):
    """The issue's ArrowTypeError: `overlap ngram a.jsonl b.jsonl --field text:text --id-column id`."""
    words = "the quick brown fox jumps over the lazy dog and runs far away from here"
    rows = [{"id": 1, "text": words}, {"id": 2, "text": 5}, {"id": 3, "text": [1, "a"]},
            {"id": 4, "text": {"a": 1}}, {"id": 5, "text": None}, {"id": 6, "text": True}, {"id": 7, "text": 2.5}]
    a = tmp_path / "a.jsonl"
    a.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    b = tmp_path / "b.jsonl"
    b.write_text(json.dumps({"id": "x", "text": words}) + "\n" + json.dumps({"id": "y", "text": 7}) + "\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", CLI, "ngram", str(a), str(b), "--field", "text:text",
                           "--id-column", "id", "--out", str(out), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["train"]["non_text_cells"] == 5
    assert summary["train"]["non_text_example"] == "2"
    assert summary["train"]["non_text_types"] == {"bool": 1, "dict": 1, "float": 1, "int": 1, "list": 1}
    assert summary["train"]["null"] == 1
    assert summary["bench"]["non_text_cells"] == 1
    assert summary["flags"]["13"]["train_items_flagged"] == 1


WORDS = "the quick brown fox jumps over the lazy dog while seven wizards quietly hex every jovial muse"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=st.lists(st.none() | st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=6))
def test_train_rows_without_an_id_are_counted_never_dropped_silently(ids):
    """Every row holds the bench text: each named row is flagged, each unnamed one is counted in `no_id`."""
    train = pa.table({"item_id": pa.array(ids, pa.string()), "text": [WORDS] * len(ids)})
    bench = pd.DataFrame({"item_id": ["b0"], "text": [WORDS]})
    s = text_check(train, bench, "text", "text", ns=(8,), workers=1).summary()
    assert s["train"]["no_id"] == sum(i is None for i in ids)
    assert s["flags"]["8"]["train_items_flagged"] == len({i for i in ids if i is not None})


def test_ngram_cli_says_which_streamed_rows_had_no_id(tmp_path):
    train = tmp_path / "train.csv"
    train.write_text(f"id,text\n,{WORDS}\nt1,nothing here\n")
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "b0", "q": WORDS}) + "\n")
    done = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--text", "text:q", "--id-column", "id",
                                    "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    assert "train: 1 row without an id was not checked" in done.output
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["train"]["no_id"] == 1


def test_ngram_cli_names_the_file_and_row_of_an_id_cell_that_is_no_id(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps({"id": "t0", "text": WORDS}) + "\n" + json.dumps({"id": [1], "text": WORDS}) + "\n")
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "b0", "q": WORDS}) + "\n")
    done = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--text", "text:q", "--id-column", "id"])
    assert done.exit_code == 2
    errors = [line for line in done.output.splitlines() if line.startswith("overlap: error:")]
    assert errors == [f"overlap: error: {train}: row 2: column 'id' holds a list value, not an id; ids must be "
                      "whole numbers or text"], done.output


def test_ngram_cli_table_agrees_in_number_for_size_one(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps({"id": "t0", "text": WORDS}) + "\n")
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "b0", "q": WORDS}) + "\n")
    done = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--text", "text:q", "--id-column", "id",
                                    "--ngram", "1"])
    assert done.exit_code == 0, done.output
    assert "0 bench items shorter than 1 word can never be flagged" in done.output, done.output


def test_ngram_cli_refuses_a_train_side_without_rows_as_it_refuses_an_empty_bench(tmp_path):
    """A header-only CSV (streamed) is as empty as an empty JSON lines file: exit 2 naming it, not "0 flagged"."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "b0", "q": WORDS}) + "\n")
    for name, content in (("train.csv", "id,text\n"), ("train.jsonl", "")):
        train = tmp_path / name
        train.write_text(content)
        done = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--text", "text:q", "--id-column", "id",
                                        "--out", str(tmp_path / "out")])
        errors = [line for line in done.output.splitlines() if line.startswith("overlap: error:")]
        assert done.exit_code == 2 and len(errors) == 1 and str(train) in errors[0], done.output
        assert not (tmp_path / "out").exists()
