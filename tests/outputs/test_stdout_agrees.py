"""What a command prints says what it writes: stdout JSON is the written document, JSON keeps value types,
and the per-reason counts of `filter` say that a row can have several reasons."""

import csv
import io
import json

import typer
from fixtures import data_args
from typer.testing import CliRunner

from overlap.cli import handles_errors
from overlap.cli.filter import filter_cmd
from overlap.cli.ids import ids
from overlap.jsonout import validate_output

app = typer.Typer()
app.command("filter")(handles_errors(filter_cmd))
app.command("ids")(handles_errors(ids))
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def test_filter_json_on_stdout_is_filter_json(demo_copy, tmp_path):
    out = tmp_path / "split"
    result = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", out, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (out / "filter.json").read_text(encoding="utf-8")
    document = json.loads(result.stdout)
    validate_output("filter", document)
    assert document["verification"]["rows_matching"] == 0 and document["kind"] == "filter"
    assert "verified: 0 of 3 rows match cybergym" in result.stderr  # the line is a message, not data


def test_filter_says_a_row_can_have_several_reasons(demo_copy, tmp_path):
    result = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", tmp_path / "s")
    assert result.exit_code == 0, result.stderr
    # the demo drops 8 rows for 9 reasons (one row is both a benchmark task and a second copy of a bug)
    assert "removed rows by reason (a row can have several reasons: 9 reasons for 8 rows):" in result.stdout
    as_csv = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", tmp_path / "c",
                 "--format", "csv")
    rows = {r["what"]: int(r["rows"]) for r in csv.DictReader(io.StringIO(as_csv.stdout))}
    assert rows["removed"] == 8 and rows["reasons given (a row can have several)"] == 9


def test_ids_json_keeps_value_types(cyber):
    result = run("ids", "arvo:10400", "jq.cve-2023-50246", "--data", f"arvo={cyber['arvo']}", "--format", "json")
    assert result.exit_code == 0, result.stderr
    ossfuzz, cve = json.loads(result.stdout)
    assert ossfuzz["number"] == 10400 and ossfuzz["in_mapping"] is True and ossfuzz["tracker"] == "old"
    assert ossfuzz["canonical"] == "42470443"  # an id, text as in every other output
    assert cve["number"] is None and cve["in_mapping"] is None and cve["tracker"] is None and cve["scheme"] == "cve"
    assert cve["canonical"] == "CVE-2023-50246"
    table = run("ids", "arvo:10400", "jq.cve-2023-50246", "--data", f"arvo={cyber['arvo']}", "--format", "csv")
    assert table.stdout.splitlines()[1:] == ["arvo:10400,ossfuzz,10400,old,42470443,true",
                                             "jq.cve-2023-50246,cve,,,CVE-2023-50246,"]


def test_summary_duplicates_count_the_repeated_ids_stderr_counts(cyber, tmp_path):
    from overlap.cli import app

    train = tmp_path / "train.jsonl"
    train.write_text('{"id": "arvo:10400"}\n{"id": "arvo:10400"}\n{"id": "arvo:10288"}\n')
    args = ["compare", train, "cybergym", "--id-column", "id", *data_args(cyber), "--no-report", "--pool", "none",
            "--no-evidence", "--text", "none"]
    result = CliRunner().invoke(app, [str(a) for a in [*args, "--format", "csv"]])
    assert result.exit_code == 0, result.stderr
    assert "train.jsonl: 1 × duplicate id (first: arvo:10400)" in result.stderr
    rows = {r[0]: r[1] for r in csv.reader(io.StringIO(result.stdout))}
    assert rows["train duplicates"] == "1 duplicate id (a row repeats an earlier row's id)"
    summary = json.loads(CliRunner().invoke(app, [str(a) for a in [*args, "--format", "json"]]).stdout)
    assert summary["train"]["duplicates"]["repeated_ids"] == 1
    validate_output("compare", summary)
