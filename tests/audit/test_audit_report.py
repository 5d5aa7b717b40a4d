"""Report model and output: schema, determinism, no temp paths, required fields, verdict rules,
and the table escaping control characters."""

from __future__ import annotations

import json
import shutil

import pytest
from audit_helpers import git

from overlap.audit import audit, render_table
from overlap.audit.model import CHECK_IDS, AuditReport, CheckResult, Finding, Target

FIXTURES = ["swb4", "swb5", "ctl-fresh", "reflog", "cruft", "stash", "pseudo", "worktree", "alt", "index", "graph",
            "replace", "remote", "nested", "setup-test", "smith", "reftable", "hostile", "t-validate", "t-index",
            "root", "img-validate.tar", "img-validate-oci.tar", "img-alt.tar", "img-hostile.tar"]


TWICE = {"swb4", "worktree", "t-validate", "img-validate.tar", "hostile"}


def _report(gitfix, name):
    if name == "smith":
        return audit(gitfix.path(name), base="HEAD", fix=[gitfix.path("smith-fix.patch")])
    if name == "root":
        return audit(gitfix.path(name), rootfs=True, **gitfix.R)
    return audit(gitfix.path(name), **gitfix.R)


@pytest.mark.parametrize("name", FIXTURES)
def test_json_is_deterministic_valid_and_has_no_temp_paths(gitfix, name):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads(files("overlap.audit").joinpath("schema.json").read_text())
    first = _report(gitfix, name).to_json()
    if name in TWICE:  # the cross-process test below covers more fixtures
        assert first == _report(gitfix, name).to_json()
    assert "overlap-audit-" not in first and "/scratch" not in first
    data = json.loads(first)
    jsonschema.validate(data, schema)
    t = data["targets"][0]
    assert [c["id"] for c in t["checks"]] == [cid for cid, _ in CHECK_IDS]
    keys = [f["key"] for f in t["findings"]]
    assert len(keys) == len(set(keys))
    for f in t["findings"]:
        assert f["key"] and f["class"] and f["severity"] and isinstance(f["evidence"], dict)
        assert f["reproduce"]["command"] and f["reproduce"]["where"] in ("container", "host")
    assert data["summary"] == {s: sum(f["severity"] == s for f in t["findings"])
                               for s in ("critical", "high", "medium", "low", "info")}


def test_findings_are_ordered_by_severity_then_route(gitfix):
    data = _report(gitfix, "swb4").to_dict()
    order = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
    routes = {"git": 0, "fixed-content": 1, "times": 2, "leftovers": 3}
    got = [(order[f["severity"]], routes[f["route"]]) for f in data["targets"][0]["findings"]]
    assert got == sorted(got)


def _finding(sev: str, check: str = "G6") -> Finding:
    return Finding(check, "x" + sev, sev, "content", "t", "w", {}, {"where": "container", "cwd": ".", "command": "c"})


def test_verdict_rules():
    def target(sevs, statuses=("ran",)):
        checks = [CheckResult(cid, statuses[i] if i < len(statuses) else "ran") for i, (cid, _) in enumerate(CHECK_IDS)]
        return Target("repo", "p", checks=checks, findings=[_finding(s) for s in sevs])

    assert target(["high"]).verdict == "leak"
    assert target(["high"], ("incomplete",)).verdict == "leak"  # a leak stays a leak
    assert target(["medium"], ("incomplete",)).verdict == "incomplete"  # never clean/suspect when incomplete
    assert target(["medium", "low"]).verdict == "suspect"
    assert target(["low", "info"]).verdict == "clean"
    assert target([], ("incomplete",)).verdict == "incomplete"
    r = AuditReport({}, {}, [target(["medium"])], fail_on="suspect")
    assert r.exit_code == 1
    r.fail_on = "leak"
    assert r.exit_code == 0
    assert AuditReport({}, {}, [target([], ("incomplete",))], fail_on=None).exit_code == 2
    assert AuditReport({}, {}, [target([]), target(["critical"])]).verdict == "leak"  # worst target decides


def test_table_escapes_control_characters(gitfix, tmp_path):
    repo = tmp_path / "esc"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    git("checkout", "-q", "-b", "evil", cwd=repo)
    (repo / "README.md").write_text("changed\n")
    git("commit", "-q", "-am", "\x1b[2J\x1b]0;pwned\x07 clear the screen", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    report = audit(str(repo), base="main")
    table = render_table(report, width=200)
    assert "\x1b" not in table and "\x07" not in table
    assert "\\x1b[2J" in table
    subjects = [i["subject"] for f in report.targets[0].findings if f.check == "G6" for i in f.evidence["items"]]
    assert subjects == ["\x1b[2J\x1b]0;pwned\x07 clear the screen"]  # JSON keeps the text (json escapes it)
    assert "\\u001b[2J" in report.to_json()


def test_table_layout(gitfix):
    table = render_table(_report(gitfix, "swb4"), width=160)
    lines = table.splitlines()
    assert lines[0].startswith("VERDICT: LEAK  (")
    assert lines[1] == "routes: git=leak  fixed-content=leak  times=clean  leftovers=clean  builds=clean"
    assert lines[2].split() == ["SEV", "CHECK", "WHERE", "EVIDENCE", "SEE", "IT"]
    assert any(ln.startswith("critical  G4") and "cat .git/ORIG_HEAD" in ln for ln in lines)
    assert "checks not run: none" in lines
    assert all(len(ln) <= 160 for ln in lines[2:])
    inc = render_table(_report(gitfix, "reftable"), width=160)
    assert "checks not run: G1 (git cannot read the repository" in inc


def test_json_is_identical_across_processes_and_hash_seeds(gitfix):
    """Byte-identical JSON from two processes with different hash seeds (set iteration never leaks)."""
    import os
    import subprocess
    import sys

    code = ("import sys\nfrom overlap.audit import audit\n"
            "L, base, fix = sys.argv[1:4]\n"
            "R = dict(base=base, fix=[L + '/fix.patch'], tests=[L + '/test.patch'], fix_commit=fix)\n"
            "for name in ('swb4', 'reflog', 'stash-drop', 'alt', 'img-alt.tar'):\n"
            "    r = audit(L + '/' + name, **R)\n"
            "    sys.stdout.write(r.to_json())\n"
            "r = audit(L + '/root', rootfs=True, base=base, fix=[L + '/fix.patch'], tests=[L + '/test.patch'])\n"
            "sys.stdout.write(r.to_json())\n")
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.append(subprocess.run([sys.executable, "-c", code, str(gitfix.L), gitfix.base, gitfix.fix], env=env,
                                   capture_output=True, text=True, check=True).stdout)
    assert outs[0] == outs[1]
    assert "overlap-audit-" not in outs[0]
