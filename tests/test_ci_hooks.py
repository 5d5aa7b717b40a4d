"""The pre-commit hooks (.pre-commit-hooks.yaml) and the GitHub Action (action.yml, scripts/ci_action.py), run
offline.

The hooks run through pre-commit itself: a user's repository whose .pre-commit-config.yaml names a local clone
of this repository's hooks, `pre-commit run`. The hooks declare `language: python`, for which pre-commit
builds a virtualenv and pip-installs overlap with its dependencies from the network; the test config sets
`language: system` on each hook instead (a config may), so pre-commit runs the exact `entry` the manifest
declares, with the config's `args`, against the `overlap` of this checkout on PATH. The Action's script runs
with the environment the action's step gives it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from ci_checks import SCHEMAS, assert_valid_sarif

import overlap

ROOT = Path(__file__).resolve().parents[1]
CHECKOUT = Path(overlap.__file__).resolve().parents[1]
FIX = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
       "+    return a + b  # the sum, as the tests ask\n")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_DATE": "2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2024-01-02T03:04:05Z"}


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True,
                          text=True).stdout.strip()


def _repo(path: Path, files: dict[str, str]) -> str:
    path.mkdir(parents=True)
    _git("init", "-q", "-b", "main", cwd=path)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    _git("add", "-A", cwd=path)
    _git("commit", "-qm", "base", cwd=path)
    return _git("rev-parse", "HEAD", cwd=path)


@pytest.fixture()
def env(tmp_path):
    """PATH with this checkout's `overlap` first; pre-commit's cache in the test's folder; no network."""
    if shutil.which("git") is None:
        pytest.fail("git is needed by pre-commit")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "overlap"
    tool.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(CHECKOUT)!r})\n"
                    "from overlap.cli import main\nsys.argv[0] = 'overlap'\nmain()\n")
    tool.chmod(0o755)
    return {**os.environ, **GIT_ENV, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PYTHONPATH": str(CHECKOUT)}


@pytest.fixture()
def hooks_repo(tmp_path):
    """A local git repository holding this repository's .pre-commit-hooks.yaml, as pre-commit clones it."""
    return tmp_path / "hooks", _repo(tmp_path / "hooks", {".pre-commit-hooks.yaml":
                                                          (ROOT / ".pre-commit-hooks.yaml").read_text()})


def test_manifest_is_valid_for_pre_commit():
    from pre_commit.clientlib import load_manifest

    hooks = {h["id"]: h for h in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    assert set(hooks) == {"overlap-compare", "overlap-audit"}
    for hook, command in (("overlap-compare", "overlap compare "), ("overlap-audit", "overlap audit ")):
        assert hooks[hook]["entry"].startswith(command) and "--fail-on" in hooks[hook]["entry"]
    assert all(not h["pass_filenames"] for h in hooks.values())


def _pre_commit(user: Path, hooks_repo, hook: str, args: list[str], env: dict) -> subprocess.CompletedProcess:
    path, rev = hooks_repo
    config = {"repos": [{"repo": str(path), "rev": rev,
                         "hooks": [{"id": hook, "language": "system", "args": args}]}]}
    (user / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git("add", "-A", cwd=user)
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook, "--all-files"], cwd=user, env=env,
                          capture_output=True, text=True, timeout=300)


def test_compare_hook_fails_on_a_contaminated_benchmark(tmp_path, hooks_repo, env):
    user = tmp_path / "user"
    _repo(user, {"data/train.jsonl": '{"id": "CVE-2023-50246"}\n{"id": "CVE-2022-20001"}\n',
                 "data/bench.jsonl": '{"id": "CVE-2023-50246"}\n{"id": "CVE-2021-30001"}\n'})
    args = ["data/train.jsonl", "data/bench.jsonl", "--id-column", "id", "--pool", "none"]
    res = _pre_commit(user, hooks_repo, "overlap-compare", args, env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Failed" in res.stdout and "bench.jsonl: 1 of 2 bench items matched" in res.stdout
    assert not (user / "reports").exists()  # the hook writes no report into the repository
    (user / "data/train.jsonl").write_text('{"id": "CVE-2022-20001"}\n')
    res = _pre_commit(user, hooks_repo, "overlap-compare", args, env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Passed" in res.stdout


def test_audit_hook_fails_on_a_leaking_task_folder(tmp_path, hooks_repo, env):
    task = tmp_path / "task"
    base = _repo(task, {"calc.py": "def add(a, b):\n    return a - b\n"})
    fix = tmp_path / "fix.patch"
    fix.write_text(FIX)
    user = tmp_path / "user"
    _repo(user, {"README.md": "tasks\n"})
    args = [str(task), "--base", base, "--fix", str(fix)]
    res = _pre_commit(user, hooks_repo, "overlap-audit", args, env)
    assert res.returncode == 0, res.stdout + res.stderr
    (task / "answer.patch").write_text(FIX)  # the reference fix left in the environment
    res = _pre_commit(user, hooks_repo, "overlap-audit", args, env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "VERDICT: LEAK" in res.stdout and "L1" in res.stdout


# ------------------------------------------------------------------------------------------------ action
def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_metadata_is_valid():
    schema = json.loads((SCHEMAS / "github-action.json").read_text())
    action = _action()
    jsonschema.Draft7Validator(schema).validate(action)
    assert action["runs"]["using"] == "composite"
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    assert step["run"] == 'python "$GITHUB_ACTION_PATH/scripts/ci_action.py"'
    for value in step["env"].values():  # every input the step passes exists
        assert value.startswith("${{ inputs.") and value[len("${{ inputs."):-len(" }}")] in action["inputs"]
    upload = next(s for s in action["runs"]["steps"] if "upload-sarif" in str(s.get("uses")))
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.sarif-file }}"


def _run_action_step(tmp_path: Path, env: dict, inputs: dict[str, str], cwd: Path) -> tuple[int, dict[str, str]]:
    """The check step as the action runs it: its `env` mapping filled from `inputs` (the action's defaults
    for those not given), GITHUB_OUTPUT a file."""
    action = _action()
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()} | inputs
    step_env = {key: values[value[len("${{ inputs."):-len(" }}")]] for key, value in step["env"].items()}
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "ci_action.py")], cwd=cwd,
                         env={**env, **step_env, "GITHUB_OUTPUT": str(outputs), "GITHUB_ACTION_PATH": str(ROOT)},
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.returncode, dict(line.split("=", 1) for line in outputs.read_text().splitlines())


