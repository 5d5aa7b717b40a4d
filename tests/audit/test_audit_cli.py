"""The ``overlap audit`` command (exit codes), run through the real ``overlap`` app of overlap/cli/
(which registers it with ``handles_errors``): user errors become one stderr line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from overlap.cli import app


def run(*args: str):
    return CliRunner().invoke(app, ["audit", *args])


def R(gitfix) -> list[str]:
    return ["--base", gitfix.base, "--fix", gitfix.path("fix.patch"), "--tests", gitfix.path("test.patch"),
            "--fix-commit", gitfix.fix]


def test_exit_codes(gitfix):
    assert run(gitfix.path("swb4"), *R(gitfix)).exit_code == 0
    assert run(gitfix.path("swb4"), *R(gitfix), "--fail-on", "leak").exit_code == 1
    assert run(gitfix.path("swb5"), *R(gitfix), "--fail-on", "suspect").exit_code == 0  # an absent ID only
    assert run(gitfix.path("remote"), *R(gitfix), "--network", "none", "--fail-on", "suspect").exit_code == 0
    assert run(gitfix.path("remote"), *R(gitfix), "--fail-on", "suspect").exit_code == 1
    assert run(gitfix.path("remote"), *R(gitfix), "--fail-on", "leak").exit_code == 0
    res = run(gitfix.path("reftable"), *R(gitfix), "--format", "json")
    assert res.exit_code == 2
    assert json.loads(res.stdout)["verdict"] == "incomplete"  # the full report is still printed
    assert "G1" in res.stderr and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, needle", [
    (["{L}/no-such-folder"], "no such file or folder"),
    (["{L}/swb5", "--fix", "{L}/no-such.patch"], "no-such.patch"),
    (["{L}/swb5", "--fix", "{L}/ids.env"], "not a unified diff"),
    (["{L}/swb5", "--base", "no-such-branch"], "--base no-such-branch"),
    (["{L}/swb5", "--base", "a"], "--base a"),
    (["{L}/swb5", "--network", "offline"], "--network"),
    (["{L}/swb5", "--format", "xml"], "--format"),
    (["{L}/swb5", "--fail-on", "bad"], "--fail-on"),
    (["{L}/swb5", "--limit", "bogus=1"], "unknown limit"),
    (["{L}/swb5", "--fix-commit", "xyz"], "--fix-commit"),
    (["{L}", "--base", "{BASE}"], "repositories"),
    (["{L}/fix.patch"], "not a folder or a tar"),
])
def test_user_errors_exit_2_with_one_line(gitfix, args, needle):
    res = run(*[a.format(L=gitfix.L, BASE=gitfix.base) for a in args])
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert "Traceback" not in res.stderr


def test_json_output_file_matches_stdout(gitfix, tmp_path):
    out = tmp_path / "report.json"
    res = run(gitfix.path("swb4"), *R(gitfix), "--format", "json", "--output", str(out))
    assert res.exit_code == 0
    assert out.read_text() == res.stdout
    assert json.loads(res.stdout)["verdict"] == "leak"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".overlap-audit-")]


def test_table_is_the_default(gitfix):
    res = run(gitfix.path("ctl-fresh"), "--base", "HEAD", "--fix", gitfix.path("fix.patch"))
    assert res.exit_code == 0
    assert res.stdout.startswith("VERDICT: CLEAN")


def test_help_documents_every_option():
    res = CliRunner().invoke(app, ["audit", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for opt in ("--base", "--fix", "--tests", "--test-id", "--fix-commit", "--instance", "--network", "--repo-path",
                "--image", "--platform", "--rootfs", "--format", "--output", "--fail-on", "--limit", "--git"):
        assert opt in res.stdout, opt
    assert "Example: overlap audit" in res.stdout


def test_importing_the_command_loads_no_audit_module():
    code = ("import sys\nfrom overlap.cli import main\nsys.argv = ['overlap', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print([m for m in sys.modules if m.startswith('overlap.audit')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "audit" in out  # the help lists the command
    assert out.strip().splitlines()[-1] == "[]"
    code2 = "import sys, overlap.audit; print(sorted(m for m in sys.modules if m.startswith('overlap.audit')))"
    out2 = subprocess.run([sys.executable, "-c", code2], capture_output=True, text=True, check=True).stdout
    assert out2.strip() == "['overlap.audit']"  # the package itself is import-light


def test_ambiguous_base_is_a_usage_error(tmp_path):
    """Two commits share the 4-digit prefix given as --base: exit 2 naming the ambiguity."""
    from audit_helpers import clean_env, git

    repo = tmp_path / "many"
    git("init", "-q", "-b", "main", str(repo), cwd=tmp_path)
    stream = []
    for i in range(1, 1501):
        head = f"commit refs/heads/main\nmark :{i}\ncommitter t <t@e> {1577872800 + i} +0000\n"
        stream.append(head + f"data 2\nc{i % 10}\n" + (f"from :{i - 1}\n" if i > 1 else "") + "\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input="".join(stream).encode(), check=True,
                   env=clean_env(tmp_path, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1"))
    commits = sorted(git("rev-list", "main", cwd=repo).split())
    prefix = next(a[:4] for a, b in zip(commits, commits[1:], strict=False) if a[:4] == b[:4])
    res = run(str(repo), "--base", prefix)
    assert res.exit_code == 2 and res.stdout == ""
    assert "ambiguous" in res.stderr and len(res.stderr.strip().splitlines()) == 1
