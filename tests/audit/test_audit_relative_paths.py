"""Relative paths audit exactly as absolute ones (`overlap audit ./testbed` once skipped 16 checks because
git ran in a private folder with `testbed/.git/config` unresolved).

The report records the arguments as given (``inputs.path``, ``inputs.fix[].source``, ``inputs.tests[].source``)
and names what it audited by the resolved path, so the three reports below differ in those input fields only.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from audit_helpers import assert_valid_report, bounded, copy_fixture, run_cli

from overlap.audit import audit
from overlap.audit.git.cmd import ForbiddenGitCommand, check_call


def _without_inputs(report) -> tuple[str, dict]:
    """(the report's JSON without ``inputs``, ``inputs`` without the fields that record arguments as given)."""
    data = json.loads(report.to_json())
    inputs = data.pop("inputs")
    for src in inputs["fix"] + inputs["tests"]:
        src.pop("source")
    inputs.pop("path")
    return json.dumps(data, sort_keys=True), inputs


def _three_ways(tmp_path, monkeypatch, src, name: str, **kw):
    """The same input audited by absolute path, by a relative path from its parent, and as `.` from inside."""
    target = copy_fixture(src, tmp_path / "work" / name)
    absolute = bounded(lambda: audit(str(target), **kw))
    monkeypatch.chdir(target.parent)
    relative = bounded(lambda: audit(f"./{name}", **kw))
    plain = bounded(lambda: audit(name, **kw))
    out = [absolute, relative, plain]
    if target.is_dir():
        monkeypatch.chdir(target)
        out.append(bounded(lambda: audit(".", **kw)))
    return target, out


def _assert_same(reports, given) -> None:
    ref_body, ref_inputs = _without_inputs(reports[0])
    for r, g in zip(reports, given, strict=True):
        body, inputs = _without_inputs(r)
        assert body == ref_body  # byte-identical JSON apart from the arguments as given
        assert inputs == ref_inputs
        assert json.loads(r.to_json())["inputs"]["path"] == g
        assert_valid_report(r)


def _reference(gitfix, relative_to=None) -> dict:
    def p(name):
        return os.path.relpath(gitfix.L / name, relative_to) if relative_to else str(gitfix.L / name)

    return {"base": gitfix.base, "fix": [p("fix.patch")], "tests": [p("test.patch")], "fix_commit": gitfix.fix}


def test_repo_by_absolute_relative_and_dot_path(gitfix, tmp_path, monkeypatch):
    target, reports = _three_ways(tmp_path, monkeypatch, gitfix.L / "swb4", "swb4", **_reference(gitfix))
    _assert_same(reports, [str(target), "./swb4", "swb4", "."])
    r = reports[-1]
    assert r.verdict == "leak" and r.exit_code == 0 and r.targets[0].complete
    assert not [c for t in r.targets for c in t.incomplete_checks()]
    assert r.targets[0].path == str(target)  # what was audited, resolved
    assert "F1:src/calc.py" in {f.key for f in r.targets[0].findings}


def test_relative_fix_and_tests_files(gitfix, tmp_path, monkeypatch):
    target = copy_fixture(gitfix.L / "swb4", tmp_path / "swb4")
    absolute = audit(str(target), **_reference(gitfix))
    monkeypatch.chdir(target)
    relative = bounded(lambda: audit(".", **_reference(gitfix, relative_to=target)))
    assert _without_inputs(absolute) == _without_inputs(relative)
    assert relative.to_dict()["inputs"]["fix"][0]["source"] == os.path.relpath(gitfix.L / "fix.patch", target)


def test_rootfs_by_relative_path(gitfix, tmp_path, monkeypatch):
    target, reports = _three_ways(tmp_path, monkeypatch, gitfix.L / "root", "root", rootfs=True,
                                  repo_path="/testbed", **_reference(gitfix))
    _assert_same(reports, [str(target), "./root", "root", "."])
    assert reports[0].verdict == "leak" and not reports[0].targets[0].incomplete_checks()


def test_image_by_relative_path(gitfix, tmp_path, monkeypatch):
    target, reports = _three_ways(tmp_path, monkeypatch, gitfix.L / "img-validate.tar", "img.tar",
                                  **_reference(gitfix))
    _assert_same(reports, [str(target), "./img.tar", "img.tar"])
    assert reports[0].verdict == "leak" and not reports[0].targets[0].incomplete_checks()


def test_folder_of_repositories_by_dot(gitfix, tmp_path, monkeypatch):
    many = tmp_path / "many"
    for name in ("swb5", "ctl-swb5"):
        copy_fixture(gitfix.L / name, many / name)
    absolute = audit(str(many))
    monkeypatch.chdir(many)
    dot = bounded(lambda: audit("."))
    assert _without_inputs(absolute) == _without_inputs(dot)
    assert [t.path for t in dot.targets] == [str(many / "ctl-swb5"), str(many / "swb5")]
    assert [t.verdict for t in dot.targets] == ["clean", "clean"]


def test_cli_with_every_path_relative(gitfix, tmp_path):
    """README example as a user types it: PATH, --fix, --tests, --output and --git all relative."""
    work = tmp_path / "work"
    copy_fixture(gitfix.L / "swb4", work / "testbed")
    for name in ("fix.patch", "test.patch"):
        shutil.copy(gitfix.L / name, work / name)
    (work / "bin").mkdir()
    (work / "bin" / "git").symlink_to(shutil.which("git"))
    res = run_cli("./testbed", "--base", gitfix.base, "--fix", "fix.patch", "--tests", "./test.patch",
                  "--git", "bin/git", "--format", "json", "--output", "out/../audit.json", cwd=work)
    assert res.code == 0, res.stderr
    assert res.seconds < 20
    assert "unable to read config" not in res.stdout and res.stderr == ""
    data = json.loads(res.stdout)
    assert data["verdict"] == "leak" and data["complete"] and data["inputs"]["path"] == "./testbed"
    assert (work / "audit.json").read_text() == res.stdout
    absolute = run_cli(str(work / "testbed"), "--base", gitfix.base, "--fix", str(work / "fix.patch"), "--tests",
                       str(work / "test.patch"), "--format", "json", cwd=tmp_path)
    assert _strip_args(absolute.stdout) == _strip_args(res.stdout)


def _strip_args(text: str) -> str:
    data = json.loads(text)
    data["inputs"]["path"] = None
    for src in data["inputs"]["fix"] + data["inputs"]["tests"]:
        src["source"] = None
    data["tool"]["git"] = None  # the same binary, reached through a symlink
    return json.dumps(data, sort_keys=True)


@pytest.mark.parametrize("args, git_dir", [
    (["rev-parse", "--verify", "--end-of-options", "HEAD"], "testbed/.git"),
    (["config", "--no-includes", "--file", "testbed/.git/config", "--list", "-z"], None),
])
def test_runner_refuses_relative_git_paths(args, git_dir):
    """The root cause can no longer come back silently: git runs in a private folder, so a relative path given
    to it is refused before anything starts."""
    with pytest.raises(ForbiddenGitCommand, match="relative"):
        check_call(args, git_dir=git_dir, cwd=None, scratch=None)
