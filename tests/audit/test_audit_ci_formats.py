"""`overlap audit --format sarif|junit`: the SARIF log validates against the SARIF 2.1.0 JSON schema and keeps
GitHub code scanning's documented requirements; the JUnit report validates against Jenkins' junit-10.xsd.
The expectations are written from the documented rules (severity → level, one result per finding, one test
case per target), checked against the same run's JSON report."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from audit_helpers import copy_fixture, run_cli
from ci_checks import assert_valid_junit, assert_valid_sarif
from typer.testing import CliRunner

import overlap
from overlap.audit.model import CHECK_IDS
from overlap.cli import app

# docs/audit.md: critical and high make a leak, medium a suspect; SARIF has error, warning, note
LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}


def reference(gitfix) -> list[str]:
    return ["--base", gitfix.base, "--fix", gitfix.path("fix.patch"), "--tests", gitfix.path("test.patch"),
            "--fix-commit", gitfix.fix]


def audit(*args: str):
    return CliRunner().invoke(app, ["audit", *args])


def test_sarif_validates_and_maps_each_finding(gitfix):
    args = [gitfix.path("swb4"), *reference(gitfix)]
    sarif = audit(*args, "--format", "sarif")
    report = json.loads(audit(*args, "--format", "json").stdout)
    assert sarif.exit_code == 0, sarif.output
    log = json.loads(sarif.stdout)
    assert_valid_sarif(log)
    run = log["runs"][0]
    # every check is a rule, with its description
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [cid for cid, _ in CHECK_IDS]
    findings = [f for t in report["targets"] for f in t["findings"]]
    assert findings and len(run["results"]) == len(findings)
    for finding, result in zip(findings, run["results"], strict=True):
        assert result["ruleId"] == finding["check"]
        assert result["level"] == LEVEL[finding["severity"]]
        assert finding["title"] in result["message"]["text"]
        assert f"`{finding['reproduce']['command']}`" in result["message"]["text"]  # the "see it" command
    assert {r["level"] for r in run["results"]} >= {"error", "note"}
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_locations_are_relative_and_fingerprints_stable_across_checkouts(gitfix, tmp_path, monkeypatch):
    """Two checkouts in different folders, each audited from its own root as CI does: the same URIs and
    fingerprints, so a re-run matches the alerts already open."""
    logs = []
    for name in ("first", "second"):
        root = tmp_path / name
        copy_fixture(Path(gitfix.path("swb4")), root / "testbed")
        monkeypatch.chdir(root)
        res = audit("testbed", *reference(gitfix), "--format", "sarif")
        assert res.exit_code == 0, res.output
        logs.append(json.loads(res.stdout))
    results = [log["runs"][0]["results"] for log in logs]
    assert [r["partialFingerprints"] for r in results[0]] == [r["partialFingerprints"] for r in results[1]]
    uris = [[r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in rs] for rs in results]
    assert uris[0] == uris[1]
    for uri in uris[0]:
        assert not uri.startswith("/") and "://" not in uri and uri.startswith("testbed")
    # a finding whose place is a file of the repository points at that file
    report = json.loads(audit("testbed", *reference(gitfix), "--format", "json").stdout)
    where = {f["key"]: f["where"] for f in report["targets"][0]["findings"]}
    by_key = {r["properties"]["key"]: r for r in results[1]}
    assert by_key["G4:ORIG_HEAD"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "testbed/" + where["G4:ORIG_HEAD"]
    assert len({json.dumps(r["partialFingerprints"]) for r in results[0]}) == len(results[0])  # one per finding


def test_sarif_clean_target_has_no_results(gitfix):
    res = audit(gitfix.path("ctl-fresh"), "--base", "HEAD", "--fix", gitfix.path("fix.patch"), "--format", "sarif")
    assert res.exit_code == 0, res.output
    log = json.loads(res.stdout)
    assert_valid_sarif(log)
    assert log["runs"][0]["results"] == []


def test_sarif_incomplete_audit_names_the_checks_that_did_not_run(gitfix):
    res = audit(gitfix.path("reftable"), *reference(gitfix), "--format", "sarif")
    assert res.exit_code == 2  # incomplete, as for every format
    log = json.loads(res.stdout)
    assert_valid_sarif(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "G1" in {n["associatedRule"]["id"] for n in invocation["toolExecutionNotifications"]}


def test_sarif_through_a_real_process_with_fail_on(gitfix, tmp_path, monkeypatch):
    # the child imports this checkout's overlap, whatever is installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(Path(overlap.__file__).parents[1]),
                                                      os.environ.get("PYTHONPATH", "")]))
    res = run_cli(gitfix.path("swb4"), *reference(gitfix), "--format", "sarif", "--fail-on", "leak", cwd=tmp_path,
                  timeout=120)
    assert res.code == 1, res.stderr  # --fail-on keeps its exit code
    assert_valid_sarif(json.loads(res.stdout))


@pytest.mark.parametrize("target, fail_on, outcome", [
    ("swb4", None, "failure"),          # a leak fails without --fail-on
    ("remote", None, "passed"),         # a suspect passes ...
    ("remote", "suspect", "failure"),   # ... unless --fail-on suspect
    ("reftable", None, "error"),        # checks that could not run
])
def test_junit_one_case_per_target(gitfix, target, fail_on, outcome):
    args = [gitfix.path(target), *reference(gitfix), *(["--fail-on", fail_on] if fail_on else [])]
    res = audit(*args, "--format", "junit")
    report = json.loads(audit(*args, "--format", "json").stdout)
    assert_valid_junit(res.stdout)
    root = ET.fromstring(res.stdout)
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [t["path"] for t in report["targets"]]
    case = cases[0]
    found = "failure" if case.find("failure") is not None else "error" if case.find("error") is not None else "passed"
    assert found == outcome
    suite = root.find("testsuite")
    assert int(suite.get("failures")) == (outcome == "failure") and int(suite.get("errors")) == (outcome == "error")
    body = "".join(case.itertext())
    for finding in report["targets"][0]["findings"]:
        assert finding["title"] in body


def test_formats_refused_for_image_sets(gitfix, tmp_path):
    targets = tmp_path / "targets.csv"
    targets.write_text(f"path\n{gitfix.path('swb4')}\n")
    res = audit("--targets", str(targets), "--format", "sarif")
    assert res.exit_code == 2 and res.stdout == ""
    assert "--format sarif" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_every_check_has_a_rule_description_and_a_row_in_the_docs():
    import re

    from overlap.audit.catalog import CHECK_DESCRIPTIONS

    documented = re.findall(r"^\| ([GFTLBP][0-9]{1,2}) \|", (Path(__file__).resolve().parents[2] / "docs" / "audit.md")
                            .read_text(), flags=re.MULTILINE)
    ids = [cid for cid, _ in CHECK_IDS]
    assert list(CHECK_DESCRIPTIONS) == ids == documented
    assert all(text.strip() for text in CHECK_DESCRIPTIONS.values())
