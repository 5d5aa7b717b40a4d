"""The routes table: a row per image set, a column per route (contamination from a compare folder's id lists,
Git history, leftovers and file times, fixed builds, network), each cell the count, the share's 95 % Wilson
interval for the whole set (solved here from its defining equation) and the worst finding behind it; in every
format, the console within ``COLUMNS``, the CSV's counts numbers, the HTML with its plot."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from overlap.audit.model import CHECK_ORDER
from overlap.audit.study.routes import read_contamination, routes_table
from overlap.audit.study.routes_render import (
    render_routes_console,
    render_routes_csv,
    render_routes_html,
    render_routes_md,
)
from overlap.audit.study.run import BatchOptions, document
from overlap.audit.study.summary import entry_of
from overlap.audit.study.targets import BatchTarget
from overlap.errors import InputError

Z = 1.959963984540054
N, POPULATION = 24, 2602


def wilson(k: int, n: int, population: int) -> tuple[float, float]:
    p, m = k / n, n * (population - 1) / (population - n)
    a, b, c = 1 + Z * Z / m, -(2 * p + Z * Z / m), p * p
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def task(i: int) -> tuple[list[dict], dict | None]:
    """Task i's findings and network section: G5 critical on 0-9 (G1 medium also on 0-4), F1 high on 6-23,
    a T1 low (counted nowhere) on 20-23, a release carrying the fix for 0-2."""
    findings = []
    if i < 10:
        findings.append({"check": "G5", "route": "git", "severity": "critical", "key": f"G5:{i}"})
    if i < 5:
        findings.append({"check": "G1", "route": "git", "severity": "medium", "key": "G1:refs/tags"})
    if i >= 6:
        findings.append({"check": "F1", "route": "fixed-content", "severity": "high", "key": f"F1:{i}"})
    if i >= 20:
        findings.append({"check": "T1", "route": "times", "severity": "low", "key": "T1"})
    network = {"route": "open", "ecosystem": "pypi", "package": "calc", "first_release": {"version": "1.2"},
               "pin": "calc<1.2"} if i < 3 else {"route": "checked", "reason": "no release carries it"}
    return findings, network


@pytest.fixture
def doc():
    entries = []
    for name in ("swe-x:v1", "swe-x:latest"):
        for i in range(N):
            findings, network = task(i) if name.endswith("v1") else ([], {"route": "checked", "reason": "none"})
            t = BatchTarget(name, f"docker://r.test/t{i}:{name[-2:]}", "image", instance_id=f"t-{i:02d}")
            report = {"verdict": "leak" if findings else "clean", "complete": True, "inputs": {},
                      "targets": [{"path": "/", "findings": findings, "image": {"config_digest": f"sha256:{i:064x}"}}]}
            entries.append(entry_of(t, t.key({}), {"status": "ok", "report": report, "network": network}))
    sampling = {n: {"population": POPULATION, "drawn": N, "seed": 0, "method": "random"}
                for n in ("swe-x:v1", "swe-x:latest")}
    return document(entries, BatchOptions(check_index=True), order=["swe-x:v1", "swe-x:latest"], sampling=sampling)


@pytest.fixture
def compare_folder(tmp_path):
    folder = tmp_path / "cmp"
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps({"train": {"name": "train-a"}, "benches": []}))
    (folder / "swe-x_contaminated_ids.txt").write_text("t-01\nt-07\nt-23\nnot-sampled\n")
    (folder / "other_contaminated_ids.txt").write_text("t-02\n")
    return folder


def test_every_route_counted_with_its_interval_and_worst_finding(doc, compare_folder):
    table = routes_table(doc, read_contamination([str(compare_folder)]))
    assert [r["set"] for r in table["sets"]] == ["swe-x:v1", "swe-x:latest"]  # the order given
    v1 = table["sets"][0]["routes"]
    want = {"contamination": ["t-01", "t-07", "t-23"], "git": [f"t-{i:02d}" for i in range(10)],
            "leftovers": [f"t-{i:02d}" for i in range(6, 24)], "network": ["t-00", "t-01", "t-02"]}
    for rid, ids in want.items():
        cell = v1[rid]
        assert cell["ids"] == ids and cell["count"] == len(ids), rid
        low, high = wilson(len(ids), N, POPULATION)
        assert abs(cell["estimate"]["low"] - low) < 1e-4 and abs(cell["estimate"]["high"] - high) < 1e-4, rid
    assert v1["git"]["worst"]["check"] == "G5" and v1["git"]["worst"]["severity"] == "critical"
    assert v1["leftovers"]["worst"]["check"] == "F1"  # the T1 (low) counts nowhere
    assert v1["contamination"]["worst"]["key"] == "train-a"
    builds = "B1" in CHECK_ORDER  # an audit with the check: counted (none here), else "not checked"
    assert v1["fixed_builds"]["checked"] is builds and v1["fixed_builds"]["count"] == (0 if builds else None)
    latest = table["sets"][1]["routes"]
    assert all(latest[r]["count"] == 0 for r in ("git", "leftovers", "network"))
    assert latest["contamination"]["ids"] == want["contamination"]  # the same tasks, whatever the build


def test_the_routes_table_in_every_format(doc, compare_folder, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    table = routes_table(doc, read_contamination([str(compare_folder)]))
    console = render_routes_console(table)
    assert max(map(len, console.splitlines())) <= 80, console
    line = next(x for x in console.splitlines() if x.strip().startswith("Git history"))
    assert line.split()[2:] == ["10", "42", "%", "25", "%–61", "%", "G5", "critical"]
    assert "fixed builds" in console
    rows = list(csv.DictReader(io.StringIO(render_routes_csv(table))))
    assert [r["set"] for r in rows] == ["swe-x:v1", "swe-x:latest"]
    assert int(rows[0]["git"]) == 10 and abs(float(rows[0]["git_low"]) - wilson(10, N, POPULATION)[0]) < 1e-4
    assert int(rows[0]["leftovers"]) == 18 and rows[0]["leftovers_worst"].startswith("F1 high")
    for row in rows:
        for key in ("audited", "population", "git", "leftovers", "network", "contamination"):
            float(row[key])
    md = render_routes_md(table)
    assert "| 10 (42 %, 25 %–61 %); G5 critical (G5:0) |" in md and "| 18 (75 %, 55 %–88 %); F1 high (F1:10) |" in md
    page = render_routes_html(table)
    assert "<svg" in page and "border-bottom: 3px solid #1f6fb2" in page and "Figure 1." in page
    assert f'width="{0.4167 * 400:.1f}"' in page  # the Git bar: 10 of 24


def test_a_folder_without_id_lists_is_refused(tmp_path):
    with pytest.raises(InputError, match="--contamination"):
        read_contamination([str(tmp_path)])


def test_the_cli_prints_the_routes_table_and_writes_it(tmp_path, compare_folder):
    import shutil

    from audit_helpers import run_cli
    from batch_helpers import repo, write_jsonl

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    base_l, patch_l = repo(tmp_path / "leaky", leak=True)
    base_c, patch_c = repo(tmp_path / "clean", leak=False)
    write_jsonl(tmp_path / "swe-x.jsonl", [
        {"path": "leaky", "instance_id": "t-07", "base_commit": base_l, "patch": patch_l},
        {"path": "clean", "instance_id": "t-08", "base_commit": base_c, "patch": patch_c}])
    res = run_cli("--targets", str(tmp_path / "swe-x.jsonl"), "--routes", "--contamination", str(compare_folder),
                  "--format", "csv", "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=180)
    assert res.code == 0, res.stderr
    (row,) = csv.DictReader(io.StringIO(res.stdout))
    assert row["set"] == "swe-x" and row["contamination_ids"] == "t-07" and row["git_ids"] == "t-07"
    assert row["git_share"] == ""  # a targets file gives no set size: counts only
    assert (tmp_path / "out" / "routes.csv").read_text() == res.stdout
    assert json.loads((tmp_path / "out" / "routes.json").read_text())["sets"][0]["routes"]["git"]["count"] == 1
    refused = run_cli(str(tmp_path / "clean"), "--routes", cwd=tmp_path)
    assert refused.code == 2 and "--routes: only with --targets or --benchmark" in refused.stderr


def test_fixed_builds_and_pocs_are_their_own_routes(doc):
    """B1 (a second build from the fixed code) and P1 (a PoC input) findings land in their own columns."""
    for e in doc["targets"]:
        if e["set"] == "swe-x:v1" and e["instance_id"] in ("t-03", "t-04"):
            e["findings"].append({"check": "B1", "route": "builds", "severity": "high", "key": "B1:/root/fix_binary"})
        if e["set"] == "swe-x:v1" and e["instance_id"] == "t-04":
            e["findings"].append({"check": "P1", "route": "builds", "severity": "critical", "key": "P1:/tmp/poc"})
    v1 = routes_table(doc)["sets"][0]["routes"]
    assert v1["fixed_builds"]["ids"] == ["t-03", "t-04"] and v1["pocs"]["ids"] == ["t-04"]
    assert v1["pocs"]["worst"]["key"] == "P1:/tmp/poc"
    assert v1["contamination"] == {"checked": False, "count": None, "ids": [], "estimate": None, "worst": None}