def test_action_step_audits_and_writes_sarif(tmp_path, env):
    task = tmp_path / "repo" / "tasks" / "calc"
    base = _repo(task, {"calc.py": "def add(a, b):\n    return a - b\n"})
    (task / "answer.patch").write_text(FIX)
    fix = tmp_path / "repo" / "tasks" / "calc.patch"
    fix.write_text(FIX)
    _, outputs = _run_action_step(tmp_path, env, {"args": f"tasks/calc --base {base} --fix tasks/calc.patch",
                                                  "fail-on": "leak"}, cwd=tmp_path / "repo")
    assert outputs == {"exit-code": "1", "sarif-file": "overlap.sarif"}
    log = json.loads((tmp_path / "repo" / "overlap.sarif").read_text())
    assert_valid_sarif(log)
    results = log["runs"][0]["results"]
    leftover = [r for r in results if r["ruleId"] == "L1"]
    assert leftover and leftover[0]["level"] == "error"
    assert leftover[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tasks/calc/answer.patch"


def test_action_step_compare_and_usage_error(tmp_path, env):
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "data" / "train.jsonl").write_text('{"id": "CVE-2023-50246"}\n')
    (repo / "data" / "bench.jsonl").write_text('{"id": "CVE-2023-50246"}\n{"id": "CVE-2021-30001"}\n')
    _, outputs = _run_action_step(tmp_path, env, {
        "command": "compare", "args": "data/train.jsonl data/bench.jsonl --id-column id --pool none --no-report",
        "fail-on": "50%", "sarif-file": "out/compare.sarif"}, cwd=repo)
    assert outputs == {"exit-code": "1", "sarif-file": "out/compare.sarif"}
    log = json.loads((repo / "out" / "compare.sarif").read_text())
    assert_valid_sarif(log)
    assert [r["properties"]["bench_id"] for r in log["runs"][0]["results"]] == ["CVE-2023-50246"]
    # a usage error: no log, the code handed on
    _, outputs = _run_action_step(tmp_path, env, {"args": "no-such-folder", "sarif-file": "bad.sarif"}, cwd=repo)
    assert outputs == {"exit-code": "2", "sarif-file": ""} and not (repo / "bad.sarif").exists()
