"""The hardened git runner: every call carries the hardening, forbidden subcommands never start,
and a hostile repository's hooks, fsmonitor, pager, filters, signature program and ext:: promisor run
nothing (``hostile``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from audit_helpers import snapshot

from overlap.audit import audit
from overlap.audit.git.cmd import HARDEN_CONFIG, HARDEN_ENV, ForbiddenGitCommand, GitError, GitRunner


@pytest.fixture
def runner(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return GitRunner(home, scratch=tmp_path / "scratch")


FORBIDDEN_CALLS = [
    ["for-each-ref"], ["show-ref"], ["rev-list", "--all"], ["rev-list", "--branches"], ["rev-list", "HEAD"],
    ["status"], ["checkout", "main"], ["reset", "--hard"], ["stash"], ["gc"], ["prune"], ["repack", "-a"],
    ["fsck", "--lost-found"], ["hash-object", "-w", "x"], ["update-index", "--refresh"], ["fetch", "origin"],
    ["clone", "x"], ["submodule", "update"], ["worktree", "list"], ["log", "-p"], ["show", "HEAD"],
    ["diff-tree", "-r", "abcdef1"], ["cat-file", "--textconv", "abcdef1"], ["cat-file", "-p", "HEAD"],
    ["ls-files", "--others"], ["config", "--list"], ["rev-parse", "HEAD"], ["merge-base", "a1b2c3d", "b2c3d4e"],
]


@pytest.mark.parametrize("args", FORBIDDEN_CALLS, ids=lambda a: " ".join(a))
def test_forbidden_calls_are_rejected_before_git_starts(runner, tmp_path, monkeypatch, args):
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    with pytest.raises(ForbiddenGitCommand):
        runner.run(args, git_dir=tmp_path)
    assert started == []


def test_apply_only_in_scratch_and_never_on_the_index(runner, tmp_path):
    with pytest.raises(ForbiddenGitCommand):
        runner.run(["apply", "x.patch"], cwd=tmp_path)  # not the scratch folder
    (tmp_path / "scratch").mkdir()
    for opt in ("--index", "--cached", "--3way", "--unsafe-paths"):
        with pytest.raises(ForbiddenGitCommand):
            runner.run(["apply", opt, "x.patch"], cwd=tmp_path / "scratch")
    with pytest.raises(ForbiddenGitCommand):
        runner.run(["cat-file", "--batch-check"])  # no --git-dir


def assert_hardened(argv: list[str], env: dict[str, str], home: str | None = None) -> None:
    assert argv[1] == "--no-pager"
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert set(HARDEN_CONFIG) <= set(pairs), argv
    sub = next(a for a in argv[1:] if not a.startswith("-") and a not in pairs)
    if sub not in ("version", "config", "apply"):
        assert any(a.startswith("--git-dir=") for a in argv), argv
    for k, v in HARDEN_ENV.items():
        assert env.get(k) == v, (k, argv)
    assert set(env) <= set(HARDEN_ENV) | {"PATH", "HOME", "XDG_CONFIG_HOME", "GIT_CEILING_DIRECTORIES",
                                          "GIT_INDEX_FILE"}
    assert env["HOME"] == env["XDG_CONFIG_HOME"]
    if "GIT_INDEX_FILE" in env:  # never the store's own index: a file in the private home that never exists
        assert env["GIT_INDEX_FILE"] == env["HOME"] + "/no-index" and not os.path.exists(env["GIT_INDEX_FILE"])
    if home is not None:
        assert env["HOME"] != home


def test_every_git_call_of_an_audit_is_hardened(gitfix, monkeypatch):
    """Record every process the audit starts (on fixtures that exercise all git paths)."""
    calls = []
    real = subprocess.Popen

    def spy(argv, *a, **kw):
        calls.append((list(argv), dict(kw.get("env") or {})))
        return real(argv, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", spy)
    monkeypatch.setenv("GIT_DIR", "/nonexistent")  # the user's GIT_* must not leak in
    for name in ("swb4", "worktree", "nested", "hostile", "index", "alt", "stash"):
        audit(gitfix.path(name), **gitfix.R)
    assert len(calls) > 50
    subs = set()
    for argv, env in calls:
        assert Path(argv[0]).name == "git", argv
        assert_hardened(argv, env, home=str(Path.home()))
        assert "GIT_DIR" not in env
        subs.add(next(a for a in argv[2:] if not a.startswith("-") and "=" not in a and a not in HARDEN_CONFIG))
    assert subs <= {"version", "config", "rev-parse", "cat-file", "rev-list", "merge-base", "ls-files",
                    "ls-tree", "diff-tree", "apply"}, subs
    assert "apply" in subs  # the fixed content was computed with a scratch git apply


def test_runner_timeout_and_failure_become_git_errors(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    with pytest.raises(GitError, match="failed"):
        GitRunner(home).run(["cat-file", "--batch-all-objects", "--batch-check"], git_dir=tmp_path / "nope")
    with pytest.raises(GitError, match="cannot run git"):
        GitRunner(home, binary=str(tmp_path / "no-git")).version()


def test_hostile_repo_runs_nothing_and_is_unchanged(gitfix):
    """The hostile fixture: hooks, fsmonitor, pager, diff.external, filters, gpg.program and an ext:: promisor."""
    before = snapshot(gitfix.L / "hostile")
    report = audit(gitfix.path("hostile"), **gitfix.R)
    assert not list(gitfix.L.glob("PWNED*"))
    assert snapshot(gitfix.L / "hostile") == before
    keys = {f.key: f.severity for f in report.targets[0].findings}
    assert keys["G1:refs/heads"] == "medium"  # an absent ID, fetchable through the configured promisor
    ghost = next(f for f in report.targets[0].findings if f.key == "G1:refs/heads")
    assert ghost.evidence["items"][0]["ref"] == "refs/heads/ghost"
    assert ghost.evidence["items"][0]["object_present"] is False
    assert keys["G10:remote.origin"] == "medium"


def test_hostile_markers_would_fire_with_plain_git(gitfix, tmp_path):
    """Control for the test above: the same repository does run commands under an unhardened git."""
    import shutil

    from audit_helpers import clean_env

    copy = tmp_path / "hostile"
    shutil.copytree(gitfix.L / "hostile", copy, symlinks=True)
    marker = gitfix.L / "PWNED.fsmonitor"
    try:
        subprocess.run(["git", "status"], cwd=copy, env=clean_env(tmp_path), capture_output=True)
        assert marker.exists()
    finally:
        for p in gitfix.L.glob("PWNED*"):
            p.unlink()


@pytest.mark.parametrize("name", ["swb4", "index", "stash", "worktree", "nested", "setup-test", "t-validate"])
def test_audit_leaves_the_input_unchanged(gitfix, name):
    """Input unchanged: every path, content hash and mtime is the same after an audit; the store gains no object."""
    before = snapshot(gitfix.L / name)
    audit(gitfix.path(name), **gitfix.R)
    assert snapshot(gitfix.L / name) == before
