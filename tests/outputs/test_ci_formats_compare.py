"""`overlap compare` / `filter --format sarif|junit` on the demo data: one SARIF result per contaminated
benchmark item, one JUnit test case per benchmark. The expected items are read from the report's pairs.csv
with the csv module (every bench_id in a counted pair, with its train ids), not from the writers' code."""

from __future__ import annotations

import csv
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ci_checks import assert_valid_junit, assert_valid_sarif
from typer.testing import CliRunner

from overlap.cli import app

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


@pytest.fixture()
def checkout(tmp_path, monkeypatch):
    """A benchmark maintainer's checkout holding the demo datasets; commands run from its root, as in CI."""
    root = tmp_path / "repo"
    shutil.copytree(DEMO, root / "data")
    monkeypatch.chdir(root)
    return root


DATA = ["-d", "mimo-cyber=data/mimo-cyber", "-d", "cybergym=data/cybergym", "-d", "arvo=data/arvo",
        "-d", "arvo-meta=data/arvo-meta"]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def paired_bench_items(pairs_csv: Path) -> dict[tuple[str, str], set[str]]:
    """(bench, bench_id) → train ids, from pairs.csv (one row per counted pair)."""
    found: dict[tuple[str, str], set[str]] = {}
    with pairs_csv.open(newline="") as f:
        for row in csv.DictReader(f):
            found.setdefault((row["bench"], row["bench_id"]), set()).add(row["train_id"])
    return found


def test_compare_sarif_one_result_per_contaminated_item(checkout):
    res = run("compare", "mimo-cyber", "cybergym", *DATA, "--out", "out", "--format", "sarif", "--fail-on", "1")
    assert res.exit_code == 1  # --fail-on keeps its exit code
    log = json.loads(res.stdout)
    assert_valid_sarif(log)
    expected = paired_bench_items(checkout / "out" / "pairs.csv")
    results = log["runs"][0]["results"]
    got = {(r["properties"]["bench"], r["properties"]["bench_id"]): set(r["properties"]["train_ids"]) for r in results}
    assert expected and got == expected and len(results) == len(expected)
    for result in results:
        assert result["level"] == "error"  # cybergym is over --fail-on 1
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "data/cybergym/tasks.json"
        assert result["properties"]["bench_id"] in result["message"]["text"]
        assert "out/pairs.csv" in result["message"]["text"]
    # contaminated ids as compare lists them
    listed = (checkout / "out" / "cybergym_contaminated_ids.txt").read_text().split()
    assert sorted(listed) == sorted(r["properties"]["bench_id"] for r in results)


def test_compare_sarif_levels_follow_fail_on_and_fingerprints_are_stable(checkout):
    below = run("compare", "mimo-cyber", "cybergym", *DATA, "--no-report", "--format", "sarif", "--fail-on", "100%")
    assert below.exit_code == 0
    unset = run("compare", "mimo-cyber", "cybergym", *DATA, "--no-report", "--format", "sarif")
    assert unset.exit_code == 0
    levels = [{r["level"] for r in json.loads(x.stdout)["runs"][0]["results"]} for x in (below, unset)]
    assert levels == [{"note"}, {"warning"}]
    prints = [[r["partialFingerprints"] for r in json.loads(x.stdout)["runs"][0]["results"]] for x in (below, unset)]
    assert prints[0] == prints[1] and len({json.dumps(p) for p in prints[0]}) == len(prints[0])


def test_compare_junit_one_case_per_benchmark(checkout):
    # a second benchmark of the user's own that shares nothing with the training set: a passing case
    (checkout / "clean.jsonl").write_text('{"id": "arvo:99999901"}\n{"id": "arvo:99999902"}\n')
    res = run("compare", "mimo-cyber", "cybergym", "clean.jsonl", "--id-column", "id", *DATA, "--out", "out",
              "--format", "junit", "--fail-on", "1")
    assert res.exit_code == 1, res.output
    assert_valid_junit(res.stdout)
    summary = json.loads((checkout / "out" / "summary.json").read_text())
    cases = ET.fromstring(res.stdout).findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [b["bench"] for b in summary["benches"]]
    expected = paired_bench_items(checkout / "out" / "pairs.csv")
    assert [c.find("failure") is not None for c in cases] == [True, False]
    for case, bench in zip(cases, summary["benches"], strict=True):
        failure = case.find("failure")
        assert (failure is not None) == (bench["bench_items_matched"] >= 1)
        text = failure.text if failure is not None else ""
        listed = {line.split(": ", 1)[0] for line in (text or "").splitlines()}
        assert listed == {bid for (b, bid) in expected if b == bench["bench"]}


def test_filter_sarif_and_junit(checkout):
    res = run("filter", "mimo-cyber", "cybergym", *DATA, "--out", "filtered", "--format", "sarif")
    assert res.exit_code == 0, res.output
    log = json.loads(res.stdout)
    assert_valid_sarif(log)
    contaminated = (checkout / "filtered" / "cybergym_contaminated_ids.txt").read_text().split()
    assert sorted(r["properties"]["bench_id"] for r in log["runs"][0]["results"]) == sorted(contaminated)
    assert "verified: 0 of" in res.stderr
    junit = run("filter", "mimo-cyber", "cybergym", *DATA, "--out", "filtered2", "--format", "junit")
    assert junit.exit_code == 0
    assert_valid_junit(junit.stdout)
    assert [c.get("name") for c in ET.fromstring(junit.stdout).findall("./testsuite/testcase")] == ["cybergym"]


def test_filter_fail_on_writes_the_split_then_exits_1(checkout):
    res = run("filter", "mimo-cyber", "cybergym", *DATA, "--out", "filtered", "--format", "sarif", "--fail-on", "1")
    assert res.exit_code == 1, res.output
    log = json.loads(res.stdout)
    assert_valid_sarif(log)
    assert {r["level"] for r in log["runs"][0]["results"]} == {"error"}  # cybergym is over --fail-on 1
    contaminated = (checkout / "filtered" / "cybergym_contaminated_ids.txt").read_text().split()
    assert f"overlap: cybergym: {len(contaminated)} of" in res.stderr and "--fail-on 1" in res.stderr
    # the split is there, verified, whatever the exit code
    assert "verified: 0 of" in res.stderr and json.loads((checkout / "filtered" / "filter.json").read_text())
    below = run("filter", "mimo-cyber", "cybergym", *DATA, "--out", "filtered2", "--fail-on", "100%")
    assert below.exit_code == 0 and "--fail-on" not in below.stderr
    table = run("filter", "mimo-cyber", "cybergym", *DATA, "--out", "filtered3", "--fail-on", "1")
    assert table.exit_code == 1 and "rows read:" in table.stdout
    assert run("filter", "mimo-cyber", "cybergym", *DATA, "--out", "f4", "--fail-on", "x").exit_code == 2
    assert not (checkout / "f4").exists()


def test_other_commands_refuse_the_ci_formats(checkout):
    res = run("ids", "arvo:10055", "--format", "sarif")
    assert res.exit_code == 2 and "--format" in res.stderr
