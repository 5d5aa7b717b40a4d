"""`overlap report` and `overlap card` read a compare folder; one that lost a table its summary counts, or whose
summary.json was edited off its schema, is one line naming the file and field, never an internal error, a
report without its pairs, or a card whose pair list is empty while its text counts pairs."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from overlap.cli.app import app
from overlap.outputs.report.result_folders import write_compare_report


def _strings(value):
    """Every number of a JSON value written as text."""
    if isinstance(value, dict):
        return {k: _strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v) for v in value]
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


DAMAGE = {
    "pairs.csv lost": (lambda f: (f / "pairs.csv").unlink(), "pairs.csv is missing, but summary.json counts"),
    "pairs.csv emptied": (lambda f: (f / "pairs.csv").write_text(""), "pairs.csv holds 0 pairs"),
    "duplicates.csv lost": (lambda f: (f / "duplicates.csv").unlink(), "duplicates.csv is missing"),
    "numbers as text": (lambda f: _edit(f, lambda s: s | {"benches": _strings(s["benches"])}),
                        "summary.json: benches/0/"),
    "benches null": (lambda f: _edit(f, lambda s: s | {"benches": None}), "summary.json: a compare summary"),
    "summary.json lost": (lambda f: (f / "summary.json").unlink(), "its summary.json is missing"),
    "a share of NaN": (lambda f: _edit(f, lambda s: s | {"benches": [s["benches"][0] | {"bench_share": float("nan")}]}),
                       "its summary.json is not valid JSON (NaN is not a JSON number)"),
    "duplicates.csv emptied": (lambda f: (f / "duplicates.csv").write_text(""), "duplicates.csv holds 0 groups"),
    "pairs of another benchmark": (lambda f: _edit_csv(f / "pairs.csv", lambda d: d.assign(bench="other")),
                                   "pairs.csv holds 0 pairs of cybergym, but summary.json counts"),
    "pairs.csv lost a column": (lambda f: _edit_csv(f / "pairs.csv", lambda d: d.drop(columns=["kinds"])),
                                "pairs.csv: not the pairs of a compare (no column kinds)"),
    "pair_items.parquet of another table": (lambda f: pd.DataFrame({"a": [1]}).to_parquet(f / "pair_items.parquet"),
                                            "pair_items.parquet: not the paired items of a compare"),
}


def _edit_csv(path, change) -> None:
    change(pd.read_csv(path, dtype=str, keep_default_na=False)).to_csv(path, index=False)


def _edit(folder, change) -> None:
    path = folder / "summary.json"
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", ["report", "card"])
def test_a_damaged_compare_folder_is_one_line_naming_it(demo_result, tmp_path, damage, command):
    folder = tmp_path / "res"
    write_compare_report(demo_result, folder)
    assert json.loads((folder / "summary.json").read_text())["train"]["duplicates"]["groups"]  # the demo has some
    spoil, said = DAMAGE[damage]
    spoil(folder)
    card = tmp_path / "card.md"
    card.write_text("# my dataset\n")
    args = ["report", str(folder), "--out", str(tmp_path / "out")] if command == "report" else \
        ["card", str(folder), "--card", str(card), "--out", str(tmp_path / "out")]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.startswith("overlap: error:")]
    assert len(lines) == 1 and said in lines[0] and "internal error" not in lines[0], done.output
    assert not (tmp_path / "out").exists()


def test_an_intact_folder_still_renders(demo_result, tmp_path):
    folder = tmp_path / "res"
    write_compare_report(demo_result, folder)
    shutil.rmtree(folder / "card", ignore_errors=True)
    done = CliRunner().invoke(app, ["report", str(folder), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
